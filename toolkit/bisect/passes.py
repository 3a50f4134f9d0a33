"""Pass bisection: the first pass whose application makes a workload's numerics go wrong.

One build, one workload, one target. A probe compiles the workload letting only the first
``k`` passes of the pipeline run - later ones are skipped through the PassInstrument's
``should_run`` - then runs it and compares its outputs with the workload's reference (or,
without one, with the outputs of the prefix ``k = 0``). The search over ``k`` is the commit
search of ``toolkit.bisect.search`` over the list ``0..N``.

Units of the search are the passes the pipeline runs at top level: ``sequential`` and
``_pipeline`` containers always run (their contents are units), and a pass's nested passes
belong to it. Some passes must always run, or nothing compiles (LegalizeOps, the VM lowering,
MakePackedAPI...): they are *required*, listed (``--required``, plus the ones known below) or
*learned*: when a prefix does not compile, the shortest longer prefix that does tells which
skipped pass was needed, and that pass becomes required. A prefix that still does not
compile is reported as such, never taken as a verdict.

Probes run in a subprocess (``python -m toolkit.bisect.passes probe ...``) in the build's
environment: skipping passes can crash TVM outright, and the TVM under test may not be tk's.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit.bisect import search
from toolkit.bisect.verdict import BAD, GOOD, SKIP
from toolkit.errors import TkError, TvmFailure

CONTAINERS = frozenset({"sequential", "_pipeline"})
MARKER = "TK-PASSES-RESULT "
NO_COMPILE = "no-compile"
# Passes without which the default pipelines of TVM 0.2x do not compile for llvm/cuda:
# lowering to the VM and to packed functions. Learning finds others (forks, new TVMs).
KNOWN_REQUIRED = (
    "LegalizeOps", "CallTIRRewrite", "LowerAllocTensor", "LowerRuntimeBuiltin",
    "VMShapeLower", "AttachGlobalSymbol", "tirx.BindTarget", "tir.BindTarget",
    "s_tir.LowerInitBlock", "tir.LowerInitBlock", "s_tir.ConvertBlocksToOpaque",
    "tir.ConvertBlocksToOpaque", "s_tir.CompactBufferAllocation", "s_tir.LowerOpaqueBlock",
    "tir.LowerOpaqueBlock", "tirx.FlattenBuffer", "tir.FlattenBuffer", "tirx.SplitHostDevice",
    "tir.SplitHostDevice", "tirx.MakePackedAPI", "tir.MakePackedAPI", "tirx.LowerTVMBuiltin",
    "tir.LowerTVMBuiltin", "tirx.LowerIntrin", "tir.LowerIntrin", "tirx.Filter",
    "tir.Filter", "tirx.AnnotateEntryFunc", "tir.AnnotateEntryFunc",
)


# ---------------------------------------------------------------- target side (imports tvm)

def prefix_instrument(k: int | None, required: set[str], diff_unit: int | None = None) -> Any:
    """A PassInstrument letting units ``0..k-1`` and required passes run, skipping the rest;
    it records the unit names and, for ``diff_unit``, the module before and after it."""
    import tvm

    @tvm.instrument.pass_instrument
    class Prefix:
        def __init__(self) -> None:
            self.names: list[str] = []
            self.skipped: list[int] = []
            self.before = self.after = None
            self._inside = 0  # > 0 while a unit runs: its nested passes belong to it
            self._stack: list[int | None] = []  # per running pass: its unit index, if a unit
            self._next: int | None = None

        def should_run(self, mod: Any, info: Any) -> bool:
            self._next = None
            if info.name in CONTAINERS or self._inside:
                return True
            i = len(self.names)
            self.names.append(info.name)
            run = k is None or i < k or info.name in required
            if run:
                self._next = i
            else:
                self.skipped.append(i)
            return run

        def run_before_pass(self, mod: Any, info: Any) -> None:
            self._stack.append(self._next)
            if self._next is not None:
                self._inside += 1
                if self._next == diff_unit:
                    self.before = mod.script()
            self._next = None

        def run_after_pass(self, mod: Any, info: Any) -> None:
            unit = self._stack.pop()
            if unit is not None:
                self._inside -= 1
                if unit == diff_unit:
                    self.after = mod.script()

    return Prefix()


def probe(workload: str, target: str, k: int | None, required: Sequence[str],
          baseline: Path | None = None, save: Path | None = None, diff_unit: int | None = None,
          seed: int = 0, rtol: float = 1e-3, atol: float = 1e-4) -> dict[str, Any]:
    """Compile with the prefix ``k`` (None: every pass), run, compare; a JSON-able result."""
    import numpy as np

    from toolkit import stack
    from toolkit import workload as workloads

    wl = workloads.load(workload, seed=seed)
    inst = prefix_instrument(k, set(required), diff_unit)
    result: dict[str, Any] = {"k": k}
    try:
        compiled = stack.compile(wl, target, instruments=[inst])
        inputs = wl.make_inputs(seed)
        outputs = stack.run(compiled, inputs).outputs
    except TvmFailure as e:
        result.update(status=NO_COMPILE, detail=str(e).splitlines()[0])
    else:
        expected = wl.reference_outputs(inputs)
        against = "reference"
        if expected is None and baseline is not None and baseline.exists():
            with np.load(baseline) as data:
                expected = [data[f"arr_{i}"] for i in range(len(data.files))]
            against = "prefix 0"
        if save is not None:
            np.savez(save, *outputs)
        if expected is None:
            result.update(status=GOOD, detail="baseline saved (no reference)")
        else:
            cmp = stack.compare(outputs, expected, against, rtol, atol)
            result.update(status=GOOD if cmp.ok else BAD,
                          detail=f"{'matches' if cmp.ok else 'differs from'} {against}: max abs "
                                 f"err {cmp.max_abs:.3g}, max rel err {cmp.max_rel:.3g}")
    import tvm

    result.update(units=inst.names, skipped=inst.skipped, tvm=tvm.__version__,
                  before=inst.before, after=inst.after)
    return result


def _main(argv: Sequence[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m toolkit.bisect.passes probe")
    p.add_argument("mode", choices=["probe"])
    p.add_argument("--workload", required=True)
    p.add_argument("--target", default="llvm")
    p.add_argument("--k", type=int, default=None)
    p.add_argument("--required", default="[]")
    p.add_argument("--baseline", type=Path)
    p.add_argument("--save", type=Path)
    p.add_argument("--diff-unit", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    a = p.parse_args(argv)
    out = probe(a.workload, a.target, a.k, json.loads(a.required), a.baseline, a.save,
                a.diff_unit, a.seed, a.rtol, a.atol)
    sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")
    return 0


# ---------------------------------------------------------------- host side

@dataclass
class PassProbe:
    k: int | None
    status: str  # good / bad / no-compile
    detail: str
    seconds: float


@dataclass
class PassBisection:
    """The answer of ``tk bisect passes`` and how it was reached."""

    workload: str
    target: str
    units: list[str] = field(default_factory=list)  # the pipeline's units, in order
    required: list[str] = field(default_factory=list)  # pass names that always ran
    learned: list[str] = field(default_factory=list)  # of which learned during this run
    culprit: int | None = None  # unit index of the first bad pass
    candidates: list[int] = field(default_factory=list)  # when non-compiling prefixes hide it
    no_compile: list[int] = field(default_factory=list)  # prefixes that did not compile
    probes: list[PassProbe] = field(default_factory=list)
    diff: str = ""  # unified diff of the module before/after the culprit pass
    detail: str = ""  # what the check said at the culprit
    status: str = "done"  # done / stopped
    stop_reason: str | None = None
    tvm: str = ""

    @property
    def culprit_name(self) -> str | None:
        return self.units[self.culprit] if self.culprit is not None else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["culprit_name"] = self.culprit_name
        return data


ProbeFn = Callable[..., dict[str, Any]]


class PassBisector:
    """The search over prefixes; ``run_probe`` is injectable like the commit search's."""

    def __init__(self, workload: str, target: str, *, required: Sequence[str] = (),
                 run_probe: ProbeFn | None = None, workdir: Path | None = None,
                 progress: Callable[[str], None] = lambda msg: None,
                 env: dict[str, str] | None = None, timeout: float | None = 600,
                 rtol: float = 1e-3, atol: float = 1e-4, learn: bool = True) -> None:
        self.result = PassBisection(workload, target,
                                    required=sorted(set(KNOWN_REQUIRED) | set(required)))
        self.run_probe = run_probe or self._subprocess_probe
        self.workdir = workdir or Path(os.environ.get("TMPDIR", "/tmp"))
        self.progress = progress
        self.env = env
        self.timeout = timeout
        self.rtol, self.atol = rtol, atol
        self.learn = learn
        self.marks: dict[str, str] = {}

    def _subprocess_probe(self, k: int | None, required: Sequence[str],
                          diff_unit: int | None = None) -> dict[str, Any]:
        baseline = self.workdir / "prefix0-outputs.npz"
        argv = [sys.executable, "-m", "toolkit.bisect.passes", "probe",
                "--workload", self.result.workload, "--target", self.result.target,
                "--required", json.dumps(list(required)), "--rtol", str(self.rtol),
                "--atol", str(self.atol), "--baseline", str(baseline)]
        if k is not None:
            argv += ["--k", str(k)]
        if k == 0:
            argv += ["--save", str(baseline)]
        if diff_unit is not None:
            argv += ["--diff-unit", str(diff_unit)]
        env = dict(self.env if self.env is not None else os.environ)
        root = str(Path(__file__).resolve().parent.parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(
            [p for p in [env.get("PYTHONPATH", ""), root] if p])
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return {"k": k, "status": NO_COMPILE, "detail": "timed out"}
        for line in reversed(proc.stdout.splitlines()):
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER):])
        why = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else \
            f"exit {proc.returncode}"
        last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
        return {"k": k, "status": NO_COMPILE,
                "detail": f"probe {why}{': ' + last[0][:200] if last else ''}"}

    def _probe(self, k: int | None, diff_unit: int | None = None) -> dict[str, Any]:
        start = time.perf_counter()
        out = self.run_probe(k, self.result.required, diff_unit=diff_unit)
        seconds = time.perf_counter() - start
        self.result.probes.append(PassProbe(k, out["status"], out.get("detail", ""),
                                            round(seconds, 3)))
        label = "every pass" if k is None else f"first {k} passes"
        self.progress(f"  {label}: {out['status']} ({out.get('detail', '')})")
        return out

    def _learn(self, k: int) -> bool:
        """Prefix ``k`` does not compile: find the pass it lacks and make it required."""
        r = self.result
        lo, hi = k, len(r.units)  # prefix lo fails, prefix hi (everything) compiles
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._probe(mid)["status"] == NO_COMPILE:
                lo = mid
            else:
                hi = mid
        name = r.units[hi - 1]
        if name in r.required:
            return False
        self.progress(f"  learned: {name} must always run (without it prefix {k} does not "
                      "compile)")
        r.required = sorted({*r.required, name})
        r.learned.append(name)
        return True

    def _verdict(self, k: int) -> str:
        out = self._probe(k)
        while out["status"] == NO_COMPILE and self.learn and self._learn(k):
            out = self._probe(k)
        if out["status"] == NO_COMPILE:
            self.result.no_compile.append(k)
            return SKIP
        return out["status"]

    def run(self) -> PassBisection:
        r = self.result
        self.progress(f"compiling {r.workload} for {r.target} with every pass")
        full = self._probe(None)
        r.units, r.tvm = full.get("units", []), full.get("tvm", "")
        if full["status"] == NO_COMPILE:
            raise TkError(f"{r.workload} does not compile for {r.target} even with every pass: "
                          f"{full['detail']}")
        keys = [str(k) for k in range(len(r.units) + 1)]
        self.progress(f"{len(r.units)} passes; checking with none but the required ones")
        first = self._verdict(0)
        if first != GOOD:
            return self._stop(f"the check fails even with no optional pass ({first}): nothing "
                              "to bisect")
        self.marks["0"] = GOOD
        if full["status"] == GOOD:
            return self._stop("the check passes with every pass: nothing to bisect")
        self.marks[keys[-1]] = BAD
        while (i := search.next_probe(keys, self.marks)) is not None:
            b = search.bounds(keys, self.marks)
            self.progress(f"passes {b.lo}..{b.hi}: ~{b.steps_left} probes left; trying the "
                          f"first {i}")
            self.marks[keys[i]] = self._verdict(i)
        found = [int(x) for x in search.answer(keys, self.marks)]
        if len(found) == 1:
            r.culprit = found[0] - 1
            out = self._probe(found[0], diff_unit=r.culprit)
            r.detail = out.get("detail", "")
            if out.get("before") is not None and out.get("after") is not None:
                r.diff = "".join(difflib.unified_diff(
                    out["before"].splitlines(True), out["after"].splitlines(True),
                    f"before {r.culprit_name}", f"after {r.culprit_name}"))
        else:
            r.candidates = [k - 1 for k in found]
        return r

    def _stop(self, reason: str) -> PassBisection:
        self.result.status, self.result.stop_reason = "stopped", reason
        return self.result


def markdown(r: PassBisection) -> str:
    lines = []
    if r.culprit is not None:
        lines += [f"# First bad pass: #{r.culprit} {r.culprit_name}", "",
                  f"- Workload `{r.workload}` on `{r.target}` (TVM {r.tvm}): with the first "
                  f"{r.culprit} passes the check passes; adding {r.culprit_name} breaks it "
                  f"({r.detail})."]
    elif r.candidates:
        names = ", ".join(f"#{i} {r.units[i]}" for i in r.candidates)
        lines += ["# First bad pass: one of these (the prefixes between do not compile)", "",
                  f"- {names}"]
    else:
        lines += [f"# Pass bisection {r.status}", "", f"- {r.stop_reason}"]
    lines.append(f"- {len(r.units)} passes, {len(r.probes)} probes; always run: "
                 f"{len(r.required)} required ({', '.join(r.learned) or 'none'} learned)")
    if r.no_compile:
        lines.append(f"- Prefixes that did not compile (no verdict): "
                     f"{', '.join(map(str, sorted(set(r.no_compile))))}")
    if r.diff:
        lines += ["", f"IR before and after {r.culprit_name}:", "", "```diff", r.diff.rstrip(),
                  "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
