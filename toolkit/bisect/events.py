"""What a bisection reports as it goes: one typed event per thing that happened.

The commit search (``runner.Bisector``) and the pass search (``passes.PassBisector``) emit
these through a ``toolkit.events.Handler``; they never format a line. ``tk bisect`` renders
them (``toolkit.cli.bisect``); a program that wants the run - to drive a UI, or to assert on
it in a test - passes its own handler and gets these objects, in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.events import Event

# -- the commit search ----------------------------------------------------------------------


@dataclass(frozen=True)
class Window(Event):
    """Before a search probe: where the first bad commit can still be."""

    probe: int  # the number this probe will have among the steps (1-based)
    untested: int  # commits between the good and the bad bound
    good: str  # the latest commit known good
    bad: str  # the earliest commit known bad
    steps_left: int  # probes left at most, by halving


@dataclass(frozen=True)
class StepStarted(Event):
    """A commit is checked out to be built and checked."""

    commit: str
    phase: str  # "good-end", "bad-end", "search" (``confirm`` steps follow ``Confirming``)
    index: int  # its place in the range: 0 is the good end
    total: int  # the index of the bad end


@dataclass(frozen=True)
class BuildStarted(Event):
    """A spare build slot starts building a probe that may come next (prefetch); the step's
    own build in slot 0 is announced by ``StepStarted``."""

    commit: str
    slot: int  # 1..N-1 of ``--parallel N``


@dataclass(frozen=True)
class BuildDone(Event):
    """A build is ready, or could not be made: the step's own (slot 0), or one a spare slot
    built ahead of need (``prefetch``; a later step finds it in the store)."""

    commit: str
    ok: bool
    cache_hit: bool | None  # served from the store; None: nothing to build (the check builds)
    seconds: float
    message: str = ""  # why it failed, one line
    log: str | None = None
    slot: int = 0
    started: float = 0.0  # wall clock (time.time()) when it began: spans show the overlap
    prefetch: bool = False


@dataclass(frozen=True)
class VerdictKnown(Event):
    """The commit's verdict is known from earlier runs of this check on this build: nothing
    is checked out, built or run (a ``Verdict`` follows)."""

    commit: str
    verdict: str
    runs: int  # agreeing runs behind it


@dataclass(frozen=True)
class CheckStarted(Event):
    """The check runs on the built commit (``runs`` times, for flakiness)."""

    commit: str
    check: str  # as the user gave it
    runs: int


@dataclass(frozen=True)
class Verdict(Event):
    """What the probe of one commit decided."""

    commit: str
    phase: str
    verdict: str  # good / bad / skip / stop
    reason: str  # "exit 1", "build failed", "flaky: 1 good, 1 bad in 2 runs", ...


@dataclass(frozen=True)
class Confirming(Event):
    """The answer is probed once more: its parent should be good and it bad."""

    culprit: str
    parent: str


@dataclass(frozen=True)
class Stopped(Event):
    """The bisection cannot go on without the user (a broken check, ends that disagree)."""

    reason: str


@dataclass(frozen=True)
class Finished(Event):
    """The search is over: one first bad commit, or the candidates skips left."""

    culprit: str | None
    candidates: tuple[str, ...]
    confirmed: bool | None  # None: not confirmed (marked by hand)


# -- the pass search ------------------------------------------------------------------------


@dataclass(frozen=True)
class PassSearchStarted(Event):
    """The workload is compiled with every pass first: the pipeline and the bad end."""

    workload: str
    target: str


@dataclass(frozen=True)
class PrefixProbed(Event):
    """One probe: the workload compiled with only the first ``k`` passes, run and checked."""

    k: int | None  # None: every pass
    status: str  # good / bad / no-compile
    detail: str
    seconds: float


@dataclass(frozen=True)
class RequiredRemembered(Event):
    """Passes learned as required by an earlier pass bisection on the same TVM."""

    tvm: str
    passes: tuple[str, ...]


@dataclass(frozen=True)
class RequiredLearned(Event):
    """Without ``name`` the prefix ``k`` does not compile: it always runs from now on."""

    name: str
    k: int


@dataclass(frozen=True)
class PassesListed(Event):
    """The pipeline's passes are known; the search starts from none but the required ones."""

    count: int


@dataclass(frozen=True)
class PassWindow(Event):
    """Before a search probe: the prefix lengths the first bad pass lies between."""

    lo: int
    hi: int
    steps_left: int
    trying: int


@dataclass(frozen=True)
class PassConfirming(Event):
    """The search ended at prefix ``k``: it and ``k - 1`` are probed again, twice each."""

    k: int
