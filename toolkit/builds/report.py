"""A build's plan, outcome and record as text for a person (``tk build`` prints these; the
JSON forms are the data themselves). Pure: no build runs here."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.builds.ccache import CcacheStats
    from toolkit.builds.gc import Usage
    from toolkit.builds.record import BuildRecord, PostBuildCheck, Provenance, RuntimeCheck


def dry_run_text(info: dict[str, Any]) -> str:
    """What ``tk build --dry-run`` shows: the resolved plan, pre-flight, Dockerfile."""
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


def outcome_text(r: BuildRecord, from_store: bool, pulled: bool = False,
                 ccache: CcacheStats | None = None) -> str:
    """What a build (or the store, or the team's registry) delivered, and how to use it."""
    t = r.timings
    if pulled:
        here = r.pulled.timings
        head = (f"build {r.id} pulled from {r.pulled.reference} in {here.get('pull', 0):.1f} s, "
                f"checked here in {here.get('check', 0):.1f} s (built {r.created}; compile "
                f"{t.get('compile', 0):.1f} s there)")
    elif from_store:
        head = (f"build {r.id} served from the store (built {r.created}; nothing "
                f"build-relevant changed)")
    else:
        head = (f"built {r.id} in {t.get('total', 0):.1f} s (configure "
                f"{t.get('configure', 0):.1f} s, compile {t.get('compile', 0):.1f} s)")
    lines = [head]
    if r.pulled:
        lines.append(f"  built in   {r.pulled.build_dir} (from {r.pulled.source_dir})")
        if not pulled:
            lines.append(f"  pulled     from {r.pulled.reference} at {r.pulled.at}")
    else:
        lines.append(f"  build dir  {r.build_dir}")
    lines.append(f"  libraries  {' '.join(a.name for a in r.artifacts)}  ->  {r.lib_dir}")
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
        lines.append(f"  check      {'ok' if chk.ok else 'FAILED'}: {checked_text(chk)}")
        if chk.provenance:
            lines.append(f"  sources    {provenance_text(chk.provenance, r)}")
        for rt in chk.runtimes:
            lines.append(f"  runtime    {rt.kind}: {runtime_text(rt)}")
    if ccache is not None:
        lines.append(f"  ccache     {ccache_text(ccache)}")
    lines.append(f"  use it     eval \"$(tk env {r.id})\"")
    return "\n".join(lines)


def checked_text(chk: PostBuildCheck) -> str:
    """What the post-build check did to the build: loaded its libraries, imported TVM, or
    stood on an earlier build's import (toolkit/builds/equivalence.py)."""
    if chk.load_only:
        return "its libraries load"
    if chk.import_from and chk.surface:
        return (f"its libraries load and register what build {chk.import_from}'s did "
                f"({chk.surface.functions} functions), with the same Python sources: that "
                f"build's import tvm from {chk.tvm_file} stands")
    return f"import tvm from {chk.tvm_file}"


def ccache_text(s: CcacheStats) -> str:
    """What ccache did for one build's compiles."""
    if not s.compiles:
        return "nothing was compiled" if not s.uncacheable else \
            f"no compile ccache could cache ({s.uncacheable} other calls)"
    text = f"{s.hits} of {s.compiles} compiles hit ({100 * s.hit_rate:.0f}%)"
    if s.remote:
        text += f", {s.remote_hits} from {s.remote} ({100 * s.remote_rate:.0f}%)"
        if s.remote_errors:
            text += f"; the remote failed {s.remote_errors} times"
    return text


def provenance_text(p: Provenance, r: BuildRecord) -> str:
    if p.objects is None:
        return p.note
    tree = r.pulled.source_dir if r.pulled else r.source.dir
    if p.outside_count:
        text = f"{p.outside_count} of {p.objects} objects compiled from outside {tree}"
    else:
        text = f"all {p.objects} objects compiled from {tree} (or its build directory)"
    return f"{text}, {p.note}" if p.note else text


def runtime_text(rt: RuntimeCheck) -> str:
    where = Path(rt.library).name if rt.library else "in libtvm_runtime"
    if not rt.loads:
        return f"{where} does not load{': ' + rt.detail if rt.detail else ''}"
    api = {True: "registers", False: "does not register",
           None: "cannot tell whether it registers"}[rt.device_api]
    kernel = {True: "; a tiny kernel ran", False: f"; the tiny kernel failed: {rt.detail}",
              None: "; no device here to run a kernel"}[rt.kernel]
    return f"{where} loads, {api} device_api.{rt.kind}{kernel}"


def size(n: float) -> str:
    """Bytes for a person: 812 B, 3.4 MB."""
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def summary(r: BuildRecord, use: Usage) -> dict[str, Any]:
    """One stored build as ``tk build ls`` lists it (and ``--json`` gives it)."""
    commit = r.source.commit or (f"tree:{r.source.content_hash}" if r.source.content_hash
                                 else None)
    return {"id": r.id, "created": r.created, "commit": commit, "dirty": r.source.dirty,
            "recipes": " + ".join(r.recipes), "source": r.source.dir, "backend": r.backend,
            "ok": r.check.ok if r.check else None, "bytes": use.bytes,
            "unique_bytes": use.unique, "packed": use.packed}


def record_text(r: BuildRecord) -> str:
    """A stored build's record in full (``tk build show``)."""
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
        lines.append(f"  {checked_text(chk)}")
        if chk.provenance:
            lines.append(f"  sources: {provenance_text(chk.provenance, r)}")
        lines += [f"  {rt.kind}: {runtime_text(rt)}" for rt in chk.runtimes]
    if r.pulled:
        lines.append(f"pulled: from {r.pulled.reference} at {r.pulled.at}; built in "
                     f"{r.pulled.build_dir} from {r.pulled.source_dir} (timings above are "
                     "its builder's; here: " + ", ".join(f"{k} {v:.2f} s" for k, v in
                                                        r.pulled.timings.items()) + ")")
    lines.append(f"log: {r.log}")
    return "\n".join(lines)
