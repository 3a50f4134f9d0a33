"""``tk bisect upstream --onto REF``: the first upstream commit that breaks the fork.

The range is upstream's, from the merge base of the fork and REF (where the fork's patches
are known to work) to REF; at every probe the fork's own commits are replayed on the upstream
commit (``toolkit.bisect.patches``), and that is what is built and checked. A probe where the
patches do not apply is skipped with the patch and the files that conflict. It is commit
bisection itself - the search, the state, the verdicts already known, the build store and its
prefetch - run in tk's own repository for the fork, so ``tk bisect status/log/env/passes
--source`` that repository work on it as on any bisection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolkit import events as ev
from toolkit.bisect import session
from toolkit.bisect import state as states
from toolkit.bisect.state import BisectState, Stack
from toolkit.errors import UserError
from toolkit.fork import repo as forks


def own_source(source: Path | None) -> Path:
    """tk's repository for the fork at ``source``: the ``--source`` of its bisection."""
    fork = forks.open_fork(source)
    return Path(forks.own_repo(fork).working_tree_dir)


def start(source: Path | None, onto: str, check: list[str], *, fork_rev: str = "HEAD",
          start_from: str | None = None, restart: bool = False,
          **settings: Any) -> tuple[BisectState, bool]:
    """The upstream bisection of the fork at ``source`` onto ``onto``: a new one, or the one in
    progress with these ends, patches and check (True: continued). ``settings`` are
    ``session.start``'s (regress, timeout, request, no_build, ...)."""
    from toolkit.bisect import checks

    if not check:
        raise UserError("missing check: give --check CMD or a WORKLOAD")
    fork = forks.open_fork(source, fork_rev)
    onto_sha = fork.resolve(onto, "--onto")
    good = (fork.resolve(start_from, "--from") if start_from
            else forks.merge_base(fork, onto_sha, fork.tip))
    if good == onto_sha:
        raise UserError(f"--onto {onto} is {'--from' if start_from else 'the merge base'}: "
                        "no upstream commit to bisect")
    patches = forks.own_commits(fork, onto_sha)
    if not patches:
        raise UserError(f"the fork {fork.tip_ref} has no commits of its own on top of {onto}")
    stack = Stack(patches, str(fork.root), fork.tip)
    _, display = checks.resolve(check, fork.root)
    root = Path(forks.own_repo(fork).working_tree_dir)
    existing = states.load(root)
    if existing is not None:
        same = (existing.good, existing.bad, existing.stack, existing.check_display) == (
            good, onto_sha, stack, display)
        if same and not restart:
            return existing, True
        if not restart and existing.status != "done":
            raise UserError(f"an upstream bisection of {fork.root} with other ends, patches or "
                            f"check is in progress ({existing.good[:10]}..{existing.bad[:10]}, "
                            f"{existing.check_display}): --restart drops it")
        session.reset(root)
    st = session.start(root, good, onto_sha, check, stack=stack, check_tree=fork.root,
                       **settings)
    return st, False


def run(st: BisectState, events: ev.Handler = ev.ignore) -> BisectState:
    return session.run(st, events)


def reset(source: Path | None) -> Path:
    """Drop the fork's upstream bisection (its state and worktrees; builds stay stored)."""
    root = own_source(source)
    if states.load(root) is None and not states.state_dir(root).exists():
        raise UserError(f"no upstream bisection of {forks.open_fork(source).root} in progress")
    session.reset(root)
    return root
