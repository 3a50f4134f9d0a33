"""Pass bisection: the first pass whose application makes a workload's numerics go wrong.

One build, one workload, one target. A probe compiles the workload letting only the first
``k`` passes of the pipeline run - later ones are skipped through the PassInstrument's
``should_run`` - then runs it and compares its outputs with the workload's reference (or,
without one, with the outputs of the prefix ``k = 0``). The search over ``k`` is the commit
search of ``toolkit.bisect.search`` over the list ``0..N``.

Units of the search are the passes the pipeline runs at top level: containers - TVM's
pipeline wrappers and every ``Sequential`` of the workload's pipeline, a fork's named one
included - always run (their contents are units), and a pass's nested passes belong to it.
A unit is named by its pass number in the full compile, the number dump-ir gives the same
pass (``toolkit.stack.numbering``: wrappers, nested passes and wrappers' own work count), so
``#N`` means the same pass in both. Some passes must always run, or nothing compiles
(LegalizeOps, the VM lowering, MakePackedAPI...): they are *required*, listed
(``--required``, plus the ones known below) or *learned*: when a prefix does not compile,
the shortest longer prefix that does tells which skipped pass was needed, and that pass
becomes required. A prefix that still does not compile is reported as such, never taken as
a verdict.

A verdict is only as good as its evidence. The same probe (a prefix, with the same passes
required) judged twice differently - bad, then good; compiling, then not - means the check
does not depend on the passes alone (a pass that miscompiles at random, a racy kernel,
uninitialised memory): the search stops there and the bisection is *flaky*, with the prefix
and its verdicts, never a culprit. As commit bisection confirms its answer, the culprit's
prefix and the one before it are run again, twice each: the culprit stands only if they are
bad and good every time.

Probes run in a subprocess (``python -m toolkit.bisect.in_tvm.passes serve``, its target-side
half) in the build's environment, which loads the workload once and forks a child per probe:
skipping passes can crash TVM outright, and the TVM under test may not be tk's. The protocol
between the two is written down in ``toolkit.bisect.protocol``.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit import events as ev
from toolkit.bisect import events, search
from toolkit.bisect.protocol import BAD, GOOD, PASS_NO_COMPILE, PASS_RESULT_MARKER, SKIP
from toolkit.cause import one_line
from toolkit.errors import TkError
from toolkit.process import with_toolkit

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


@dataclass
class PassProbe:
    k: int | None
    status: str  # good / bad / no-compile
    detail: str
    seconds: float


@dataclass
class Disagreement:
    """One probe judged differently by its runs: the evidence a flaky bisection stops on."""

    k: int | None  # the prefix (None: every pass)
    verdicts: list[str]  # what its runs said, in order: good / bad / no-compile
    details: list[str]  # what the check said each time


@dataclass
class PassBisection:
    """The answer of ``tk bisect passes`` and how it was reached."""

    workload: str
    target: str
    units: list[str] = field(default_factory=list)  # the pipeline's units, in order
    numbers: list[int] = field(default_factory=list)  # each unit's pass number (dump-ir's)
    required: list[str] = field(default_factory=list)  # pass names that always ran
    learned: list[str] = field(default_factory=list)  # of which learned during this run
    culprit: int | None = None  # unit index of the first bad pass
    candidates: list[int] = field(default_factory=list)  # when non-compiling prefixes hide it
    no_compile: list[int] = field(default_factory=list)  # prefixes that did not compile
    probes: list[PassProbe] = field(default_factory=list)
    diff: str = ""  # unified diff of the module before/after the culprit pass
    detail: str = ""  # what the check said at the culprit
    status: str = "done"  # done / stopped / flaky (runs of one probe disagreed: no culprit)
    stop_reason: str | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    confirmed: bool | None = None  # the culprit's prefix bad and the one before good again
    tvm: str = ""

    @property
    def culprit_name(self) -> str | None:
        return self.units[self.culprit] if self.culprit is not None else None

    @property
    def culprit_number(self) -> int | None:
        """The culprit's pass number: ``tk dump-ir show DIR --pass N`` shows the same pass."""
        return self.numbers[self.culprit] if self.culprit is not None else None

    def label(self, unit: int) -> str:
        """``#N NAME`` of a unit, N its pass number."""
        return f"#{self.numbers[unit]} {self.units[unit]}"

    def prefix(self, k: int | None) -> str:
        """A prefix in words: the passes it ran, up to which."""
        if k is None or k >= len(self.units):
            return "every pass"
        if k == 0:
            return "no optional pass (prefix 0)"
        return f"prefix {k} (the passes up to {self.label(k - 1)})"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["culprit_name"] = self.culprit_name
        data["culprit_number"] = self.culprit_number
        data["dump_ir"] = dump_ir_command(self) if self.culprit is not None else None
        return data


