"""The bisection's own git worktree, so the user's checkout is never touched.

Every checkout a bisection does happens in a detached worktree under the state directory:
the user's working tree, index, HEAD and branches stay exactly as they were. Untracked build
directories inside the worktree survive checkouts, so a builder that builds in place builds
incrementally from one step to the next.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import ownership
from toolkit.errors import UserError
from toolkit.git import GitFailed
from toolkit.git import run as run_git
from toolkit.process import last_line


class Repo:
    """The user's repository, read and driven with plain git commands: a bisection's start,
    a run whose verdicts are all known and the report need a few of them, not GitPython's
    import (~50 ms of a start-up)."""

    def __init__(self, root: Path) -> None:
        self.working_tree_dir = str(root)
        self._dirs: dict[str, str] = {}

    def git(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> str:
        proc = run_git(*args, cwd=cwd or self.working_tree_dir, check=check)
        return proc.stdout.strip() if check else proc.stdout

    def ok(self, *args: str) -> bool:
        return run_git(*args, cwd=self.working_tree_dir, check=False).returncode == 0

    def _dir(self, flag: str) -> str:
        if flag not in self._dirs:
            own = os.path.join(self.working_tree_dir, ".git")
            if (os.path.isdir(own) and not os.path.exists(os.path.join(own, "commondir"))
                    and not {"GIT_DIR", "GIT_COMMON_DIR"} & os.environ.keys()):
                # A main working tree's .git directory is both (what git would answer,
                # without a git process: a run whose verdicts are all known asks here).
                self._dirs[flag] = own
            else:  # a linked worktree, a submodule's checkout: their .git names the place
                self._dirs[flag] = os.path.abspath(os.path.join(self.working_tree_dir,
                                                                self.git("rev-parse", flag)))
        return self._dirs[flag]

    @property
    def git_dir(self) -> str:
        return self._dir("--git-dir")

    @property
    def common_dir(self) -> str:
        return self._dir("--git-common-dir")

    def has(self, sha: str, path: str) -> bool:
        """Does commit ``sha`` hold ``path``?"""
        return self.ok("cat-file", "-e", f"{sha}:{path}")


def open_repo(source: Path) -> Repo:
    """A new handle on the repository holding ``source`` (each thread wants its own)."""
    return Repo(_top(source))


@functools.cache
def _top(source: Path) -> Path:
    if not source.exists():
        raise UserError(f"{source}: no such directory")
    if (source / ".git").exists():
        return source.resolve()  # a work tree's top already (git would answer the same)
    proc = run_git("rev-parse", "--show-toplevel", cwd=source, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise UserError(f"{source} is not a git repository (give --source DIR)")
    return Path(proc.stdout.strip())


def toplevel(source: Path) -> Path:
    return Path(open_repo(source).working_tree_dir).resolve()


def resolve(repo: Repo, rev: str, what: str) -> str:
    try:
        return repo.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except GitFailed:
        raise UserError(f"{what} {rev!r} is not a commit in {repo.working_tree_dir}") from None


def commit_range(repo: Repo, good: str, bad: str) -> list[str]:
    """good .. bad oldest first: the first-parent line when good is on it, else the
    commits that are both descendants of good and ancestors of bad."""
    if good == bad:
        raise UserError(f"good and bad are the same commit ({good[:10]})")
    # Each commit of the first-parent line with its parents: when the oldest one's first
    # parent is good, good is an ancestor and the line is the range (one git process).
    line = [entry.split() for entry in
            repo.git("rev-list", "--first-parent", "--parents", f"{good}..{bad}").splitlines()]
    if line and line[-1][1:2] == [good]:
        return [good, *(entry[0] for entry in reversed(line))]
    if not repo.ok("merge-base", "--is-ancestor", good, bad):
        raise UserError(f"good {good[:10]} is not an ancestor of bad {bad[:10]}")
    path = repo.git("rev-list", "--topo-order", "--ancestry-path", f"{good}..{bad}").split()
    return [good, *reversed(path)]


def commit_infos(repo: Repo, shas: list[str]) -> dict[str, dict[str, Any]]:
    """hash, subject, author and date of each commit, in one git command."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = repo.git("show", "-s", "--format=%H%x00%s%x00%an <%ae>%x00%aI%x00", *wanted)
    fields = [f.strip() for f in out.split("\x00")][:-1]  # each ends in NUL, then a newline
    infos = {}
    for i in range(0, len(fields), 4):
        sha, subject, author, date = fields[i:i + 4]
        infos[sha] = {"hash": sha, "subject": subject, "author": author, "date": date}
    return infos


