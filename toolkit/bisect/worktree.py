"""The bisection's own git worktree, so the user's checkout is never touched.

Every checkout a bisection does happens in a detached worktree under the state directory:
the user's working tree, index, HEAD and branches stay exactly as they were. Untracked build
directories inside the worktree survive checkouts, so a builder that builds in place builds
incrementally from one step to the next.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import git

from toolkit.build import ownership
from toolkit.errors import UserError


def open_repo(source: Path) -> git.Repo:
    if not source.exists():
        raise UserError(f"{source}: no such directory")
    try:
        return git.Repo(source, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UserError(f"{source} is not a git repository (give --source DIR)") from None


def toplevel(source: Path) -> Path:
    return Path(open_repo(source).working_tree_dir or source).resolve()


def resolve(repo: git.Repo, rev: str, what: str) -> str:
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}")
    except git.GitCommandError:
        raise UserError(f"{what} {rev!r} is not a commit in {repo.working_tree_dir}") from None


def commit_range(repo: git.Repo, good: str, bad: str) -> list[str]:
    """good .. bad oldest first: the first-parent line when good is on it, else the
    commits that are both descendants of good and ancestors of bad."""
    if good == bad:
        raise UserError(f"good and bad are the same commit ({good[:10]})")
    if not repo.is_ancestor(good, bad):
        raise UserError(f"good {good[:10]} is not an ancestor of bad {bad[:10]}")
    line = repo.git.rev_list("--first-parent", f"{good}..{bad}").split()
    if line and repo.commit(line[-1]).parents[0].hexsha == good:
        return [good, *reversed(line)]
    path = repo.git.rev_list("--topo-order", "--ancestry-path", f"{good}..{bad}").split()
    return [good, *reversed(path)]


def commit_info(repo: git.Repo, sha: str) -> dict[str, Any]:
    c = repo.commit(sha)
    return {
        "hash": c.hexsha,
        "subject": c.summary if isinstance(c.summary, str) else c.summary.decode(),
        "author": f"{c.author.name} <{c.author.email}>",
        "date": c.authored_datetime.isoformat(),
    }


class Worktree:
    """A detached worktree of the user's repository at ``path``."""

    def __init__(self, repo: git.Repo, path: Path) -> None:
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
            self.repo.git.worktree("add", "--detach", "--force", str(self.path), sha)
        wt = git.Repo(self.path)
        if wt.head.commit.hexsha != sha or wt.is_dirty(untracked_files=False):
            wt.git.checkout("--detach", "--force", sha)
        # Files a previous commit tracked but this one does not; ignored files (build
        # directories) stay, so builds in the worktree stay incremental.
        wt.git.clean("-ffd", "--quiet")
        if (self.path / ".gitmodules").exists():
            self._update_submodules(wt, sha)
        # git's record of this worktree (index, HEAD, submodule clones) sits in the user's
        # .git: when root bisects someone's repository, it is theirs like the rest of .git.
        owner = ownership.owner_of(Path(self.repo.common_dir))
        ownership.hand_over(self.admin_dir().parent, owner, recursive=False)  # .git/worktrees
        ownership.hand_over(self.admin_dir(), owner)

    def admin_dir(self) -> Path:
        """``.git/worktrees/NAME`` of the user's repository: where git records this worktree."""
        text = (self.path / ".git").read_text().strip()
        return Path(text.removeprefix("gitdir:").strip())

    def _update_submodules(self, wt: git.Repo, sha: str) -> None:
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
        missing = sorted(set(submodule_urls(self.repo, wt)) - set(local))
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

    def head(self) -> str | None:
        return git.Repo(self.path).head.commit.hexsha if self.exists() else None

    def remove(self) -> None:
        if self.exists():
            try:
                self.repo.git.worktree("remove", "--force", "--force", str(self.path))
            except git.GitCommandError:
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


def submodule_urls(repo: git.Repo, wt: git.Repo) -> dict[str, str]:
    """name -> URL of the top-level submodules of the worktree's commit, relative URLs resolved
    the way ``git submodule init`` does (against the remote's URL, else the repository)."""
    proc = subprocess.run(["git", "config", "-f", ".gitmodules", "--get-regexp",
                           r"^submodule\..*\.url$"], cwd=wt.working_tree_dir,
                          capture_output=True, text=True)
    urls = {}
    for line in proc.stdout.splitlines():
        key, _, url = line.partition(" ")
        name = key[len("submodule."):-len(".url")]
        urls[name] = relative_url(repo, url.strip()) if url.startswith(("./", "../")) else url
    return urls


def relative_url(repo: git.Repo, url: str) -> str:
    try:
        remote = repo.git.config("--get", f"remote.{repo.remotes[0].name}.url")
    except (IndexError, git.GitCommandError):
        remote = str(repo.working_tree_dir)
    base = remote.rstrip("/")
    for part in url.split("/"):
        if part == "..":
            base = base.rsplit("/", 1)[0] if "/" in base else base.rsplit(":", 1)[0]
        elif part and part != ".":
            base = f"{base}/{part}"
    return base
