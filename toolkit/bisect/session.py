"""Starting, opening and ending a bisection of one repository: the library under the CLI."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit import events as ev
from toolkit.bisect import checks, search, verdicts
from toolkit.bisect import state as states
from toolkit.bisect.state import BisectState, Stack
from toolkit.bisect.verdicts import VerdictCache, check_identity
from toolkit.bisect.worktree import (
    Repo,
    Worktree,
    commit_range,
    open_repo,
    resolve,
    toplevel,
    uninitialised,
)
from toolkit.builds.recipes import Request
from toolkit.errors import TkError, UserError
from toolkit.paths import cache_root
from toolkit.process import with_toolkit

if TYPE_CHECKING:
    from toolkit.bisect.runner import Bisector, BuildResult, Slot

# The runner (and the artifacts' builders) are imported where a bisection runs: 'tk bisect
# start' and the other quick commands never load them.


def source_of(source: Path | None) -> Path:
    return toplevel(source or Path.cwd())


def start(source: Path, good: str, bad: str, check: Sequence[str], *, regress: str = "error",
          build_failure: str | None = None, timeout: float | None = None,
          on_timeout: str = "skip", count: int = 1,
          request: Request | None = None, build_cmd: str | None = None,
          no_build: bool = False, recheck: bool = False,
          parallel: int | None = None, stack: Stack | None = None,
          check_tree: Path | None = None) -> BisectState:
    """Validate everything first, so a mistake changes nothing; then save the new state.

    ``stack``: patches applied on top of every commit probed (``tk bisect upstream``);
    ``check_tree``: where a check naming a script of the tree finds it (default: ``source``).
    """
    root = source_of(source)
    repo = open_repo(root)
    if states.load(root) is not None:
        raise UserError(f"a bisection of {root} is already in progress: 'tk bisect run' to "
                        "continue it, 'tk bisect reset' to drop it")
    good_sha = resolve(repo, good, "good")
    bad_sha = resolve(repo, bad, "bad")
    commits = commit_range(repo, good_sha, bad_sha)
    argv, display = checks.resolve(check, check_tree or root)
    from toolkit.bisect.artifacts import choose_command

    build_command = choose_command(repo, bad_sha, build_cmd, no_build)
    regress = verdicts.parse_regress(regress)
    if count < 1:
        raise UserError("--count must be at least 1")
    if parallel is not None and parallel < 1:
        raise UserError("--parallel must be at least 1")
    if parallel and parallel > 1 and build_command is not None:
        raise UserError("--parallel builds through tk build's artifact store (TVM trees): "
                        "with --build-cmd or --no-build each step builds in one directory")
    if build_failure is None:
        # A build-only check asks "does it build?": then a failed build is the answer.
        build_failure = "bad" if display.split()[0] == "build-only" else "skip"
    st = BisectState(source=str(root), good=good_sha, bad=bad_sha, commits=commits,
                     check=argv, check_display=display, regress=regress,
                     build_failure=build_failure, timeout=timeout, on_timeout=on_timeout,
                     count=count, request=request or Request(),
                     build_command=build_command, recheck=recheck, parallel=parallel,
                     submodules_left=uninitialised(repo, [good_sha, bad_sha]), stack=stack)
    st.save()
    return st


def current(source: Path | None) -> BisectState:
    root = source_of(source)
    st = states.load(root)
    if st is None:
        raise UserError(f"no bisection in progress for {root}: start one with "
                        "'tk bisect start --good REV --bad REV --check CMD'")
    return st


@contextlib.contextmanager
def locked(st: BisectState) -> Iterator[None]:
    """One process drives a bisection at a time (a resumed run must not race a stale one)."""
    st.directory.mkdir(parents=True, exist_ok=True)
    with open(st.directory / "lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"another tk bisect is working on {st.source} right now") from None
        yield


def reset(source: Path | None) -> Path:
    """Remove the worktree and the state - nothing else (the store keeps its builds). Works on
    a state that cannot be read (corrupt, or written by another tk): its place is known."""
    root = source_of(source)
    directory = states.state_dir(root)
    if not directory.exists():
        current(root)  # no bisection: says how to start one
    lock = directory / "lock"
    with open(lock, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"another tk bisect is working on {root} right now") from None
        repo = open_repo(root)
        for path in [directory / "worktree", *sorted(directory.glob("slot-*/worktree"))]:
            Worktree(repo, path).remove()  # the spare build slots' too
        shutil.rmtree(directory)
    return root


def check_env(build_env: dict[str, str]) -> dict[str, str]:
    """The step's environment: the user's, then the build's; tk stays importable for the
    ready-made checks (after the build's own paths, so the TVM under test wins)."""
    return with_toolkit({**os.environ, **build_env})


def slots(st: BisectState) -> int:
    """Build slots: ``--parallel N``, else 1 plus the spare one ``prefetch_slots`` allows
    (always, when the builds run on a remote Docker engine)."""
    if st.parallel:
        return st.parallel
    if st.build_command is not None:
        return 1  # no store: a build in another directory would not serve the step
    if not builds_here(st):
        return 2  # builds run on an engine elsewhere: this machine's cores only check
    from toolkit.bisect.runner import prefetch_slots

    return 1 + prefetch_slots(os.cpu_count() or 1, os.getloadavg()[0])


def bisector(st: BisectState, events: ev.Handler = ev.ignore, prefetch: bool = True,
             worktree: Path | None = None) -> Bisector:
    """The bisection's runner, its effects wired: checkout in ``worktree`` (default: the
    bisection's own), builds through the store (spare slots building ahead when
    ``prefetch``), the verdicts already known."""
    from toolkit.bisect import artifacts as builds
    from toolkit.bisect.runner import Bisector, Prefetcher, run_check

    repo = open_repo(Path(st.source))
    wt = Worktree(repo, worktree or st.worktree)
    n = slots(st) if prefetch else 1
    # Slots share the cores: each Ninja gets its part of them (ccache is shared). Slots
    # building on a Docker engine elsewhere use that machine's cores.
    jobs = max(1, (os.cpu_count() or 1) // n) if n > 1 and builds_here(st) else None
    builder = builds.builder_for(st, repo, wt.path, events, jobs=jobs)
    verdicts = None if st.recheck else verdict_cache(st, repo, builder)
    checkout, builder = stacked(st, repo, wt, builder)
    if st.stack is not None and verdicts is not None:
        from toolkit.bisect.patches import StackedVerdicts

        verdicts = StackedVerdicts(verdicts, stacks_of(st, repo))
    spare = None
    if n > 1:
        runs = max(1, st.count)
        spare = Prefetcher(
            [slot_builder(st, k, jobs) for k in range(1, n)],
            needed=lambda sha: not builder.cached(sha) and (
                verdicts is None or verdicts.lookup(sha, runs) is None))
    def test_run(sha: str, env: dict[str, str]) -> verdicts.Outcome:
        with builder.in_use(sha):
            return run_check(st.check, check_env(dict(env)), wt.path, st.timeout)

    return Bisector(
        st, checkout=checkout, build=builder.build, cached=builder.cached,
        test_run=test_run, verdicts=verdicts, events=events, prefetch=spare,
        identity=builder.identity,
    )


def builds_here(st: BisectState) -> bool:
    if st.request.backend != "docker":
        return True
    from toolkit.builds import image

    return image.shares_files()


def slot_builder(st: BisectState, k: int, jobs: int | None) -> Slot:
    """Spare slot ``k``: its own worktree and build directory; its builds go to the store."""
    from toolkit.bisect.artifacts import StoreBuilder

    repo = open_repo(Path(st.source))  # its own: slots run in threads of their own
    # Laid out like slot 0 (a worktree and build directories side by side), so ccache,
    # shared by all, sees the same relative paths from each.
    wt = Worktree(repo, st.directory / f"slot-{k}" / "worktree")
    checkout, builder = stacked(st, repo, wt, StoreBuilder(st, repo, wt.path, jobs=jobs))

    def build(sha: str) -> BuildResult:
        checkout(sha)
        return builder.build(sha)

    return build


def stacked(st: BisectState, repo: Repo, wt: Worktree,
            builder: Any) -> tuple[Callable[[str], None], Any]:
    """The checkout and builder of a step in ``wt``: with a patch stack, every commit probed is
    its base, and what is checked out, built and checked is the commit the stack makes on it
    (``toolkit.bisect.patches``); each worktree replays the stack in itself."""
    if st.stack is None:
        return wt.checkout, builder
    from toolkit.bisect.patches import StackedBuilder

    stacks = stacks_of(st, repo)
    return stacks.checkout(wt), StackedBuilder(builder, stacks)


_STACKS: dict[tuple[str, ...], Any] = {}


def stacks_of(st: BisectState, repo: Repo) -> Any:
    """The one ``patches.Stacks`` of this repository and patch stack in this process (build
    slots' threads share it)."""
    from toolkit.bisect.patches import Stacks

    assert st.stack is not None
    key = (str(cache_root()), repo.common_dir, *st.stack.patches)
    if key not in _STACKS:
        _STACKS[key] = Stacks(Path(repo.common_dir), st.stack.patches)
    return _STACKS[key]


def verdict_cache(st: BisectState, repo: Repo, builder: Any) -> VerdictCache:
    """Verdicts keyed by the build's identity, the commit's tree and the check (all from git
    objects and the state: a known verdict costs no checkout and no build)."""
    check = check_identity(st.check, st.regress, st.timeout, st.on_timeout, Path(st.source))
    keys: dict[str, str] = {}

    def key_of(sha: str) -> str:
        if sha not in keys:
            wanted = [c for c in dict.fromkeys([*st.commits, sha]) if c not in keys]
            trees = repo.git("rev-parse", *(f"{c}^{{tree}}" for c in wanted)).split()
            for commit, tree in zip(wanted, trees, strict=True):
                keys[commit] = hashlib.sha256(
                    f"{builder.identity(commit)}\0{tree}\0{check}".encode()).hexdigest()[:32]
        return keys[sha]

    return VerdictCache(key_of)


def run(st: BisectState, events: ev.Handler = ev.ignore) -> BisectState:
    """Search to the end, or on from where an interrupted run stopped."""
    with locked(st):
        built = len(st.builds)
        done = bisector(st, events).run()
    if len(done.builds) > built:
        pack_others(st)
    return done


def pack_others(st: BisectState, keep: str | None = None) -> None:
    """Pack the store's builds nobody uses: a bisection stores its own unpacked (see
    ``driver.build``), and packs once it has them all (in the background, as tk build)."""
    if st.build_command is None:
        from toolkit.builds import gc

        gc.pack_in_background(keep={keep} if keep else set())


def revision(st: BisectState, rev: str | None) -> str:
    """REV resolved in the bisected repository; without one, the commit being tested."""
    if rev:
        return resolve(open_repo(Path(st.source)), rev, "revision")
    if st.current is None:
        raise UserError("nothing checked out yet: give the revision")
    return st.current


def checkout_and_build(st: BisectState, sha: str,
                       events: ev.Handler = ev.ignore) -> BuildResult:
    """Check ``sha`` out in the bisection's worktree and build it through the store."""
    with locked(st):
        b = bisector(st, events, prefetch=False)
        b.checkout(sha)
        built = b.build(sha)
        st.current = sha
        st.save()
    if built.ok and not built.cache_hit:
        pack_others(st, keep=built.key)  # by hand, each build is the one in use next
    return built


def build_env(st: BisectState, rev: str, events: ev.Handler = ev.ignore) -> dict[str, str]:
    """Check out and build REV in the bisection's worktree: the environment of its checks."""
    sha = revision(st, rev)
    built = checkout_and_build(st, sha, events)
    if not built.ok:
        raise TkError(f"{sha[:10]} does not build: {built.message}")
    return check_env(built.env)


def mark(st: BisectState, value: str, rev: str | None) -> str | None:
    """A verdict given by hand on REV (default: the commit being tested). Returns the next
    commit to test, checked out in the worktree, or None when the bisection is done."""
    sha = resolve(open_repo(Path(st.source)), rev, value) if rev else st.current
    if sha is None:
        raise UserError(f"nothing checked out yet: give the revision ('tk bisect {value} REV')")
    if sha not in st.commits:
        raise UserError(f"{rev or sha[:10]} is not in the range being bisected")
    ends = {st.good: "good", st.bad: "bad"}
    if sha in ends and ends[sha] != value:
        raise UserError(f"{rev or sha[:10]} is the {ends[sha]} end of the range: it cannot "
                        f"be {value} (start again with other ends: 'tk bisect reset')")
    with locked(st):
        b = bisector(st, prefetch=False)
        nxt = b.mark(sha, value)
        if nxt is None:
            return None
        b.checkout(st.commits[nxt])
        st.current = st.commits[nxt]
        st.save()
    return st.current


def status(st: BisectState) -> dict[str, Any]:
    """Where the bisection stands: the window, steps left, what it stopped on."""
    b = search.bounds(st.commits, st.marks)
    return {"status": st.status, "source": st.source, "good": st.commits[b.lo],
            "bad": st.commits[b.hi], "untested": len(b.candidates), "skipped": len(b.skipped),
            "steps_left": b.steps_left, "done": b.done, "probes": len(st.steps),
            "culprit": st.culprit, "confirmed": st.confirmed, "stop_reason": st.stop_reason,
            "check": st.check_display}