# Build slots add their worktrees from threads of one process: git names each worktree's
# record after its directory (``worktree``, ``worktree1``, ...) by looking, then creating,
# and two adds at once can pick the same name.
_RECORDS = threading.Lock()


class Worktree:
    """A detached worktree of the user's repository at ``path``."""

    def __init__(self, repo: Repo, path: Path) -> None:
        self.repo = repo
        self.path = path

    def exists(self) -> bool:
        return (self.path / ".git").exists()

    def checkout(self, sha: str) -> None:
        if not self.exists():
            if self.path.exists():
                shutil.rmtree(self.path)
            self._forget()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _RECORDS:
                self.repo.git("worktree", "add", "--detach", "--force", str(self.path), sha)
        here = self.path
        # Forced every time: it also undoes whatever a check changed in tracked files, and
        # costs no more than asking git first whether it is needed.
        self.repo.git("checkout", "--detach", "--force", sha, cwd=here)
        # Files a previous commit tracked but this one does not; ignored files (build
        # directories) stay, so builds in the worktree stay incremental.
        self.repo.git("clean", "-ffd", "--quiet", cwd=here)
        if (self.path / ".gitmodules").exists():
            self._update_submodules(sha)
        # git's record of this worktree (index, HEAD, submodule clones) sits in the user's
        # .git: when root bisects someone's repository, it is theirs like the rest of .git.
        owner = ownership.owner_of(Path(self.repo.common_dir))
        ownership.hand_over(self.admin_dir().parent, owner, recursive=False)  # .git/worktrees
        ownership.hand_over(self.admin_dir(), owner)

    def admin_dir(self) -> Path:
        """``.git/worktrees/NAME`` of the user's repository: where git records this worktree."""
        text = (self.path / ".git").read_text().strip()
        return Path(text.removeprefix("gitdir:").strip())

    def _update_submodules(self, sha: str) -> None:
        """Check out the commit's submodules the user initialised, from the user's own clones
        of them, never the network; leave the others as they are in the user's checkout.

        Like ``git bisect``, which leaves submodules alone: one never initialised there (TVM's
        optional cutlass, OpenCL-Headers...) stays an empty directory here too, and a
        ``.gitmodules`` entry whose path the commit holds as plain files is no submodule at
        all. An initialised one (``.git/modules/NAME``, nested ones under
        ``.../modules/NAME/modules/SUB``) is cloned from that clone with every protocol but
        ``file`` refused: real TVM history (tvm-ffi, dlpack, libbacktrace) is bisected where
        no network may be reachable, and a commit whose submodule objects are not there is
        ``Untestable``, with the reason. A worktree shares its config with the user's
        repository, and ``submodule init`` records each URL there; URLs given with ``-c``
        count as already recorded, so nothing is written.
        """
        common = Path(self.repo.common_dir)
        _update(self.path, common, sha, common / "modules", sha)

    def remove(self) -> None:
        if self.exists():
            try:
                with _RECORDS:
                    self.repo.git("worktree", "remove", "--force", "--force", str(self.path))
            except GitFailed:
                pass
        if self.path.exists():
            shutil.rmtree(self.path)
        self._forget()

    def _forget(self) -> None:
        """Drop git's record of this worktree, when its directory is gone: ours alone, by exact
        path (``git worktree prune`` would also drop the user's worktrees on unmounted disks)."""
        admin = Path(self.repo.common_dir) / "worktrees"
        if not admin.is_dir() or self.exists():
            return
        mine = os.path.abspath(self.path / ".git")
        for entry in admin.iterdir():
            gitdir = entry / "gitdir"
            try:
                recorded = gitdir.read_text().strip()
            except OSError:
                continue
            if os.path.abspath(recorded) == mine:
                shutil.rmtree(entry)


