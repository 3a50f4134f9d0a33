"""The fork - the user's repository, only ever read - and tk's own repository for it.

tk's repository (``own_repo``) is a plain ``git init`` under the cache whose object store
borrows the user's through ``objects/info/alternates``: every commit of the fork and of
upstream is there without a copy, and whatever tk makes (a replayed patch stack, a worktree's
index and HEAD, a bisection's worktrees) is written there and nowhere else. Submodule clones
are read from the user's ``.git/modules`` (a link), never written: a worktree keeps its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toolkit.bisect.worktree import Repo, open_repo, resolve, toplevel
from toolkit.errors import UserError
from toolkit.git import GitFailed
from toolkit.git import run as run_git
from toolkit.paths import cache_root

# Where a fork's upstream usually is, when --upstream is not given: the remote a fork adds
# for apache/tvm (``git remote add upstream https://github.com/apache/tvm``).
UPSTREAM_REFS = ("upstream/main", "upstream/master", "apache/main")


@dataclass(frozen=True)
class Fork:
    root: Path  # the user's repository (its top level)
    repo: Repo  # reads it (no optional locks: a read never rewrites their index)
    tip: str  # full sha of the fork's commit (--fork, default HEAD)
    tip_ref: str  # as the user named it

    def resolve(self, rev: str, what: str) -> str:
        return resolve(self.repo, rev, what)

    def subject(self, sha: str) -> str:
        return self.repo.git("show", "-s", "--format=%s", sha)


def open_fork(source: Path | None, rev: str = "HEAD") -> Fork:
    root = toplevel(source or Path.cwd())
    repo = open_repo(root)
    return Fork(root, repo, resolve(repo, rev, "--fork"), rev)


def upstream_of(fork: Fork, ref: str | None) -> tuple[str, str]:
    """(the ref as named, its commit): ``ref``, else the first of ``UPSTREAM_REFS`` there."""
    if ref:
        return ref, fork.resolve(ref, "--upstream")
    for name in UPSTREAM_REFS:
        if fork.repo.ok("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"):
            return name, fork.resolve(name, "upstream")
    raise UserError(f"{fork.root} has none of {', '.join(UPSTREAM_REFS)}: give --upstream REF "
                    "(the upstream branch the fork follows, e.g. after git remote add upstream "
                    "https://github.com/apache/tvm && git fetch upstream)")


def merge_base(fork: Fork, a: str, b: str) -> str:
    try:
        return fork.repo.git("merge-base", a, b)
    except GitFailed:
        raise UserError(f"{a[:10]} and {b[:10]} share no history: is the upstream ref the "
                        "TVM this fork was made from?") from None


def own_commits(fork: Fork, upstream: str) -> list[str]:
    """The fork's own commits on top of ``upstream``, oldest first, as ``git rebase`` would
    replay them: what the fork has and upstream has not, merges left out."""
    out = fork.repo.git("rev-list", "--reverse", "--topo-order", "--no-merges",
                        f"{upstream}..{fork.tip}")
    return out.split()


def count(fork: Fork, rev_range: str, *flags: str) -> int:
    return int(fork.repo.git("rev-list", "--count", *flags, rev_range))


def home(fork: Fork) -> Path:
    """Everything tk keeps for this fork: ``$TK_CACHE/fork/<name>-<digest of its path>``."""
    digest = hashlib.sha256(str(fork.root).encode()).hexdigest()[:16]
    return cache_root() / "fork" / f"{fork.root.name}-{digest}"


def own_repo(fork: Fork) -> Repo:
    """tk's repository for the fork, made on first use (see the module's doc)."""
    path = home(fork) / fork.root.name
    if not (path / ".git" / "objects" / "info" / "alternates").is_file():
        common = Path(fork.repo.common_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=path.parent))
        try:
            run_git("init", "-q", str(tmp))
            git_dir = tmp / ".git"
            (git_dir / "objects" / "info" / "alternates").write_text(
                f"{(common / 'objects').resolve()}\n")
            (git_dir / "modules").symlink_to(common / "modules")
            # No automatic gc (the commits tk makes are reachable from no ref), no advice on
            # detached checkouts, and none of the user's hooks or signing programs on the
            # commits tk makes here (bisect.patches replays the fork's patches in this repo).
            for key, value in (("gc.auto", "0"), ("core.hooksPath", os.devnull),
                               ("advice.detachedHead", "false"), ("commit.gpgSign", "false")):
                run_git("config", key, value, cwd=tmp)
            try:
                tmp.rename(path)
            except OSError:  # made meanwhile by another tk
                shutil.rmtree(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return open_repo(path)
