"""What a bisection and the processes it starts say to each other - written down once here.

Like the package comment of Go's ``cmd/bisect``, this is the reference for the protocols
between tk's bisection (host side) and the processes it runs in the environment of the build
under test; the constants and the record below are their only definitions, and both sides
import them from here. Plain data: no tvm, nothing of tk beyond the standard library, so the
in-TVM halves (``toolkit.bisect.in_tvm``) load nothing of the host's.

Bisect checks (``tk bisect run --check CMD``)
    A check runs in the step's worktree, in a process group of its own (killed whole on a
    timeout), with the step's build in its environment plus ``BISECT_COMMIT`` (the commit's
    sha), ``BISECT_PHASE`` (good-end, bad-end, search or confirm), ``BISECT_DIR`` (the
    bisection's directory, for baselines) and, for builds tk does not know,
    ``BISECT_BUILD_DIR`` (a build directory kept between steps). Its exit status: 0 good,
    ``CHECK_SKIP`` (125, as ``git bisect run``) cannot test this commit, ``CHECK_NOT_EXECUTABLE``
    (126) and ``CHECK_NOT_FOUND`` (127) stop the bisection, anything else bad; ``--regress``
    changes which outcome is bad (``toolkit.bisect.verdicts.classify``). The ready-made checks
    under the repository's ``bisect/`` spell these names out: they start where toolkit is not
    importable.

The pass-probe server (``toolkit.bisect.passes`` <-> ``toolkit.bisect.in_tvm.passes``)
    ``python -m toolkit.bisect.in_tvm.passes serve --workload W --target T [--rtol --atol
    --timeout]`` in the environment of the build under test. Requests: one JSON object per
    line on its stdin, ``{"k": int|null, "required": [pass names], "diff_unit": int|null,
    "baseline": path, "save": path|null}`` (run the first ``k`` units, null: all). Results:
    one line per request on stdout starting with ``PASS_RESULT_MARKER``, then JSON
    ``{"k", "status": GOOD|BAD|PASS_NO_COMPILE, "detail", "compared", "units", "skipped",
    "tvm", "before", "after"}``. Each probe runs in a forked child (``process.fork_and_wait``):
    a crash or a timeout is a ``PASS_NO_COMPILE`` result, not a dead server. The units of the
    search are the passes run at top level, ``CONTAINERS`` and every ``Sequential`` of the
    workload's pipeline (named or not) always running and their contents being units.

Function bisection (``toolkit.bisect.functions`` <-> ``toolkit.bisect.in_tvm.functions``)
    ``python -m toolkit.bisect.in_tvm.functions WORKLOAD --target T --good-pipeline P`` (or,
    for a good side in another interpreter, ``--good-side DIR`` there first) answers with one
    line on stdout: ``FUNCS_RESULT_MARKER``, then the JSON of a ``FunctionBisection`` or
    ``{"error", "user_error"}``. ``P`` is a Relax pipeline's name or ``AUTO_PIPELINE``: every
    pipeline is lowered and the one whose kernels the bad lowering calls most alike is the
    good side (``--good-side`` with ``auto`` writes them all; the search chooses).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# --- verdicts ----------------------------------------------------------------------------
GOOD = "good"
BAD = "bad"
SKIP = "skip"
STOP = "stop"

# --- bisect checks -----------------------------------------------------------------------
BISECT_COMMIT = "TK_BISECT_COMMIT"
BISECT_PHASE = "TK_BISECT_PHASE"
BISECT_DIR = "TK_BISECT_DIR"
BISECT_BUILD_DIR = "TK_BISECT_BUILD_DIR"
CHECK_SKIP = 125  # git bisect's "cannot test this commit"
CHECK_NOT_EXECUTABLE = 126
CHECK_NOT_FOUND = 127

# --- the pass-probe server ---------------------------------------------------------------
PASS_RESULT_MARKER = "TK-PASSES-RESULT "
PASS_NO_COMPILE = "no-compile"
# Pass names that only hold other passes: an unnamed Sequential, and the closures TVM's
# pipelines run theirs in (default_build_pipeline's and the targets' ``_pipeline``,
# zero_pipeline's ``f_zero_pipeline``). A workload's own Sequentials join them by name.
CONTAINERS = frozenset({"sequential", "_pipeline", "f_zero_pipeline"})

# --- function bisection ------------------------------------------------------------------
FUNCS_RESULT_MARKER = "TK-FUNCS-RESULT "
AUTO_PIPELINE = "auto"  # --good-pipeline: the pipeline whose kernels are called most alike


@dataclass
class FunctionBisection:
    workload: str
    target: str
    good_pipeline: str  # the one named, or the one auto chose
    status: str = "done"  # done / stopped / flaky (runs on one module disagreed: no kernel)
    stop_reason: str | None = None
    differing: list[str] = field(default_factory=list)  # kernels whose good and bad code differ
    # Kernels that cannot be swapped: the good lowering lacks them, or calls them otherwise.
    unswappable: list[str] = field(default_factory=list)
    kernel: str | None = None  # the kernel whose bad code breaks the check
    candidates: list[str] = field(default_factory=list)  # when no single kernel does
    # Modules checked: the good kernels swapped in, the verdict, the search's or "confirm".
    probes: list[dict[str, Any]] = field(default_factory=list)
    confirmed: bool | None = None  # the kernel's module passed and the bad one failed again
    # Runs on one module that disagreed: its good kernels, what each run said and why.
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    detail: str = ""  # what the check said of the bad compile
    pass_name: str | None = None  # the first pass after which the two sides' kernels differ
    pass_index: int | None = None  # its place among the passes that changed a kernel
    pass_kernels: list[str] = field(default_factory=list)  # kernels differing after it
    diff: str = ""  # good vs bad text of those kernels, after that pass
    tvm: str = ""
    good_tvm: str = ""  # the good side's TVM, when another interpreter's (--python)
    good_python: str | None = None  # that interpreter
    reproduce: str = ""  # commands that reproduce the finding (set on the host side)
    good_choice: str = ""  # why auto chose the good pipeline it did

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FunctionBisection:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
