"""One bisection step after another: check out, build through the store, check, decide.

``Bisector`` drives the search over a ``BisectState``. Its three effects - check out a
commit, build it, run the check - are plain callables, so the whole loop (ends first,
skips, flakiness, stop on 126/127, confirmation) is tested with injected functions the way
Go's ``cmd/bisect`` injects ``TestRun``; ``open_bisector`` wires the real ones.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import events as ev
from toolkit.bisect import events, search
from toolkit.bisect import verdicts as v
from toolkit.bisect.protocol import (
    BAD,
    BISECT_COMMIT,
    BISECT_DIR,
    BISECT_PHASE,
    CHECK_NOT_EXECUTABLE,
    CHECK_NOT_FOUND,
    GOOD,
    SKIP,
    STOP,
)
from toolkit.bisect.state import BisectState, BuildSpan, Step
from toolkit.bisect.verdicts import VerdictCache
from toolkit.bisect.worktree import Untestable
from toolkit.errors import TkError
from toolkit.process import kill_group, own_group

if TYPE_CHECKING:
    from concurrent.futures import Future


@dataclass
class BuildResult:
    ok: bool
    env: dict[str, str] = field(default_factory=dict)  # the build's environment for the check
    cache_hit: bool = False
    key: str | None = None
    seconds: float = 0.0
    log: str | None = None
    message: str = ""  # why it failed, one line
    started: float = 0.0  # wall clock (time.time()) when it began


Checkout = Callable[[str], None]
Build = Callable[[str], BuildResult]
TestRun = Callable[[str, Mapping[str, str]], v.Outcome]  # (sha, env) -> outcome
# A spare build slot: checks a commit out in the slot's own worktree and builds it in the
# slot's own build directory, through the store (where the step's build then finds it).
Slot = Callable[[str], BuildResult]


def prefetch_slots(cpus: int, load: float) -> int:
    """Spare build slots when ``--parallel`` is not given: the rule the CLI documents.

    One spare slot builds the probe that may come next while the step's own build and check
    run, when the machine has a core for it that nothing else wants: at least 4 cores, and a
    1-minute load average that leaves 2 of them idle. On 2 cores the step's build (Ninja runs
    a job per core) and then the check already take the machine, and a speculative build
    would slow the step it is meant to get ahead of: there, prefetch is off unless
    ``--parallel N`` asks for slots.
    """
    return 1 if cpus >= 4 and cpus - load >= 2 else 0


class Prefetcher:
    """Spare build slots (1..N-1 of ``--parallel N``) building the probes that may come next
    (``search.ahead``) while slot 0 builds and checks the current one.

    Each slot's build runs in a thread (it waits on CMake and Ninja, sharing ccache with the
    others). Results are taken in on the bisection's own thread - ``settle`` before a step
    builds, ``close`` at the end - so events go through the one handler in order and the
    state is written by one thread.
    """

    def __init__(self, slots: Sequence[Slot], needed: Callable[[str], bool]) -> None:
        self.slots = list(slots)
        self.needed = needed  # neither stored nor known: worth building ahead
        self.idle = list(range(1, len(self.slots) + 1))
        # Here, not at the top: a run with one build slot (or every verdict known) never
        # starts a thread, and concurrent.futures is a good part of a bisect process's start.
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=max(1, len(self.slots)),
                                       thread_name_prefix="tk-bisect-slot")
        self.running: dict[str, tuple[int, Future[BuildResult]]] = {}
        self.asked: set[str] = set()  # every commit a slot was given

    @property
    def width(self) -> int:
        return len(self.slots)

    def want(self, shas: Iterable[str], handler: ev.Handler) -> None:
        """Start building as many of ``shas`` (likeliest first) as there are idle slots."""
        for sha in shas:
            if not self.idle:
                return
            if sha in self.running or not self.needed(sha):
                continue
            slot = self.idle.pop(0)
            self.asked.add(sha)
            self.running[sha] = (slot, self.pool.submit(self._build, slot, sha))
            handler(events.BuildStarted(sha, slot))

    def _build(self, slot: int, sha: str) -> BuildResult:
        started = time.time()
        try:
            result = self.slots[slot - 1](sha)
        except Exception as e:  # noqa: BLE001 - a speculative build never stops the search
            result = BuildResult(ok=False, message=f"{type(e).__name__}: {e}"[:300],
                                 seconds=time.time() - started)
        result.started = started
        return result

    def settle(self, sha: str) -> list[tuple[str, int, BuildResult]]:
        """Wait for a slot building ``sha``, if one is; every build finished so far."""
        if sha in self.running:
            self.running[sha][1].result()
        done = [sha for sha, (_, f) in self.running.items() if f.done()]
        return [self._take(sha) for sha in done]

    def close(self) -> list[tuple[str, int, BuildResult]]:
        """Wait for every build under way (each holds its store entry's lock): all of them."""
        taken = [self._take(sha) for sha in list(self.running)]
        self.pool.shutdown()
        return taken

    def _take(self, sha: str) -> tuple[str, int, BuildResult]:
        slot, future = self.running.pop(sha)
        self.idle.append(slot)
        return sha, slot, future.result()


class BisectStopped(TkError):
    """The bisection cannot go on without the user: a broken check, ends that disagree."""


def run_check(argv: Sequence[str], env: Mapping[str, str], cwd: Path,
              timeout: float | None) -> v.Outcome:
    """Run the check in its own process group, so a timeout kills everything it started.

    Its output goes to a file, not a pipe: a daemon the check leaves behind may hold its
    output open for ever, and waiting for the end of a pipe would wait for the daemon.
    """
    import tempfile  # here: a run whose verdicts are all known runs no check

    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=out,
                                    stderr=subprocess.STDOUT, **own_group())
        except FileNotFoundError:
            return v.Outcome(CHECK_NOT_FOUND, f"{argv[0]}: command not found", 0.0)
        except PermissionError:
            return v.Outcome(CHECK_NOT_EXECUTABLE, f"{argv[0]}: permission denied", 0.0)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            kill_group(proc)  # what the check left running in its group goes with it
        out.seek(0)
        text = out.read().decode(errors="replace")
    seconds = time.perf_counter() - start
    if timed_out:
        return v.Outcome(None, text, seconds, timed_out=True)
    return v.Outcome(proc.returncode, text, seconds)


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


