"""The search, verdicts and step loop with injected runs (no processes, no builds)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from toolkit.bisect import events as ev
from toolkit.bisect import search
from toolkit.bisect import verdicts as v
from toolkit.bisect.protocol import BAD, GOOD, SKIP, STOP
from toolkit.bisect.runner import (
    Bisector,
    BisectStopped,
    BuildResult,
    Prefetcher,
    prefetch_slots,
)
from toolkit.bisect.state import BisectState, load
from toolkit.bisect.verdicts import VerdictCache
from toolkit.builds.recipes import Request

COMMITS = [f"{i:040x}" for i in range(65)]  # 0 good .. 64 bad


def make_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kw) -> BisectState:
    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir(parents=True, exist_ok=True)
    return BisectState(source=str(src), good=COMMITS[0], bad=COMMITS[-1], commits=COMMITS,
                       check=["check"], check_display="check", **kw)


class World:
    """A history where commit ``culprit`` broke the check; builds keyed like the store.
    Builds may come from spare slots' threads: the store they fill is shared, as the real
    one is."""

    def __init__(self, culprit: int, unbuildable=(), flaky=(), untestable=(), rc_bad=1,
                 same_build=None):
        self.culprit = culprit
        self.unbuildable = set(unbuildable)
        self.flaky = set(flaky)
        self.untestable = set(untestable)
        self.rc_bad = rc_bad
        self.same_build = same_build or (lambda i: i)  # index -> build key
        self.built: set[int] = set()
        self.builds = 0
        self.runs: list[int] = []
        self.calls: dict[int, int] = {}
        self.lock = threading.Lock()
        self.build_seconds = 0.0  # how long a build that is not stored takes

    def checkout(self, sha: str) -> None:
        self.at = COMMITS.index(sha)

    def build(self, sha: str) -> BuildResult:
        i = COMMITS.index(sha)
        if i in self.unbuildable:
            return BuildResult(ok=False, message="error: expected expression")
        key = self.same_build(i)
        with self.lock:
            hit = key in self.built
            if not hit:
                self.builds += 1
        if not hit:
            time.sleep(self.build_seconds)
            with self.lock:
                self.built.add(key)
        return BuildResult(ok=True, cache_hit=hit, key=str(key), seconds=0 if hit else 5)

    def cached(self, sha: str) -> bool:
        return self.same_build(COMMITS.index(sha)) in self.built

    def test_run(self, sha: str, env) -> v.Outcome:
        i = COMMITS.index(sha)
        assert env["TK_BISECT_COMMIT"] == sha
        self.runs.append(i)
        self.calls[i] = self.calls.get(i, 0) + 1
        if i in self.untestable:
            return v.Outcome(125)
        if i in self.flaky:
            return v.Outcome(self.calls[i] % 2)
        return v.Outcome(self.rc_bad if i >= self.culprit else 0)

    def bisector(self, st: BisectState, events=lambda e: None,
                 verdicts: VerdictCache | None = None) -> Bisector:
        return Bisector(st, checkout=self.checkout, build=self.build, test_run=self.test_run,
                        cached=self.cached, verdicts=verdicts, events=events,
                        identity=lambda sha: str(self.same_build(COMMITS.index(sha))))


def verdict_cache(tmp_path: Path) -> VerdictCache:
    """Known verdicts keyed by commit alone (the world's builds and trees are its commits)."""
    return VerdictCache(lambda sha: sha, tmp_path / "verdicts")


def test_classify_modes():
    assert v.classify(v.Outcome(0)).value == GOOD
    assert v.classify(v.Outcome(3)).value == BAD
    assert v.classify(v.Outcome(125)).value == SKIP
    assert v.classify(v.Outcome(127)).value == STOP
    assert v.classify(v.Outcome(126), "success").value == STOP
    assert v.classify(v.Outcome(0), "success").value == BAD
    assert v.classify(v.Outcome(1), "success").value == GOOD
    assert v.classify(v.Outcome(1), "crash").value == GOOD
    assert v.classify(v.Outcome(-11), "crash").value == BAD
    assert v.classify(v.Outcome(139), "crash").value == BAD
    assert v.classify(v.Outcome(0, "x\nInternalError: boom\n"), "match:^InternalError").value \
        == BAD
    assert v.classify(v.Outcome(1, "fine"), "match:InternalError").value == GOOD
    assert v.classify(v.Outcome(None, timed_out=True)).value == SKIP
    assert v.classify(v.Outcome(None, timed_out=True), timeout="bad").value == BAD
    flaky = v.combine([v.Verdict(GOOD, "exit 0"), v.Verdict(BAD, "exit 1")])
    assert flaky.value == SKIP and "flaky" in flaky.reason


def test_parse_regress_rejects_garbage():
    from toolkit.errors import UserError

    assert v.parse_regress("match:a+") == "match:a+"
    with pytest.raises(UserError):
        v.parse_regress("segfault")
    with pytest.raises(UserError):
        v.parse_regress("match:(")


@pytest.mark.parametrize("culprit", [1, 2, 17, 33, 63, 64])
def test_finds_culprit_with_few_builds(tmp_path, monkeypatch, culprit):
    st = make_state(tmp_path, monkeypatch)
    world = World(culprit)
    world.bisector(st).run()
    assert st.culprit == COMMITS[culprit]
    assert st.confirmed is True
    assert world.builds <= 7 + (culprit == 64)  # the good end + log2(64) (+ the bad end)
    assert st.steps[0].phase == "good-end"
    # The bad end is probed only when the answer is next to it.
    assert ("bad-end" in [s.phase for s in st.steps]) == (culprit == 64)
    assert [s.phase for s in st.steps[-2:]] == ["confirm", "confirm"]
    assert all(s.cache_hit for s in st.steps[-2:])  # confirmation rebuilt nothing


def test_prefers_stored_build_near_midpoint(tmp_path, monkeypatch):
    # Commits 30..34 share one build (Python-only changes); 30 is already stored.
    world = World(40, same_build=lambda i: 30 if 30 <= i <= 34 else i)
    world.built.add(30)
    marks = {COMMITS[0]: GOOD, COMMITS[64]: BAD}
    assert search.next_probe(COMMITS, marks, world.cached) in range(30, 35)
    assert search.next_probe(COMMITS, marks) == 32


def test_skips_and_unbuildable_range(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(20, unbuildable=range(18, 23))
    world.bisector(st).run()
    assert st.culprit is None
    assert st.culprit_candidates == COMMITS[18:24]  # 23 tested bad: it may be it
    assert {s.reason for s in st.steps if s.verdict == SKIP} == {"build failed"}


def test_unbuildable_are_bad_when_told(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch, build_failure="bad")
    world = World(20, unbuildable=range(18, 23))
    world.bisector(st).run()
    assert st.culprit == COMMITS[18]


def test_flaky_commit_is_skipped_not_believed(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch, count=2)
    world = World(40, flaky={32})
    world.bisector(st).run()
    assert st.culprit == COMMITS[40]
    flaky = [s for s in st.steps if s.commit == COMMITS[32]]
    assert flaky and flaky[0].verdict == SKIP and flaky[0].reason.startswith("flaky")
    assert world.calls[40] >= 2


def test_command_not_found_stops_and_resumes(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(10, rc_bad=127)
    with pytest.raises(BisectStopped, match="not found"):
        world.bisector(st).run()
    saved = load(Path(st.source))
    assert saved.status == "stopped" and "127" in saved.stop_reason
    assert COMMITS[64] not in saved.marks  # the broken check did not poison the search
    world.rc_bad = 1  # the user fixed the check
    world.bisector(saved).run()
    assert saved.culprit == COMMITS[10]


def test_ends_are_checked_first(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(0)  # the "good" end is already bad
    with pytest.raises(BisectStopped, match="good end"):
        world.bisector(st).run()
    assert world.runs == [0]


def test_a_bad_end_that_is_good_stops_once_the_search_reaches_it(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(65)  # nothing in the range is bad
    with pytest.raises(BisectStopped, match="bad end"):
        world.bisector(st).run()
    assert world.runs[0] == 0 and world.runs[-1] == 64
    assert len(world.runs) == 1 + 6 + 1  # the good end, the search, the bad end


def test_interrupted_search_resumes_from_saved_state(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(45)
    seen = []

    def handler(event):
        seen.append(event)
        if len(st.steps) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        world.bisector(st, handler).run()
    saved = load(Path(st.source))
    assert len(saved.steps) == 4
    before = list(world.runs)
    world.bisector(saved).run()
    assert saved.culprit == COMMITS[45]
    assert not set(world.runs[len(before):]) & {COMMITS.index(s.commit) for s in saved.steps[:4]
                                                 if s.phase == "search"}


def test_manual_marks(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(5)
    b = world.bisector(st)
    nxt = b.mark(COMMITS[0], GOOD)
    while nxt is not None:
        nxt = b.mark(COMMITS[nxt], BAD if nxt >= 5 else GOOD)
    assert st.culprit == COMMITS[5] and st.status == "done"


def test_run_check_timeout_missing_and_not_executable(tmp_path):
    from toolkit.bisect.runner import run_check

    out = run_check(["sh", "-c", "sleep 30 & sleep 30"], {"PATH": "/usr/bin:/bin"}, tmp_path, 0.5)
    assert out.timed_out and v.classify(out).value == SKIP
    assert run_check(["no-such-check-xyz"], {}, tmp_path, None).returncode == 127
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    assert run_check([str(script)], {}, tmp_path, None).returncode == 126
    assert run_check(["sh", "-c", "echo hi; exit 3"], {"PATH": "/usr/bin:/bin"}, tmp_path,
                     None) == v.Outcome(3, "hi\n", pytest.approx(0, abs=5))


def test_a_run_reaches_its_handler_as_typed_events(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    world = World(10, unbuildable={16})
    seen: list[ev.Event] = []
    world.bisector(st, seen.append).run()
    kinds = [type(e) for e in seen]
    # The good end first, built then checked then judged; the search; confirmation; the end.
    assert kinds[:4] == [ev.StepStarted, ev.BuildDone, ev.CheckStarted, ev.Verdict]
    assert seen[0] == ev.StepStarted(COMMITS[0], "good-end", 0, 64)
    assert seen[3] == ev.Verdict(COMMITS[0], "good-end", GOOD, "exit 0")
    assert seen[4] == ev.Window(2, 63, COMMITS[0], COMMITS[64], 6)
    assert kinds[-1] is ev.Finished
    assert seen[-1] == ev.Finished(COMMITS[10], (COMMITS[10],), True)
    # One Verdict per recorded step, the same verdicts the state records.
    verdicts = [(e.commit, e.phase, e.verdict, e.reason) for e in seen
                if isinstance(e, ev.Verdict)]
    assert verdicts == [(s.commit, s.phase, s.verdict, s.reason) for s in st.steps]
    # Each search probe follows the window it narrows.
    windows = [e for e in seen if isinstance(e, ev.Window)]
    assert [w.probe for w in windows] == list(range(2, 2 + len(windows)))
    assert all(w.untested > later.untested for w, later in zip(windows, windows[1:]))
    confirming = seen.index(ev.Confirming(COMMITS[10], COMMITS[9]))
    assert [e.commit for e in seen[confirming:] if isinstance(e, ev.Verdict)] == \
        [COMMITS[9], COMMITS[10]]
    # A commit that does not build is judged without a check run.
    at = seen.index(ev.StepStarted(COMMITS[16], "search", 16, 64))
    failed = seen[at + 1]
    assert isinstance(failed, ev.BuildDone) and failed.started > 0
    assert (failed.commit, failed.ok, failed.message, failed.slot, failed.prefetch) == \
        (COMMITS[16], False, "error: expected expression", 0, False)
    assert seen[at + 2] == ev.Verdict(COMMITS[16], "search", SKIP, "build failed")
    assert all(isinstance(e, ev.Event) for e in seen)


def test_a_stopped_run_says_why_as_an_event(tmp_path, monkeypatch):
    st = make_state(tmp_path, monkeypatch)
    seen: list[ev.Event] = []
    with pytest.raises(BisectStopped):
        World(10, rc_bad=127).bisector(st, seen.append).run()
    assert isinstance(seen[-1], ev.Stopped) and seen[-1].reason == st.stop_reason
    assert not any(isinstance(e, ev.Finished) for e in seen)


def test_a_second_bisection_runs_nothing_it_knows(tmp_path, monkeypatch):
    first = make_state(tmp_path, monkeypatch)
    world = World(41)
    world.bisector(first, verdicts=verdict_cache(tmp_path)).run()
    assert first.confirmed is True and not any(s.known for s in first.steps)
    ran = len(world.runs)

    again = make_state(tmp_path / "again", monkeypatch)
    seen = []
    world.bisector(again, seen.append, verdicts=verdict_cache(tmp_path)).run()
    assert again.culprit == COMMITS[41] and again.confirmed is True
    assert len(world.runs) == ran  # no check ran, confirmation included
    assert all(s.known for s in again.steps)
    assert sum(isinstance(e, ev.VerdictKnown) for e in seen) == len(again.steps)
    assert not any(isinstance(e, ev.BuildDone) for e in seen)  # nothing built either


def test_known_verdicts_need_as_many_runs_as_asked(tmp_path, monkeypatch):
    world = World(41)
    world.bisector(make_state(tmp_path, monkeypatch), verdicts=verdict_cache(tmp_path)).run()
    ran = len(world.runs)
    # --count 3 asks for three agreeing runs: one (or two, confirmed) is not enough.
    st = make_state(tmp_path / "three", monkeypatch, count=3)
    world.bisector(st, verdicts=verdict_cache(tmp_path)).run()
    assert st.culprit == COMMITS[41]
    assert len(world.runs) > ran and not all(s.known for s in st.steps)


def test_a_flaky_verdict_is_never_kept_as_firm(tmp_path, monkeypatch):
    cache = verdict_cache(tmp_path)
    world = World(40, flaky={32})
    world.bisector(make_state(tmp_path, monkeypatch, count=2), verdicts=cache).run()
    assert cache.lookup(COMMITS[32], 1) is None
    calls = world.calls[32]
    st = make_state(tmp_path / "again", monkeypatch, count=2)
    world.bisector(st, verdicts=cache).run()
    assert world.calls[32] > calls  # probed again, not believed
    assert [s.verdict for s in st.steps if s.commit == COMMITS[32]] == [SKIP]
    # A single run that disagrees with a kept verdict spoils it for good.
    cache.add(COMMITS[5], GOOD, "exit 0", [0], "")
    cache.add(COMMITS[5], BAD, "exit 1", [1], "")
    cache.add(COMMITS[5], GOOD, "exit 0", [0], "")
    assert cache.lookup(COMMITS[5], 1) is None
    # Skips and timeouts teach nothing.
    cache.add(COMMITS[6], SKIP, "timed out", [None], "")
    assert cache.lookup(COMMITS[6], 1) is None


def test_ahead_is_the_next_probe_either_way_then_theirs():
    marks = {COMMITS[0]: GOOD}
    assert search.ahead(COMMITS, marks, 32, 2) == [48, 16]  # 32 good: 48 next; bad: 16
    assert search.ahead(COMMITS, marks, 32, 6) == [48, 16, 56, 40, 24, 8]
    # The good end: bad, it leaves nothing to probe; good, the midpoint, then what follows it.
    assert search.ahead(COMMITS, {}, 0, 2) == [32, 48]
    assert search.ahead(COMMITS, {COMMITS[31]: GOOD, COMMITS[33]: BAD}, 32, 2) == []


def test_prefetch_rule():
    assert prefetch_slots(2, 0.0) == 0  # 2 cores: the step's build and check fill them
    assert prefetch_slots(4, 1.5) == 1
    assert prefetch_slots(4, 2.5) == 0  # busy: fewer than 2 idle cores
    assert prefetch_slots(16, 3.0) == 1


def test_builds_on_a_remote_engine_get_a_spare_slot_on_any_machine(tmp_path, monkeypatch):
    from toolkit.bisect import session

    monkeypatch.setattr(session.os, "cpu_count", lambda: 2)  # no spare core here
    docker = make_state(tmp_path, monkeypatch, request=Request(backend="docker"))
    native = make_state(tmp_path, monkeypatch)
    monkeypatch.setenv("DOCKER_HOST", "tcp://build-farm:2376")
    assert (session.slots(docker), session.slots(native)) == (2, 1)
    monkeypatch.setenv("DOCKER_HOST", "unix:///var/run/docker.sock")  # this machine builds
    assert session.slots(docker) == 1
    docker.parallel = 4
    assert session.slots(docker) == 4


def python_only(i: int) -> int:
    """Every third commit touches only Python: it shares its parent's build."""
    return i - 1 if i % 3 == 0 and i else i


@pytest.mark.parametrize("culprit", [5, 41, 64])
@pytest.mark.parametrize("same_build", [None, python_only])
def test_spare_slots_build_ahead_without_more_check_runs(tmp_path, monkeypatch, culprit,
                                                         same_build):
    alone = World(culprit, same_build=same_build)
    alone.bisector(make_state(tmp_path / "alone", monkeypatch)).run()

    st = make_state(tmp_path / "slots", monkeypatch)
    world = World(culprit, same_build=same_build)
    world.build_seconds = 0.1  # long enough for the slots' builds to overlap slot 0's
    b = world.bisector(st)
    b.prefetch = Prefetcher([world.build, world.build], needed=lambda sha: not world.cached(sha))
    b.run()
    assert st.culprit == COMMITS[culprit] and st.confirmed is True
    # Builds made ahead never steer the search: the same probes, so the same check runs.
    assert world.runs == alone.runs
    ahead = [s for s in st.builds if s.prefetch]
    assert ahead and {s.slot for s in ahead} <= {1, 2}
    assert {s.slot for s in st.builds if not s.prefetch} <= {0}
    # Builds ran at the same time: some span starts before another has ended.
    spans = sorted((s.started, s.started + s.seconds) for s in st.builds)
    assert any(b0 < a1 for (_, a1), (b0, _) in zip(spans, spans[1:]))
    # Each probe built ahead was served by the store when its step came.
    probed = {s.commit for s in st.steps}
    for s in ahead:
        if s.commit in probed:
            step = next(x for x in st.steps if x.commit == s.commit)
            assert step.cache_hit is True
