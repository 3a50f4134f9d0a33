"""A patch stack replayed on top of a commit: what a bisection applies at every probe when it
carries one (a fork's own commits, bisected against upstream: ``tk bisect upstream``), and
what ``tk fork rebase-check`` reports patch by patch.

Each patch is cherry-picked (``git cherry-pick --no-commit``: git's own three-way merge,
renames included) in a worktree of tk's own repository for the fork (``fork.repo.own_repo``,
whose config keeps the user's hooks and signing programs out), then committed with the
patch's own message, author, committer and dates, so the same stack on the same commit is
always the same commit: its build key, its known verdicts and the store's builds carry over
from one run to the next. A patch whose change is already there becomes empty and is left
out, as ``git rebase`` drops it. Which commit a stack makes on which base is remembered
(``Stacks``), so a known verdict needs no checkout the second time either.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.bisect.verdicts import Known, VerdictCache
from toolkit.bisect.worktree import Untestable, Worktree
from toolkit.errors import TkError
from toolkit.git import GitFailed
from toolkit.git import run as run_git
from toolkit.paths import cache_root
from toolkit.process import last_line

if TYPE_CHECKING:
    from toolkit.bisect.runner import BuildResult

APPLIES = "applies"
CONFLICT = "conflict"
EMPTY = "empty"
SKIPPED = "not tried"  # after a conflict, when the replay stops there


@dataclass
class Applied:
    """What one patch did on top of the ones before it."""

    patch: str  # the fork's commit
    subject: str
    status: str  # APPLIES, CONFLICT, EMPTY or SKIPPED
    files: list[str] = field(default_factory=list)  # conflicting paths (CONFLICT)
    commit: str | None = None  # the replayed commit (APPLIES)


@dataclass
class Replay:
    """A stack replayed on ``base``: each patch's fate and, when none conflicted, the commit."""

    base: str
    patches: list[Applied]
    commit: str | None  # base + every patch that applied; None when one conflicted

    @property
    def conflicts(self) -> list[Applied]:
        return [p for p in self.patches if p.status == CONFLICT]

    def reason(self) -> str:
        """One line: why the stack does not apply here."""
        first = self.conflicts[0]
        more = len(self.conflicts) - 1
        return (f"the patch stack does not apply on {self.base[:10]}: {first.patch[:10]} "
                f"({first.subject}) conflicts in {', '.join(first.files[:3])}"
                + (f" and {len(first.files) - 3} more files" if len(first.files) > 3 else "")
                + (f"; {more} more patches conflict" if more > 0 else ""))


def authorship(cwd: Path, patch: str) -> tuple[dict[str, str], str, str]:
    """The patch's author and committer (with dates) as git's environment, its subject and
    its whole message."""
    out = run_git("show", "-s", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%s%x00%B",
                  patch, cwd=cwd).stdout
    an, ae, ad, cn, ce, cd, subject, message = out.split("\x00", 7)
    env = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
           "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
    return env, subject, message.rstrip("\n") + "\n"


def replay(worktree: Path, base: str, patches: Sequence[str], keep_going: bool = False) -> Replay:
    """Apply ``patches`` in order on ``base``, checked out clean in ``worktree``.

    A patch that conflicts is left out and the worktree put back as it was before it; with
    ``keep_going`` the patches after it are tried on what applied so far (what they would
    meet if that one were dropped), else they are not tried.
    """
    head = base
    done: list[Applied] = []
    stopped = False
    for patch in patches:
        env, subject, message = authorship(worktree, patch)
        if stopped:
            done.append(Applied(patch, subject, SKIPPED))
            continue
        picked = run_git("cherry-pick", "--no-commit", patch, cwd=worktree, check=False)
        if picked.returncode != 0:
            files = run_git("diff", "--name-only", "--diff-filter=U", cwd=worktree).stdout.split()
            run_git("reset", "-q", "--hard", head, cwd=worktree)
            run_git("clean", "-ffdq", cwd=worktree)
            if not files:  # not a conflict: git could not cherry-pick it at all
                raise GitFailed(f"git cherry-pick {patch[:10]} on {head[:10]}: "
                                f"{last_line(picked.stderr, f'exit {picked.returncode}')}")
            done.append(Applied(patch, subject, CONFLICT, files))
            stopped = not keep_going
            continue
        tree = run_git("write-tree", cwd=worktree).stdout.strip()
        if tree == run_git("rev-parse", f"{head}^{{tree}}", cwd=worktree).stdout.strip():
            done.append(Applied(patch, subject, EMPTY))
            continue
        head = _commit(worktree, tree, head, message, env)
        run_git("reset", "-q", "--soft", head, cwd=worktree)
        done.append(Applied(patch, subject, APPLIES, commit=head))
    conflicted = any(p.status == CONFLICT for p in done)
    return Replay(base, done, None if conflicted else head)