def dump_ir_command(r: PassBisection) -> str:
    name = shlex.quote(r.culprit_name or "")
    return (f"tk dump-ir {shlex.quote(r.workload)} --target {shlex.quote(r.target)} -o "
            f"ir-dump --passes {name} && tk dump-ir show ir-dump --pass {r.culprit_number} "
            "--diff")


ProbeFn = Callable[..., dict[str, Any]]


class Flaky(Exception):
    """Runs of one probe disagreed: the search cannot go on on this evidence."""


class PassBisector:
    """The search over prefixes; ``run_probe`` is injectable like the commit search's."""

    def __init__(self, workload: str, target: str, *, required: Sequence[str] = (),
                 run_probe: ProbeFn | None = None, workdir: Path | None = None,
                 events: ev.Handler = ev.ignore,
                 env: dict[str, str] | None = None, timeout: float | None = 600,
                 rtol: float = 1e-3, atol: float = 1e-4, learn: bool = True) -> None:
        self.result = PassBisection(workload, target,
                                    required=sorted(set(KNOWN_REQUIRED) | set(required)))
        self.run_probe = run_probe or self._subprocess_probe
        self.workdir = workdir or Path(os.environ.get("TMPDIR", "/tmp"))
        self.events = events  # hears toolkit.bisect.events' pass-search events
        self.env = env
        self.timeout = timeout
        self.rtol, self.atol = rtol, atol
        self.learn = learn
        self.marks: dict[str, str] = {}
        # Every probe's judgements so far, keyed by what decides its outcome.
        self._judged: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
        self._server: subprocess.Popen | None = None

    def _subprocess_probe(self, k: int | None, required: Sequence[str],
                          diff_unit: int | None = None) -> dict[str, Any]:
        if self._server is None or self._server.poll() is not None:
            self._server = self._start_server()
        baseline = self.workdir / "prefix0-outputs.npz"
        req = {"k": k, "required": list(required), "diff_unit": diff_unit,
               "baseline": str(baseline), "save": str(baseline) if k == 0 else None}
        assert self._server.stdin is not None and self._server.stdout is not None
        try:
            self._server.stdin.write(json.dumps(req) + "\n")
            self._server.stdin.flush()
            for line in self._server.stdout:
                if line.startswith(PASS_RESULT_MARKER):
                    return json.loads(line[len(PASS_RESULT_MARKER):])
        except BrokenPipeError:
            pass
        err = self._server.stderr.read() if self._server.stderr else ""
        self.close()
        last = [one_line(err)] if err.strip() else []
        raise TkError(f"the probe process for {self.result.workload} died"
                      f"{': ' + last[0][:300] if last else ''}")

    def _start_server(self) -> subprocess.Popen:
        env = with_toolkit(dict(self.env if self.env is not None else os.environ))
        argv = [sys.executable, "-m", "toolkit.bisect.in_tvm.passes", "serve",
                "--workload", self.result.workload, "--target", self.result.target,
                "--rtol", str(self.rtol), "--atol", str(self.atol)]
        if self.timeout:
            argv += ["--timeout", str(self.timeout)]
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)

    def close(self) -> None:
        if self._server is not None:
            if self._server.stdin:
                self._server.stdin.close()
            try:
                self._server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
            self._server = None

    def _probe(self, k: int | None, diff_unit: int | None = None) -> dict[str, Any]:
        start = time.perf_counter()
        out = self.run_probe(k, self.result.required, diff_unit=diff_unit)
        seconds = time.perf_counter() - start
        self.result.probes.append(PassProbe(k, out["status"], out.get("detail", ""),
                                            round(seconds, 3)))
        self.events(events.PrefixProbed(k, out["status"], out.get("detail", ""),
                                        round(seconds, 3)))
        if out.get("compared", True):  # a run that only saved the baseline judged nothing
            self._judge(k, out["status"], out.get("detail", ""))
        return out

    def _judge(self, k: int | None, status: str, detail: str) -> None:
        """Keep a probe's verdict; one that contradicts an earlier run of the same probe stops
        the search (``Flaky``). Every pass running is one probe, whatever is required."""
        r = self.result
        every = k is None or (bool(r.units) and k >= len(r.units))
        key = ("every",) if every else (k, *r.required)
        runs = self._judged.setdefault(key, [])
        runs.append((status, detail))
        if len({s for s, _ in runs}) > 1:
            r.disagreements.append(Disagreement(None if every else k, [s for s, _ in runs],
                                                [d for _, d in runs]))
            raise Flaky

    def _memory(self) -> Path | None:
        """Where passes learned as required are kept, per TVM version and target kind: the
        next pass bisection on that TVM starts knowing them."""
        if self.run_probe != self._subprocess_probe or not self.result.tvm:
            return None
        from toolkit.paths import cache_root
        from toolkit.target_spec import kind_of

        kind = kind_of(self.result.target)
        safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in f"{self.result.tvm}-{kind}")
        return cache_root() / "bisect" / "required-passes" / f"{safe}.json"

    def _remembered(self) -> list[str]:
        path = self._memory()
        if path is None or not path.exists():
            return []
        try:
            return list(json.loads(path.read_text()))
        except (OSError, ValueError):
            return []

    def _remember(self, name: str) -> None:
        path = self._memory()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(sorted({*self._remembered(), name})))

    def _learn(self, k: int) -> bool:
        """Prefix ``k`` does not compile: find the pass it lacks and make it required."""
        r = self.result
        lo, hi = k, len(r.units)  # prefix lo fails, prefix hi (everything) compiles
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._probe(mid)["status"] == PASS_NO_COMPILE:
                lo = mid
            else:
                hi = mid
        name = r.units[hi - 1]
        if name in r.required:
            return False
        self.events(events.RequiredLearned(name, k))
        r.required = sorted({*r.required, name})
        r.learned.append(name)
        self._remember(name)
        return True

    def _verdict(self, k: int) -> str:
        out = self._probe(k)
        while out["status"] == PASS_NO_COMPILE and self.learn and self._learn(k):
            out = self._probe(k)
        if out["status"] == PASS_NO_COMPILE:
            self.result.no_compile.append(k)
            return SKIP
        return out["status"]

    def run(self) -> PassBisection:
        try:
            return self._run()
        except Flaky:
            r = self.result
            r.culprit, r.candidates, r.diff, r.detail = None, [], "", ""
            d = r.disagreements[-1]
            r.status = "flaky"
            r.stop_reason = (f"the check is flaky: {r.prefix(d.k)} was judged "
                             f"{', then '.join(d.verdicts)} - its outcome does not depend on "
                             "the passes alone, so no pass is to blame on this evidence")
            return r
        finally:
            self.close()

    def _run(self) -> PassBisection:
        r = self.result
        self.events(events.PassSearchStarted(r.workload, r.target))
        full = self._probe(None)
        r.units, r.tvm = full.get("units", []), full.get("tvm", "")
        r.numbers = full.get("numbers") or []
        if full["status"] != PASS_NO_COMPILE and len(r.numbers) != len(r.units):
            raise TkError(f"the probe of every pass numbered {len(r.numbers)} of its "
                          f"{len(r.units)} passes")
        remembered = set(self._remembered()) - set(r.required)
        if remembered:
            self.events(events.RequiredRemembered(r.tvm, tuple(sorted(remembered))))
            r.required = sorted({*r.required, *remembered})
        if full["status"] == PASS_NO_COMPILE:
            raise TkError(f"{r.workload} does not compile for {r.target} even with every pass: "
                          f"{full['detail']}")
        if full["status"] == GOOD and full.get("compared", True):
            return self._stop("the check passes with every pass: nothing to bisect")
        keys = [str(k) for k in range(len(r.units) + 1)]
        self.events(events.PassesListed(len(r.units)))
        first = self._verdict(0)
        if first == SKIP:
            return self._stop("with only the required passes it does not compile: name the "
                              "missing ones with --required (or let tk learn them)")
        if first != GOOD:
            return self._stop(
                "the check fails even with no optional pass: nothing to bisect by pass; "
                f"`tk bisect functions {shlex.quote(r.workload)} --target "
                f"{shlex.quote(r.target)}` finds the kernel (and the required pass) against "
                "the known-good lowering whose kernels are most alike")
        self.marks["0"] = GOOD
        if not full.get("compared", True):
            # No reference: prefix 0's outputs are the baseline every prefix is held to.
            full = self._probe(None)
            if full["status"] == GOOD:
                return self._stop("every pass gives the outputs of no optional pass: nothing "
                                  "to bisect")
        self.marks[keys[-1]] = BAD
        while (i := search.next_probe(keys, self.marks)) is not None:
            b = search.bounds(keys, self.marks)
            self.events(events.PassWindow(b.lo, b.hi, b.steps_left, i))
            self.marks[keys[i]] = self._verdict(i)
        found = [int(x) for x in search.answer(keys, self.marks)]
        if len(found) == 1:
            # Confirm, as commit bisection does, twice each, the second time in reverse
            # order (the culprit's first run gives the diff): a check bad every other run then
            # disagrees with itself whatever its phase, and one bad at random half the time
            # lets a wrong answer through once in 16.
            c = found[0]
            self.events(events.PassConfirming(c))
            self._confirm(c - 1, GOOD)
            out = self._confirm(c, BAD, diff_unit=c - 1)
            self._confirm(c, BAD)
            self._confirm(c - 1, GOOD)
            r.culprit, r.confirmed = c - 1, True
            r.detail = out.get("detail", "")
            if out.get("before") is not None and out.get("after") is not None:
                r.diff = "".join(difflib.unified_diff(
                    out["before"].splitlines(True), out["after"].splitlines(True),
                    f"before {r.culprit_name}", f"after {r.culprit_name}"))
        else:
            r.candidates = [k - 1 for k in found]
        return r

    def _confirm(self, k: int, want: str, diff_unit: int | None = None) -> dict[str, Any]:
        """Run prefix ``k`` again: a verdict other than the search's (``want``) is a
        disagreement even where the passes required have grown since."""
        out = self._probe(k, diff_unit=diff_unit)
        if out["status"] != want:
            self.result.disagreements.append(Disagreement(
                k, [want, out["status"]], ["the search's verdict", out.get("detail", "")]))
            raise Flaky
        return out

    def _stop(self, reason: str) -> PassBisection:
        self.result.status, self.result.stop_reason = "stopped", reason
        return self.result


def markdown(r: PassBisection) -> str:
    lines = []
    if r.culprit is not None:
        lines += [f"# First bad pass: {r.label(r.culprit)}", "",
                  f"- Workload `{r.workload}` on `{r.target}` (TVM {r.tvm}): with the passes "
                  f"before it the check passes; adding {r.culprit_name} breaks it "
                  f"({r.detail}). #{r.culprit_number} is its number in `tk dump-ir` too."]
    elif r.candidates:
        names = ", ".join(r.label(i) for i in r.candidates)
        lines += ["# First bad pass: one of these (the prefixes between do not compile)", "",
                  f"- {names}"]
    elif r.status == "flaky":
        lines += ["# Pass bisection: the check is flaky - no culprit", "", f"- {r.stop_reason}"]
        for d in r.disagreements:
            runs = "; ".join(f"{v} ({why})" for v, why in zip(d.verdicts, d.details))
            lines.append(f"- Runs of {r.prefix(d.k)}: {runs}")
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
    if r.culprit is not None:
        lines += ["", "The same pass in a full compile, with tk dump-ir:", "", "```sh",
                  dump_ir_command(r), "```"]
    return "\n".join(lines) + "\n"


