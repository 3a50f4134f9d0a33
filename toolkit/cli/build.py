"""``tk build``, ``tk build ls/show/rm/gc`` and ``tk env ID``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.options import COUNT, json_option, recipe_options
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.build.record import BuildRecord, RuntimeCheck
    from toolkit.build.store import Usage


@click.group("build", invoke_without_command=True)
@click.option("--source", "-C", "source", default=".", show_default=True, metavar="DIR",
              help="The TVM source tree (or fork) to build.")
@recipe_options
@click.option("--build-dir", metavar="DIR", help="Build directory (default: <source>/build-<plan>).")
@click.option("--jobs", "-j", type=COUNT, help="Parallel compile jobs.")
@click.option("--dry-run", is_flag=True, help="Print the resolved plan; build nothing.")
@click.option("--force", is_flag=True, help="Build even when the store has this build.")
@click.option("--no-check", is_flag=True, help="Skip the post-build check in the build's env.")
@json_option
@click.pass_context
@pass_terminal
def build_group(term: Terminal, ctx: click.Context, source: str, recipe: dict[str, Any],
                build_dir: str | None,
                jobs: int | None, dry_run: bool, force: bool,
                no_check: bool, as_json: bool) -> int | None:
    """Build TVM from recipes: base + --llvm/--cuda/--debug/--ccache/--runtime-only + yours.

    \b
    tk build --llvm --dry-run        show the plan: config.cmake, CMake args, env, Dockerfile
    tk build --cuda --debug          build (served from the store when nothing changed)
    tk build ls / tk build show ID   stored builds (sizes) and their records
    tk build rm ID / tk build gc     free the store
    eval "$(tk env ID)"              use a stored build in this shell
    """
    if ctx.invoked_subcommand:
        return None
    from toolkit.build import driver as builder
    from toolkit.build.recipes import Request

    req = Request(**{**recipe, "recipe_files": [Path(p) for p in recipe["recipe_files"]]})
    plan, tree = builder.plan(req, source)
    if dry_run:
        term.result(builder.dry_run(plan, tree, build_dir), render_dry_run)
        return 0
    outcome = builder.build(plan, tree, build_dir=build_dir, jobs=jobs, events=term.handle,
                            force=force, check=not no_check)
    term.result({**outcome.record.to_json(), "from_store": outcome.from_store},
                lambda _: render_outcome(outcome.record, outcome.from_store))
    return 0


def render_dry_run(info: dict[str, Any]) -> str:
    plan, src = info["plan"], info["source"]
    state = "dirty" if src["dirty"] else "clean"
    commit = (src["commit"] or "no git")[:12]
    lines = [
        f"plan {info['plan_hash']}  ({' + '.join(plan['recipes'])}, backend {plan['backend']})",
        f"source {src['dir']}  (layout {src['layout']}, {commit}, {state})",
        f"build dir {info['build_dir']}",
        f"build id {info['build_id']}  ({'in the store' if info['stored'] else 'not built yet'})",
        "",
        "config.cmake:",
        *("  " + ln for ln in plan["config_cmake"].splitlines()),
        "",
        "cmake:",
        "  cmake -S " + src["dir"] + " -B " + info["build_dir"] + " "
        + shlex.join(plan["cmake_args"]),
        "  cmake --build " + info["build_dir"]
        + (" --target " + " ".join(plan["targets"]) if plan["targets"] else ""),
        "",
        "env:",
        *([f"  {k}={v}" for k, v in plan["env"].items()] or ["  (inherited, nothing added)"]),
    ]
    if plan["notes"]:
        lines += ["", "notes:", *(f"  - {n}" for n in plan["notes"])]
    lines += ["", "pre-flight:"]
    if not info["preflight"]:
        lines.append("  (nothing to check here: the container image brings the tools)")
    for c in info["preflight"]:
        fix = f" — fix: {c['fix']}" if (not c["ok"] or c["warn"]) and c["fix"] else ""
        status = "FAIL" if not c["ok"] else "WARN" if c["warn"] else "ok  "
        lines.append(f"  {status} {c['name']}: {c['detail']}{fix}")
    if info.get("python"):
        lines += ["", "python:", f"  {info['python']} (kept with the build; tk env puts it on "
                  "PYTHONPATH)"]
    if info["dockerfile"]:
        lines += ["", "Dockerfile:", *("  " + ln for ln in info["dockerfile"].splitlines())]
    else:
        lines += ["", "container spec (for --backend docker):",
                  *("  " + ln for ln in json.dumps(plan["container"], indent=2).splitlines())]
    return "\n".join(lines)


def render_outcome(r: BuildRecord, from_store: bool) -> str:
    t = r.timings
    if from_store:
        head = (f"build {r.id} served from the store (built {r.created}; nothing "
                f"build-relevant changed)")
    else:
        head = (f"built {r.id} in {t.get('total', 0):.1f} s (configure "
                f"{t.get('configure', 0):.1f} s, compile {t.get('compile', 0):.1f} s)")
    lines = [head, f"  build dir  {r.build_dir}",
             f"  libraries  {' '.join(a.name for a in r.artifacts)}  ->  {r.lib_dir}"]
    if r.python:
        lines.append(f"  python     {r.python.name} {r.python.version} (from the tree) -> "
                     f"{r.python.site}")
    lines.append(f"  record     {r.lib_dir.parent / 'manifest.json'}")
    for mm in r.mismatches:
        lines.append(f"  warning    {mm['option']}: asked {mm['requested']}, CMake used {mm['used']}")
    for c in r.preflight:
        if c.get("warn"):
            lines.append(f"  warning    {c['name']}: {c['detail']}")
    chk = r.check
    if chk:
        what = "its libraries load" if chk.load_only else f"import tvm from {chk.tvm_file}"
        lines.append(f"  check      {'ok' if chk.ok else 'FAILED'}: {what}")
        for rt in chk.runtimes:
            lines.append(f"  runtime    {rt.kind}: {runtime_summary(rt)}")
    lines.append(f"  use it     eval \"$(tk env {r.id})\"")
    return "\n".join(lines)


def runtime_summary(rt: RuntimeCheck) -> str:
    where = Path(rt.library).name if rt.library else "in libtvm_runtime"
    if not rt.loads:
        return f"{where} does not load{': ' + rt.detail if rt.detail else ''}"
    api = {True: "registers", False: "does not register",
           None: "cannot tell whether it registers"}[rt.device_api]
    kernel = {True: "; a tiny kernel ran", False: f"; the tiny kernel failed: {rt.detail}",
              None: "; no device here to run a kernel"}[rt.kernel]
    return f"{where} loads, {api} device_api.{rt.kind}{kernel}"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


@build_group.command("ls")
@json_option
@pass_terminal
def ls_cmd(term: Terminal, as_json: bool) -> None:
    """List stored builds, newest first, with their sizes (files shared by content between
    builds count once in the store's total)."""
    from toolkit.build import store

    builds = [summary(r, store.usage(store.entry_dir(r.id))) for r in store.all_builds()]
    total = store.store_usage()
    if as_json:
        term.json({"builds": builds, "store": str(store.cache_root()), "total_bytes": total})
        return
    if not builds:
        term.echo(f"no stored builds in {store.builds_root()}")
        return
    term.table([[s["id"], s["created"], (s["commit"] or "-")[:12] + ("+" if s["dirty"] else ""),
                 size(s["bytes"]), size(s["unique_bytes"]), s["recipes"], s["source"]]
                for s in builds],
               header=["ID", "CREATED", "COMMIT", "SIZE", "OWN", "RECIPES", "SOURCE"])
    term.echo(f"store {store.cache_root()}: {size(total)} on disk for {len(builds)} builds "
              "(OWN: what tk build rm ID frees)")


def summary(r: BuildRecord, use: Usage) -> dict[str, Any]:
    commit = r.source.commit or (f"tree:{r.source.content_hash}" if r.source.content_hash
                                 else None)
    return {"id": r.id, "created": r.created, "commit": commit, "dirty": r.source.dirty,
            "recipes": " + ".join(r.recipes), "source": r.source.dir, "backend": r.backend,
            "ok": r.check.ok if r.check else None, "bytes": use.bytes,
            "unique_bytes": use.unique}


@build_group.command("show")
@click.argument("build_id", metavar="ID")
@json_option
@pass_terminal
def show_cmd(term: Terminal, build_id: str, as_json: bool) -> None:
    """Show a stored build's record (what was really built)."""
    from toolkit.build import store

    record = store.find(build_id)
    term.result(record.to_json(), lambda _: render_record(record))


def render_record(r: BuildRecord) -> str:
    src = r.source
    lines = [
        f"build {r.id}  created {r.created}  backend {r.backend}"
        + (f"  image {r.image_id}" if r.image_id else ""),
        f"plan {r.plan_hash}  ({' + '.join(r.recipes)})",
        f"source {src.dir}  layout {src.layout}  "
        + (f"commit {src.commit}" if src.commit else f"no git, content {src.content_hash}")
        + (f"  dirty {src.dirty_hash}" if src.dirty else ""),
    ]
    for sub in src.submodules:
        at = sub.checked_out or (f"content {sub.content}" if sub.content else "-")
        lines.append(f"  submodule {sub.path} {at} ({sub.state}"
                     + (", dirty" if sub.dirty else "") + ")")
    lines.append("toolchain:")
    lines += [f"  {k}: {v}" for k, v in r.toolchain.items()]
    lines.append("CMake used:")
    lines += [f"  {k} = {v}" for k, v in r.cmake_values.items()]
    lines.append("artifacts:")
    lines += [f"  {a.name}  -> {a.link}" if a.link else
              f"  {a.name}  {a.size} B  sha256 {a.sha256}" for a in r.artifacts]
    if r.python:
        lines.append(f"python: {r.python.name} {r.python.version} ({r.python.python}) from "
                     f"{r.python.source}; wheel {r.python.wheel}")
    lines.append("timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in r.timings.items()))
    chk = r.check
    if chk:
        lines.append(f"check: {'ok' if chk.ok else 'FAILED: ' + '; '.join(chk.problems)}")
        lines += [f"  {rt.kind}: {runtime_summary(rt)}" for rt in chk.runtimes]
    lines.append(f"log: {r.log}")
    return "\n".join(lines)


@build_group.command("rm")
@click.argument("build_ids", metavar="ID...", nargs=-1, required=True)
@pass_terminal
def rm_cmd(term: Terminal, build_ids: tuple[str, ...]) -> None:
    """Remove stored builds (and the stored files no other build shares)."""
    from toolkit.build import store

    for build_id in build_ids:
        record = store.find(build_id)
        term.echo(f"removed {record.id} ({size(store.remove(record))} freed)")


@build_group.command("gc")
@pass_terminal
def gc_cmd(term: Terminal) -> None:
    """Remove incomplete entries and stored files no build uses any more."""
    from toolkit.build import store

    done = store.gc()
    term.echo(f"removed {done['entries']} incomplete entries and {done['objects']} unused "
              f"files ({size(done['bytes'])}); store now {size(store.store_usage())}")


@click.command("env")
@click.argument("build_id", metavar="ID")
@click.option("--source", "-C", metavar="DIR",
              help="Use this tree's Python package instead of the one the build came from.")
@json_option
@pass_terminal
def env_cmd(term: Terminal, build_id: str, source: str | None, as_json: bool) -> None:
    """Print shell exports that put a stored build in use: eval "$(tk env ID)"."""
    from toolkit.build import store

    term.result(store.env_of(store.find(build_id), source), store.shell_exports)
