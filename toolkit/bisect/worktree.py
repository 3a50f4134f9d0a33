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
import subprocess
import threading
from pathlib import Path
from typing import Any

from toolkit import ownership
from toolkit.errors import TkError, UserError


class GitFailed(TkError):
    """A git command tk ran on the user's repository failed (its last line of stderr)."""


class Repo:
    """The user's repository, read and driven with plain git commands: a bisection's start,
    a run whose verdicts are all known and the report need a few of them, not GitPython's
    import (~50 ms of a start-up)."""

    def __init__(self, root: Path) -> None:
        self.working_tree_dir = str(root)
        self._dirs: dict[str, str] = {}

    def git(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> str:
        # No optional locks: a read must not refresh (and rewrite) the user's index.
        proc = subprocess.run(["git", *args], cwd=cwd or self.working_tree_dir,
                              capture_output=True, text=True,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
        if check and proc.returncode != 0:
            lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
            raise GitFailed(f"git {' '.join(args[:3])} in {cwd or self.working_tree_dir}: "
                            f"{lines[-1].strip() if lines else f'exit {proc.returncode}'}")
        return proc.stdout.strip() if check else proc.stdout

    def ok(self, *args: str) -> bool:
        return subprocess.run(["git", *args], cwd=self.working_tree_dir, capture_output=True,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).returncode == 0

    def _dir(self, flag: str) -> str:
        if flag not in self._dirs:
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
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=source,
                          capture_output=True, text=True)
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
    if not repo.ok("merge-base", "--is-ancestor", good, bad):
        raise UserError(f"good {good[:10]} is not an ancestor of bad {bad[:10]}")
    line = repo.git("rev-list", "--first-parent", f"{good}..{bad}").split()
    if line and repo.git("rev-parse", f"{line[-1]}^1") == good:
        return [good, *reversed(line)]
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
        """Check out the commit's submodules from the user's own clones, never the network.

        A worktree shares its config with the user's repository, and ``submodule init`` records
        each URL there; URLs given with ``-c`` count as already recorded, so nothing is written.
        Each submodule (nested ones too) is cloned from the user's clone of it
        (``.git/modules/NAME``, ``.../modules/NAME/modules/SUB``) with every protocol but
        ``file`` refused: real TVM history (tvm-ffi, dlpack, libbacktrace) is bisected where no
        network may be reachable, and a commit whose submodule objects are not there is
        ``Untestable``, with the reason.
        """
        common = Path(self.repo.common_dir)
        local = local_clones(common / "modules")
        missing = sorted(set(submodule_urls(self.repo, self.path)) - set(local))
        if missing:
            raise Untestable(f"{sha[:10]}: its submodules cannot be checked out: "
                             f"{', '.join(missing)} not cloned in your checkout (tk never "
                             "fetches; clone them there, or bisect a range without them)")
        config = ["-c", "protocol.allow=never", "-c", "protocol.file.allow=always"]
        for name, path in local.items():
            config += ["-c", f"submodule.{name}.url={path}"]
        proc = subprocess.run(["git", *config, "submodule", "update", "--init", "--recursive",
                               "--quiet"], cwd=self.path, capture_output=True, text=True)
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
            why = lines[-1].strip() if lines else "git submodule update failed"
            raise Untestable(f"{sha[:10]}: its submodules cannot be checked out from the "
                             f"objects of your clones ({why}); tk never fetches")

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


def local_clones(modules: Path) -> dict[str, str]:
    """Submodule name -> the user's clone of it under ``.git/modules``, nested ones included
    (by their own names: ``git -c`` reaches the nested ``submodule update`` too). Names may
    hold slashes, as TVM's do (``3rdparty/tvm-ffi``): a directory that is not a clone is a
    part of a name."""
    found: dict[str, str] = {}

    def walk(directory: Path, prefix: str) -> None:
        if not directory.is_dir():
            return
        for entry in sorted(directory.iterdir()):
            if not entry.is_dir():
                continue
            name = f"{prefix}{entry.name}"
            if (entry / "HEAD").is_file() and (entry / "objects").is_dir():
                found.setdefault(name, str(entry))
                for nested, path in local_clones(entry / "modules").items():
                    found.setdefault(nested, path)
            else:
                walk(entry, f"{name}/")

    walk(modules, "")
    return found


def submodule_urls(repo: Repo, worktree: Path) -> dict[str, str]:
    """name -> URL of the top-level submodules of the worktree's commit, relative URLs resolved
    the way ``git submodule init`` does (against the remote's URL, else the repository)."""
    out = repo.git("config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.url$",
                   cwd=worktree, check=False)
    urls = {}
    for line in out.splitlines():
        key, _, url = line.partition(" ")
        name = key[len("submodule."):-len(".url")]
        urls[name] = relative_url(repo, url.strip()) if url.startswith(("./", "../")) else url
    return urls


def relative_url(repo: Repo, url: str) -> str:
    remotes = repo.git("remote", check=False).split()
    remote = repo.git("config", "--get", f"remote.{remotes[0]}.url", check=False).strip() \
        if remotes else ""
    base = (remote or str(repo.working_tree_dir)).rstrip("/")
    for part in url.split("/"):
        if part == "..":
            base = base.rsplit("/", 1)[0] if "/" in base else base.rsplit(":", 1)[0]
        elif part and part != ".":
            base = f"{base}/{part}"
    return base
