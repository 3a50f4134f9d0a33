"""The environment as evidence: what a log implies, checked in the TVM where it failed.

When ``tk explain`` runs where the failure happened (``--last``, or ``--env``), the probe
``toolkit/probes/explain.py`` runs in that interpreter (never in tk's process: importing a
TVM here could be the very crash being explained) and reports: is each FFI global the log
misses registered by the library loaded, is each Python name importable, which commit
libtvm was built from and which commit its Python sources are at, which LLVM and CUDA it
links, and whether a second libtvm or a second LLVM is mapped. Each fact that bears on the
log becomes a finding whose origin is the environment check.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from toolkit.explain.drift import PATTERNS
from toolkit.explain.history import api
from toolkit.explain.match import Finding
from toolkit.explain.scan import matches

ORIGIN = "environment check"
RANK = 47  # above the history's answers: it checked this machine, not TVM's past
SOURCE = "toolkit/probes/explain.py, run in the interpreter under test"


@dataclass
class Asked:
    """The names a log says are missing: FFI globals and dotted Python names."""

    globals: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"globals": self.globals, "names": self.names})


@dataclass
class Facts:
    """What the probe found (typed from its JSON lines)."""

    ok: bool
    error: str = ""
    version: str | None = None
    package: str | None = None
    source_root: str | None = None
    source_head: str | None = None
    libinfo: dict[str, str] = field(default_factory=dict)
    mapped: list[tuple[str, str]] = field(default_factory=list)  # (family, path)
    needed: dict[str, list[str]] = field(default_factory=dict)  # libtvm path -> DT_NEEDED
    registered: dict[str, bool | None] = field(default_factory=dict)
    present: dict[str, bool | None] = field(default_factory=dict)
    ended: str = ""  # how the probe ended when it did not finish

    @classmethod
    def from_records(cls, records: list[dict[str, Any]], ended: str = "") -> Facts:
        by = {r["stage"]: r for r in records}
        tvm = by.get("tvm", {})
        return cls(ok=bool(tvm.get("ok")), error=tvm.get("error", ""), version=tvm.get("version"),
                   package=tvm.get("package"), source_root=by.get("source", {}).get("root"),
                   source_head=by.get("source", {}).get("head"),
                   libinfo=by.get("build", {}).get("libinfo", {}),
                   mapped=[tuple(x) for x in by.get("libraries", {}).get("mapped", [])],
                   needed=by.get("libraries", {}).get("needed", {}),
                   registered=by.get("globals", {}).get("registered", {}),
                   present=by.get("names", {}).get("present", {}), ended=ended)


def asked(text: str) -> Asked:
    """The globals and Python names ``text`` reports missing (the API-drift patterns)."""
    out = Asked()
    for kind, needles, pattern in PATTERNS:
        for m in matches(text, pattern, needles, one_line=True):
            g = m.groupdict()
            if kind == "global" and g.get("name") not in out.globals:
                out.globals.append(g["name"])
            elif kind == "python":
                mod, attr = g.get("mod"), g.get("attr")
                name = f"{mod}.{attr}" if mod and attr else (mod or "")
                if name.startswith("tvm") and name not in out.names:
                    out.names.append(name)
    return out


def probe(names: Asked, python: str = sys.executable, env: dict[str, str] | None = None,
          timeout: float = 300) -> Facts:
    """Run the probe under ``python`` (a crash is a fact, not an exception)."""
    from toolkit.process import STAGE, run_probe

    ran = run_probe("explain", names.to_json(), python=python, env=env, timeout=timeout)
    records = [r for r in ran.records if STAGE in r]
    ended = "" if ran.code == 0 else f"exit {ran.code}: {ran.stderr[-300:]}"
    return Facts.from_records(records, ended)


def findings(text: str, facts: Facts) -> list[Finding]:
    """What the environment says about ``text``'s failure, as findings."""
    out: list[Finding] = []

    def add(key: str, title: str, cause: str, fix: str, rank: int = RANK) -> None:
        out.append(Finding(f"env-{key}", "environment", title, cause, fix, 1, "", SOURCE, rank,
                           origin=ORIGIN))

    if not facts.ok:
        add("import", "import tvm fails in this environment",
            f"the interpreter checked cannot import tvm: {facts.error or facts.ended}",
            "run tk doctor for the cause (libraries, versions, paths)")
        return out
    history = api()
    libtvm = [p for fam, p in facts.mapped if fam == "libtvm"]
    built = facts.libinfo.get("GIT_COMMIT_HASH", "")
    where = f"{', '.join(libtvm[:2]) or 'libtvm'}" + (f" (built from {built[:12]})" if built else "")
    for name, registered in facts.registered.items():
        hit = history.get("F", name)
        if registered is False:
            why = ""
            if hit:
                option = history.option_for(hit[1]) if hit[1] else None
                if option and option[0] not in facts.libinfo:
                    why = f"; it comes from {hit[1]}, compiled only with {option[0]}, which this " \
                          f"build has OFF"
                else:
                    why = f"; TVM {history.versions.span(hit[0])} registers it in {hit[1]}"
            add("global-missing", f"{name} is not registered by the TVM here",
                f"checked here: the library loaded, {where}, does not register {name}{why}.",
                "rebuild libtvm from the sources the Python package comes from (with the option, "
                "if one is named), or load the library that registers it")
        elif registered:
            add("global-present", f"{name} is registered by the TVM here",
                f"checked here: {where} registers {name}; the process that failed loaded other "
                "libraries than the interpreter checked (another PYTHONPATH/TVM_LIBRARY_PATH, "
                "another environment), or the library that registers it was loaded after the call",
                "compare the failing process's environment with this one (tk doctor in each)")
    for name, present in facts.present.items():
        if present is False:
            add("name-missing", f"{name} does not exist in the TVM here ({facts.version})",
                f"checked here: tvm {facts.version} from {facts.package} has no {name}.",
                "use the API of this version, or install the version the code was written for")
        elif present:
            add("name-present", f"{name} exists in the TVM here ({facts.version})",
                f"checked here: tvm {facts.version} from {facts.package} has {name}; the failing "
                "process imported another tvm (check PYTHONPATH and which python ran it).",
                "run it with this interpreter, or tk doctor --python THAT_PYTHON")
    if facts.source_head and built and not facts.source_head.startswith(built[:12]) and \
            not built.startswith(facts.source_head[:12]):
        add("skew", "libtvm and its Python sources are from different commits",
            f"checked here: the Python sources in {facts.source_root} are at "
            f"{facts.source_head[:12]}, but libtvm was built from {built[:12]} (a git pull or "
            "checkout without a rebuild, or TVM_LIBRARY_PATH pointing at another build).",
            "rebuild libtvm in that tree (cmake --build build), or check out the commit it was "
            "built from", rank=RANK + 2)
    # A source tree's python/tvm beside the libtvm of another tree (PYTHONPATH at one checkout,
    # TVM_LIBRARY_PATH at another's build): the commits may even match, the trees do not.
    if facts.package and "/python/tvm" in facts.package.replace(os.sep, "/") and libtvm:
        from toolkit.explain.toolchain import tree_of

        py_tree = tree_of(facts.package.replace(os.sep, "/"))
        others = [p for p in libtvm if "site-packages" not in p and
                  tree_of(os.path.dirname(os.path.realpath(p))) != py_tree]
        if others:
            add("tree-skew", "the Python of one TVM tree runs the library of another",
                f"checked here: tvm is imported from {facts.package} (the tree {py_tree}) but "
                f"the libtvm loaded is {others[0]}, of the tree "
                f"{tree_of(os.path.dirname(os.path.realpath(others[0])))} (PYTHONPATH and "
                "TVM_LIBRARY_PATH name two trees).",
                f"point TVM_LIBRARY_PATH at {py_tree}'s build directory, or PYTHONPATH at the "
                "other tree's python/", rank=RANK + 2)
    for family, label in (("libtvm", "libtvm"), ("libLLVM", "LLVM")):
        paths = [p for fam, p in facts.mapped if fam == family]
        dirs = {os.path.dirname(os.path.realpath(p)) for p in paths}
        if len(dirs) > 1 or family == "libLLVM" and len({os.path.basename(p) for p in paths}) > 1:
            add(f"second-{family}", f"two {label}s are loaded in one process",
                f"checked here: {', '.join(paths)} are all mapped; symbols resolve to whichever "
                "came first, so one of them runs with the other's code.",
                "keep one: drop the other from PYTHONPATH/TVM_LIBRARY_PATH/LD_LIBRARY_PATH, or "
                "build TVM against the same LLVM the other library uses", rank=RANK + 2)
    links = sorted({n for needed in facts.needed.values() for n in needed
                    if n.startswith(("libLLVM", "libcuda", "libcudart", "libnvrtc", "libamdhip"))})
    llvm = facts.libinfo.get("LLVM_VERSION")
    cuda = facts.libinfo.get("CUDA_VERSION")
    summary = ", ".join(x for x in (llvm and f"LLVM {llvm}", cuda and f"CUDA {cuda}",
                                    links and "links " + " ".join(links)) if x)
    add("summary", f"The TVM here: {facts.version}",
        f"checked here: tvm {facts.version} from {facts.package}; {where}"
        + (f"; {summary}" if summary else "") + ".",
        "this is the environment the answers above were checked in", rank=20)
    return out
