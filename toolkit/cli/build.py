"""``tk build``, ``tk build ls``, ``tk build show ID`` and ``tk env ID``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click

from toolkit.cli.options import COUNT, json_option, recipe_options
from toolkit.cli.terminal import Terminal, pass_terminal


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
    tk build ls / tk build show ID   stored builds and their manifests
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
    term.result({**outcome.manifest, "from_store": outcome.from_store},
                lambda m: render_outcome(m, outcome.from_store))
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
        fix = f" — fix: {c['fix']}" if not c["ok"] and c["fix"] else ""
        lines.append(f"  {'ok  ' if c['ok'] else 'FAIL'} {c['name']}: {c['detail']}{fix}")
    if info["dockerfile"]:
        lines += ["", "Dockerfile:", *("  " + ln for ln in info["dockerfile"].splitlines())]
    else:
        lines += ["", "container spec (for --backend docker):",
                  *("  " + ln for ln in json.dumps(plan["container"], indent=2).splitlines())]
    return "\n".join(lines)


def render_outcome(m: dict[str, Any], from_store: bool) -> str:
    t = m["timings"]
    if from_store:
        head = (f"build {m['id']} served from the store (built {m['created']}; nothing "
                f"build-relevant changed)")
    else:
        head = (f"built {m['id']} in {t.get('total', 0):.1f} s (configure "
                f"{t.get('configure', 0):.1f} s, compile {t.get('compile', 0):.1f} s)")
    lines = [head, f"  build dir  {m['build_dir']}",
             f"  libraries  {' '.join(a['name'] for a in m['artifacts'])}"
             f"  ->  {Path(m['artifacts'][0]['path']).parent}",
             f"  manifest   {Path(m['log']).parent / 'manifest.json'}"]
    for mm in m.get("mismatches", []):
        lines.append(f"  warning    {mm['option']}: asked {mm['requested']}, CMake used {mm['used']}")
    chk = m.get("check")
    if chk:
        what = ("its libraries load" if chk.get("load_only")
                else f"import tvm from {chk.get('tvm_file')}")
        lines.append(f"  check      {'ok' if chk['ok'] else 'FAILED'}: {what}")
    lines.append(f"  use it     eval \"$(tk env {m['id']})\"")
    return "\n".join(lines)


@build_group.command("ls")
@json_option
@pass_terminal
def ls_cmd(term: Terminal, as_json: bool) -> None:
    """List stored builds, newest first."""
    from toolkit.build import store

    builds = [summary(m) for m in store.all_builds()]
    if as_json:
        term.json(builds)
        return
    if not builds:
        term.echo(f"no stored builds in {store.builds_root()}")
        return
    term.table([[s["id"], s["created"], (s["commit"] or "-")[:12] + ("+" if s["dirty"] else ""),
                 s["recipes"], s["source"]] for s in builds],
               header=["ID", "CREATED", "COMMIT", "RECIPES", "SOURCE"])


def summary(m: dict[str, Any]) -> dict[str, Any]:
    return {"id": m["id"], "created": m["created"], "commit": m["source"]["commit"],
            "dirty": m["source"]["dirty"], "recipes": " + ".join(m["plan"]["recipes"]),
            "source": m["source"]["dir"], "backend": m["backend"],
            "ok": m.get("check", {}).get("ok")}


@build_group.command("show")
@click.argument("build_id", metavar="ID")
@json_option
@pass_terminal
def show_cmd(term: Terminal, build_id: str, as_json: bool) -> None:
    """Show a stored build's manifest (what was really built)."""
    from toolkit.build import store

    term.result(store.find(build_id), render_manifest)


def render_manifest(m: dict[str, Any]) -> str:
    src = m["source"]
    lines = [
        f"build {m['id']}  created {m['created']}  backend {m['backend']}"
        + (f"  image {m['image_id']}" if m.get("image_id") else ""),
        f"plan {m['plan_hash']}  ({' + '.join(m['plan']['recipes'])})",
        f"source {src['dir']}  layout {src['layout']}  commit {src['commit']}"
        + (f"  dirty {src['dirty_hash']}" if src["dirty"] else ""),
    ]
    for path, sub in src["submodules"].items():
        lines.append(f"  submodule {path} {sub['checked_out'] or '-'} ({sub['state']})")
    lines.append("toolchain:")
    lines += [f"  {k}: {v}" for k, v in m["toolchain"].items()]
    lines.append("CMake used:")
    lines += [f"  {k} = {v}" for k, v in m["cmake_values"].items()]
    lines.append("artifacts:")
    lines += [f"  {a['name']}  {a['size']} B  sha256 {a['sha256']}" for a in m["artifacts"]]
    lines.append("timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in m["timings"].items()))
    chk = m.get("check")
    if chk:
        lines.append(f"check: {'ok' if chk['ok'] else 'FAILED: ' + '; '.join(chk['problems'])}")
    lines.append(f"log: {m['log']}")
    return "\n".join(lines)


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
