"""``tk ext check LIB.so``: what an extension would bind to, without loading it.

Reads the library's DT_NEEDED / RPATH / RUNPATH and its manifest, asks a subprocess of the
target Python which TVM libraries ``import tvm`` maps there, and runs the loader's own
pre-load checks against those: the verdict is what ``load_extension`` would do.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit import libraries
from toolkit.errors import TkError
from toolkit.ext import manifest
from toolkit.process import run_probe


@dataclass
class Report:
    library: str
    soname: str | None
    build_id: str | None
    needed: list[str]
    rpath: list[str]
    runpath: list[str]
    bindings: list[dict[str, Any]]
    manifest: dict[str, Any] | None
    python: str
    process: dict[str, Any]
    problems: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def process_facts(python: str = sys.executable) -> dict[str, Any]:
    """The TVM libraries and globals ``python -c 'import tvm'`` ends up with."""
    ran = run_probe("extlibs", "mapped", python=python)
    mapped = ran.stage("mapped")
    if mapped is not None:
        return mapped
    from toolkit.explain import hint

    extra = hint(ran.stderr)
    raise TkError(f"import tvm failed under {python}: {ran.last_error_line()}"
                  + (f"\n  {extra}" if extra else ""))


def check(library: str | Path, python: str = sys.executable) -> Report:
    from toolkit.ext.loader import LoadRefused, plan

    path = Path(library)
    lib = libraries.describe_user_library(path)
    facts = process_facts(python)
    mapped = [libraries.Library(m["path"], m["soname"], m["build_id"], m["needed"],
                                m["runpath"], m.get("rpath", [])) for m in facts["libraries"]]
    data = manifest.read(path)
    bindings = libraries.resolve(lib, mapped)
    report = Report(
        library=str(path.resolve()), soname=lib.soname, build_id=lib.build_id,
        needed=lib.needed, rpath=lib.rpath, runpath=lib.runpath,
        bindings=[_binding_row(b, mapped) for b in bindings], manifest=data, python=python,
        process={k: facts.get(k) for k in ("tvm_file", "tvm_version", "tvm_ffi_version")}
        | {"libraries": [m.path for m in mapped]},
    )
    try:
        versions = {fam: facts.get("tvm_version") for fam in libraries.CORE_FAMILIES}
        versions["libtvm_ffi"] = facts.get("tvm_ffi_version")
        plan(path, mapped=mapped, versions=versions,
             executable=facts.get("executable") or python)
    except LoadRefused as e:
        report.problems.append({"problem": e.problem, "fix": e.fix})
    if data is None:
        report.problems.append({
            "problem": "no manifest beside it: nothing says which TVM / tvm-ffi it was built "
                       "against, so a mismatch cannot be caught before loading",
            "fix": "build it with tk ext build DIR (writes "
                   f"{manifest.path_for(path).name})"})
    else:
        taken = sorted(set(data.get("globals", [])) & set(facts.get("globals", [])))
        if taken:
            report.problems.append({
                "problem": f"it registers {', '.join(taken[:3])}, already registered once "
                           "tvm is imported: tvm-ffi would abort the process",
                "fix": "rename those functions in the extension"})
    return report


def _binding_row(b: libraries.Binding, mapped: list[libraries.Library]) -> dict[str, Any]:
    row: dict[str, Any] = {"needed": b.needed, "path": b.path, "how": b.how}
    fam = libraries.family(b.path or b.needed)
    if fam:
        now = next((m for m in mapped if m.family == fam), None)
        row["tvm"] = True
        row["process_has"] = now.path if now else None
    return row


def render(report: Report) -> str:
    lines = [f"tk ext check: {report.library}",
             f"  soname {report.soname or '-'}, build id {report.build_id or '-'}",
             f"  RPATH {':'.join(report.rpath) or '-'}; RUNPATH {':'.join(report.runpath) or '-'}",
             "  DT_NEEDED:"]
    for b in report.bindings:
        mark = "  (TVM)" if b.get("tvm") else ""
        lines.append(f"    {b['needed']:<24} -> {b['path'] or 'NOT FOUND'}  [{b['how']}]{mark}")
    data = report.manifest
    if data:
        lines.append(f"  manifest: built {data.get('built', {}).get('time', '?')} against tvm "
                     f"{data.get('tvm', {}).get('version')} / tvm-ffi "
                     f"{data.get('tvm_ffi', {}).get('version')}; "
                     f"registers {len(data.get('globals', []))} globals")
        for link in data.get("links", []):
            lines.append(f"    {link.get('needed') or '-':<24} was {link['path']} "
                         f"(build id {str(link.get('build_id'))[:12]})")
    proc = report.process
    lines.append(f"  {report.python}: tvm {proc.get('tvm_version')} "
                 f"({Path(proc.get('tvm_file') or '-').parent}), tvm-ffi "
                 f"{proc.get('tvm_ffi_version')}")
    if report.ok:
        lines.append("  ok: it would load into this Python's TVM")
    for p in report.problems:
        lines.append(f"  MISMATCH: {p['problem']}")
        lines.append(f"    fix: {p['fix']}")
    return "\n".join(lines)
