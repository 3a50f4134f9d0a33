"""Starting, opening and ending a bisection of one repository: the library under the CLI."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolkit.bisect import checks, verdict
from toolkit.bisect import state as states
from toolkit.bisect.runner import Bisector, Progress, run_check
from toolkit.bisect.state import BisectState
from toolkit.bisect.worktree import Worktree, commit_range, open_repo, resolve, toplevel
from toolkit.errors import UserError


def source_of(source: Path | None) -> Path:
    return toplevel(source or Path.cwd())


def start(source: Path, good: str, bad: str, check: Sequence[str], *, regress: str = "error",
          build_failure: str | None = None, timeout: float | None = None,
          on_timeout: str = "skip", count: int = 1,
          build_options: dict[str, Any] | None = None, build_cmd: str | None = None,
          no_build: bool = False) -> BisectState:
    """Validate everything first, so a mistake changes nothing; then save the new state."""
    root = source_of(source)
    repo = open_repo(root)
    if states.load(root) is not None:
        raise UserError(f"a bisection of {root} is already in progress: 'tk bisect run' to "
                        "continue it, 'tk bisect reset' to drop it")
    good_sha = resolve(repo, good, "good")
    bad_sha = resolve(repo, bad, "bad")
    commits = commit_range(repo, good_sha, bad_sha)
    argv, display = checks.resolve(check, root)
    from toolkit.bisect.artifacts import choose_command

    build_command = choose_command(repo, bad_sha, build_cmd, no_build)
    regress = verdict.parse_regress(regress)
    if count < 1:
        raise UserError("--count must be at least 1")
    if build_failure is None:
        # A build-only check asks "does it build?": then a failed build is the answer.
        build_failure = "bad" if display.split()[0] == "build-only" else "skip"
    st = BisectState(source=str(root), good=good_sha, bad=bad_sha, commits=commits,
                     check=argv, check_display=display, regress=regress,
                     build_failure=build_failure, timeout=timeout, on_timeout=on_timeout,
                     count=count, build_options=dict(build_options or {}),
                     build_command=build_command)
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
        Worktree(open_repo(root), directory / "worktree").remove()
        shutil.rmtree(directory)
    return root


def check_env(build_env: dict[str, str]) -> dict[str, str]:
    """The step's environment: the user's, then the build's; tk stays importable for the
    ready-made checks (after the build's own paths, so the TVM under test wins)."""
    env = {**os.environ, **build_env}
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(checks.TK_ROOT)])
    return env


def bisector(st: BisectState, progress: Progress = lambda msg: None) -> Bisector:
    from toolkit.bisect import artifacts as builds

    repo = open_repo(Path(st.source))
    wt = Worktree(repo, st.worktree)
    builder = builds.builder_for(st, repo, wt.path, progress)
    return Bisector(
        st, checkout=wt.checkout, build=builder.build, cached=builder.cached,
        test_run=lambda sha, env: run_check(st.check, check_env(dict(env)), wt.path, st.timeout),
        progress=progress,
    )