class Untestable(UserError):
    """This commit cannot be tested here (its submodules' objects are not local): a skip, with
    this reason, inside the range; at an end, the bisection cannot start."""


@dataclass(frozen=True)
class Submodule:
    """A submodule a commit records: a gitlink its ``.gitmodules`` names."""

    name: str
    path: str  # inside the repository that records it
    commit: str  # the gitlink: the submodule's commit
    clone: Path | None  # the user's clone of it; None: never initialised in their checkout


def submodules(git_dir: Path, sha: str, modules: Path) -> list[Submodule]:
    """The submodules commit ``sha`` of the repository at ``git_dir`` records, from git objects
    alone, each with the user's clone of it under ``modules`` when there is one. Names may
    hold slashes, as TVM's do (``3rdparty/tvm-ffi``)."""
    def git(*args: str) -> str:
        return run_git(f"--git-dir={git_dir}", *args, check=False).stdout

    links = {}
    for entry in git("ls-tree", "-r", "-z", sha).split("\0"):
        meta, _, path = entry.partition("\t")
        if meta.startswith("160000 commit "):
            links[path] = meta.split()[2]
    if not links:
        return []
    found = []
    named = git("config", "--blob", f"{sha}:.gitmodules", "--get-regexp",
                r"^submodule\..*\.path$")
    for line in named.splitlines():
        key, _, path = line.partition(" ")
        if path in links:  # a path the commit holds as files is no submodule
            name = key[len("submodule."):-len(".path")]
            clone = modules / name
            mine = (clone / "HEAD").is_file() and (clone / "objects").is_dir()
            found.append(Submodule(name, path, links[path], clone if mine else None))
    return found


def uninitialised(repo: Repo, shas: list[str]) -> list[str]:
    """Paths of the submodules these commits record that the user never initialised (nested
    ones of those they did included): the ones every checkout leaves alone."""
    left: set[str] = set()

    def walk(git_dir: Path, sha: str, modules: Path, prefix: str) -> None:
        for sub in submodules(git_dir, sha, modules):
            if sub.clone is None:
                left.add(prefix + sub.path)
            else:
                walk(sub.clone, sub.commit, sub.clone / "modules", f"{prefix}{sub.path}/")

    common = Path(repo.common_dir)
    for sha in shas:
        walk(common, sha, common / "modules", "")
    return sorted(left)


def _update(directory: Path, git_dir: Path, sha: str, modules: Path, top: str) -> None:
    """Check out, in the checkout of ``sha`` at ``directory``, the submodules the user
    initialised, then theirs, level by level (each level's clones are the user's); ``top`` is
    the bisected commit, for the message."""
    mine = [s for s in submodules(git_dir, sha, modules) if s.clone is not None]
    if not mine:
        return
    config = ["-c", "protocol.allow=never", "-c", "protocol.file.allow=always"]
    for sub in mine:
        config += ["-c", f"submodule.{sub.name}.url={sub.clone}"]
    proc = run_git(*config, "submodule", "update", "--init", "--quiet", "--",
                   *(s.path for s in mine), cwd=directory, check=False)
    if proc.returncode != 0:
        why = last_line(proc.stderr, "git submodule update failed")
        raise Untestable(f"{top[:10]}: its submodules cannot be checked out from the objects "
                         f"of your clones ({why}); tk never fetches")
    for sub in mine:
        assert sub.clone is not None
        _update(directory / sub.path, sub.clone, sub.commit, sub.clone / "modules", top)