class Bisector:
    def __init__(self, state: BisectState, *, checkout: Checkout, build: Build,
                 test_run: TestRun, cached: Callable[[str], bool] = lambda sha: False,
                 verdicts: VerdictCache | None = None, events: ev.Handler = ev.ignore,
                 prefetch: Prefetcher | None = None,
                 identity: Callable[[str], str] = lambda sha: sha) -> None:
        self.state = state
        self.checkout = checkout
        self.build = build
        self.test_run = test_run
        self.cached = cached
        self.verdicts = verdicts  # verdicts known from earlier runs; None: always run
        self.events = events  # hears toolkit.bisect.events, in the order things happen
        self.prefetch = prefetch  # spare build slots, when there are any
        self.identity = identity  # what a commit's build is: commits alike share one

    def stored(self, sha: str) -> bool:
        """A build the search may prefer near a midpoint: stored, and not only because a
        spare slot built it ahead - a build slot 0 would have made too (a probed commit's)
        counts. Builds made ahead never steer the search, so it probes - and checks -
        exactly what it would without them; they only make its builds come from the store."""
        if not self.cached(sha):
            return False
        if self.prefetch is None or not self.prefetch.asked:
            return True
        build = self.identity(sha)
        return (build not in {self.identity(a) for a in self.prefetch.asked}
                or build in {self.identity(s.commit) for s in self.state.steps})

    def _built(self, sha: str, built: BuildResult, slot: int, prefetch: bool) -> None:
        """Announce a build and keep its span when it ran (the store did not serve it)."""
        self.events(events.BuildDone(sha, built.ok, built.cache_hit, round(built.seconds, 3),
                                     built.message, built.log, slot, built.started, prefetch))
        if built.cache_hit is False or not built.ok:
            self.state.builds.append(BuildSpan(sha, slot, round(built.started, 3),
                                               round(built.seconds, 3), built.ok, prefetch))

    def _take_in(self, finished: list[tuple[str, int, BuildResult]]) -> None:
        for sha, slot, built in finished:
            self._built(sha, built, slot, prefetch=True)

    def probe(self, sha: str, phase: str) -> Step:
        """Build and check one commit ``count`` times, unless that many agreeing runs are
        known already (a confirmation asks for twice as many); the step is not yet recorded."""
        st = self.state
        start = time.perf_counter()
        runs = max(1, st.count)
        if self.verdicts is not None:
            known = self.verdicts.lookup(sha, 2 * runs if phase == "confirm" else runs)
            if known is not None:
                self.events(events.VerdictKnown(sha, known.verdict, known.runs))
                return Step(commit=sha, phase=phase, verdict=known.verdict,
                            reason=f"{known.reason}; known from {known.runs} earlier run"
                                   f"{'s' if known.runs != 1 else ''}",
                            returncodes=known.returncodes, output_tail=known.output_tail,
                            known=True, seconds=round(time.perf_counter() - start, 3))
        try:
            self.checkout(sha)
        except Untestable as e:
            if phase in ("good-end", "bad-end"):
                raise  # the range cannot be bisected here: one line, exit 2
            return Step(commit=sha, phase=phase, verdict=SKIP, reason=str(e),
                        seconds=round(time.perf_counter() - start, 3))
        st.current = sha
        waiting = time.perf_counter()
        if self.prefetch is not None:
            self._take_in(self.prefetch.settle(sha))  # a slot building it: the store has it
        started = time.time()
        built = self.build(sha)
        built.started = started
        self._built(sha, built, 0, prefetch=False)
        # The time the step waited for its build: building it, or a slot finishing it.
        step = Step(commit=sha, phase=phase, verdict=SKIP, reason="",
                    build_seconds=round(time.perf_counter() - waiting, 3),
                    cache_hit=built.cache_hit,
                    build_key=built.key, log=built.log)
        if not built.ok:
            verdict = v.build_failed(st.build_failure)
            step.output_tail = built.message
        else:
            self.events(events.CheckStarted(sha, st.check_display, max(1, st.count)))
            env = {**built.env, BISECT_COMMIT: sha, BISECT_PHASE: phase,
                   BISECT_DIR: str(st.directory)}
            verdicts = []
            for _ in range(max(1, st.count)):
                outcome = self.test_run(sha, env)
                step.returncodes.append(outcome.returncode)
                step.output_tail = tail(outcome.output)
                one = v.classify(outcome, st.regress, st.on_timeout)
                verdicts.append(one)
                if one.value == STOP:
                    break
            verdict = v.combine(verdicts)
            if self.verdicts is not None:
                if len({one.value for one in verdicts}) > 1:
                    self.verdicts.spoil(sha, verdict.reason)
                else:
                    self.verdicts.add(sha, verdict.value, verdict.reason, step.returncodes,
                                      step.output_tail)
            if verdict.value != GOOD and outcome.output.strip():
                from toolkit.explain import best  # a known failure in what the check said

                finding = best(outcome.output)
                if finding is not None:
                    verdict = v.Verdict(verdict.value, f"{verdict.reason}; {finding.title}")
        step.verdict, step.reason = verdict.value, verdict.reason
        step.seconds = round(time.perf_counter() - start, 3)
        return step

    def _stop(self, reason: str) -> None:
        self.state.status = "stopped"
        self.state.stop_reason = reason
        self.state.save()
        self.events(events.Stopped(reason))
        raise BisectStopped(reason)

    def _step(self, sha: str, phase: str) -> Step:
        st = self.state
        self.events(events.StepStarted(sha, phase, st.commits.index(sha), len(st.commits) - 1))
        step = self.probe(sha, phase)
        st.record(step)
        self.events(events.Verdict(sha, phase, step.verdict, step.reason))
        if step.verdict == STOP:
            self._stop(f"{sha[:10]}: {step.reason}")
        return step

    def _end(self, sha: str, phase: str, want: str) -> None:
        """Probe an end of the range; one that is not what the user said stops the search."""
        if self.state.marks.get(sha) == want:
            return
        step = self._step(sha, phase)
        if step.verdict != want:
            self._stop(f"the {want} end {sha[:10]} is {step.verdict} ({step.reason}), "
                       f"not {want}: check the range and the check, then start again")

    def run(self) -> BisectState:
        """Search until the first bad commit is known (or stop); resumable at any point.

        The good end is probed first: some commit has to be built in full before any
        incremental build, and a check that fails everywhere (the common mistake) stops
        there. The bad end is probed only when the answer is next to it (every probe was
        good): anywhere else a probed bad commit above a probed good one already proves the
        range has the change, and the confirmation re-checks the answer and its parent.
        """
        st = self.state
        if st.status == "done":
            return st
        st.status, st.stop_reason = "running", None
        st.save()
        try:
            self._ahead(0)
            self._end(st.good, "good-end", GOOD)
            while (i := search.next_probe(st.commits, st.marks, self.stored)) is not None:
                b = search.bounds(st.commits, st.marks)
                self.events(events.Window(len(st.steps) + 1, len(b.candidates),
                                          st.commits[b.lo], st.commits[b.hi], b.steps_left))
                self._ahead(i)
                self._step(st.commits[i], "search")
            if st.bad in search.answer(st.commits, st.marks):
                self._end(st.bad, "bad-end", BAD)
            self.finish(confirm=True)
        except KeyboardInterrupt:
            st.status, st.stop_reason = "interrupted", "interrupted: 'tk bisect run' continues"
            st.save()
            raise
        finally:
            if self.prefetch is not None:
                self._take_in(self.prefetch.close())
                st.save()
        return st

    def _ahead(self, i: int) -> None:
        """Spare slots start on the probes that may follow probe ``i``."""
        if self.prefetch is not None:
            st = self.state
            nxt = search.ahead(st.commits, st.marks, i, self.prefetch.width, self.stored)
            self.prefetch.want([st.commits[j] for j in nxt], self.events)

    def finish(self, confirm: bool) -> None:
        st = self.state
        found = search.answer(st.commits, st.marks)
        if not found:
            return
        st.culprit_candidates = found
        st.culprit = found[0] if len(found) == 1 else None
        if st.culprit and confirm:
            parent = st.commits[st.commits.index(st.culprit) - 1]
            self.events(events.Confirming(st.culprit, parent))
            got = {}
            for sha in (parent, st.culprit):
                step = self.probe(sha, "confirm")
                st.steps.append(step)
                if not step.known:
                    st.save()
                got[sha] = step.verdict
                self.events(events.Verdict(sha, "confirm", step.verdict, step.reason))
            st.confirmed = got[parent] == GOOD and got[st.culprit] == BAD
        st.status = "done"
        st.save()
        self.events(events.Finished(st.culprit, tuple(found),
                                    st.confirmed if confirm else None))

    def mark(self, sha: str, value: str) -> int | None:
        """A verdict given by hand; returns the index of the next commit to test, if any."""
        st = self.state
        st.record(Step(commit=sha, phase="manual", verdict=value, reason="marked by hand"))
        nxt = search.next_probe(st.commits, st.marks, self.stored)
        if nxt is None:
            self.finish(confirm=False)
        return nxt