def _commit(worktree: Path, tree: str, parent: str, message: str, env: dict[str, str]) -> str:
    return run_git("commit-tree", tree, "-p", parent, cwd=worktree, input=message,
                   env=env).stdout.strip()


class Stacks:
    """Which commit a patch stack made on which base, or why it did not apply: kept under
    ``$TK_CACHE/bisect-stacks/`` per repository and stack, so that a second bisection knows
    the commit a probe checks out, its build and its verdict without replaying anything.
    Shared by the build slots' threads."""

    def __init__(self, git_dir: Path, patches: Sequence[str]) -> None:
        self.git_dir = Path(git_dir).resolve()
        self.patches = list(patches)
        digest = hashlib.sha256("\0".join([str(self.git_dir), *self.patches]).encode())
        self.path = cache_root() / "bisect-stacks" / f"{digest.hexdigest()[:24]}.json"
        self._lock = threading.Lock()
        self._present: set[str] = set()
        try:
            self._known: dict[str, dict[str, Any]] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self._known = {}

    def entry(self, base: str) -> dict[str, Any] | None:
        """``{"commit": sha or None, "reason": why not}`` when the stack was replayed on
        ``base`` before (and the commit it made is still there)."""
        with self._lock:
            found = self._known.get(base)
        if found is None or found.get("commit") is None:
            return found
        commit = found["commit"]
        if commit not in self._present:
            gone = run_git(f"--git-dir={self.git_dir}", "cat-file", "-e",
                           f"{commit}^{{commit}}", check=False).returncode
            if gone:
                return None  # tk's repository was made anew: replay again
            self._present.add(commit)
        return found

    def commit_of(self, base: str) -> str | None:
        found = self.entry(base)
        return None if found is None else found.get("commit")

    def put(self, done: Replay) -> None:
        with self._lock:
            self._known[done.base] = {"commit": done.commit,
                                      "reason": None if done.commit else done.reason()}
            if done.commit:
                self._present.add(done.commit)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(self._known, indent=1))
            os.replace(tmp, self.path)

    def checkout(self, wt: Worktree) -> Callable[[str], None]:
        """Check out ``base`` with the stack on top in ``wt``: the commit the stack made there
        before, or a fresh replay. Where it does not apply the commit is ``Untestable``
        (skipped, with the patch and the files that conflict)."""
        def check_out(base: str) -> None:
            found = self.entry(base)
            if found is not None and found["commit"] is None:
                raise Untestable(found["reason"])
            if found is None:
                wt.checkout(base)
                done = replay(wt.path, base, self.patches)
                self.put(done)
                if done.commit is None:
                    raise Untestable(done.reason())
                found = {"commit": done.commit}
            wt.checkout(found["commit"])  # clean, with the submodules the stack records

        return check_out


class StackedBuilder:
    """A step's builder (``artifacts.StoreBuilder`` or ``CommandBuilder``) asked about a base
    commit builds, stores and names the commit the stack made on it."""

    def __init__(self, inner: Any, stacks: Stacks) -> None:
        self.inner = inner
        self.stacks = stacks

    def _commit(self, base: str) -> str:
        commit = self.stacks.commit_of(base)
        if commit is None:  # a step checks out (and replays) before it builds
            raise TkError(f"{base[:10]}: built before the patch stack was replayed on it")
        return commit

    def build(self, base: str) -> BuildResult:
        return self.inner.build(self._commit(base))

    def cached(self, base: str) -> bool:
        commit = self.stacks.commit_of(base)
        return commit is not None and self.inner.cached(commit)

    def identity(self, base: str) -> str:
        commit = self.stacks.commit_of(base)
        return self.inner.identity(commit) if commit else f"not replayed: {base}"

    @contextlib.contextmanager
    def in_use(self, base: str) -> Iterator[None]:
        with self.inner.in_use(self._commit(base)):
            yield


class StackedVerdicts(VerdictCache):
    """Known verdicts of base commits, kept under the commit the stack made on each: nothing
    is known of a base the stack was never replayed on (or does not apply to)."""

    def __init__(self, inner: VerdictCache, stacks: Stacks) -> None:
        super().__init__(lambda base: inner.key_of(stacks.commit_of(base) or ""),
                         inner.directory)
        self.stacks = stacks

    def lookup(self, sha: str, runs: int) -> Known | None:
        if self.stacks.commit_of(sha) is None:
            return None
        return super().lookup(sha, runs)

    def add(self, sha: str, verdict: str, reason: str, returncodes: Sequence[int | None],
            output_tail: str) -> None:
        if self.stacks.commit_of(sha) is not None:
            super().add(sha, verdict, reason, returncodes, output_tail)

    def spoil(self, sha: str, reason: str) -> None:
        if self.stacks.commit_of(sha) is not None:
            super().spoil(sha, reason)
