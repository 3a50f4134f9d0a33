"""The bisection's own git worktree, so the user's checkout is never touched.

Every checkout a bisection does happens in a detached worktree under the state directory:
the user's working tree, index, HEAD and branches stay exactly as they were. Untracked build
directories inside the worktree survive checkouts, so a builder that builds in place builds
incrementally from one step to the next.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import git

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
            self.repo.git.worktree("prune")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.repo.git.worktree("add", "--detach", "--force", str(self.path), sha)
        wt = git.Repo(self.path)
        if wt.head.commit.hexsha != sha or wt.is_dirty(untracked_files=False):
            wt.git.checkout("--detach", "--force", sha)
        # Files a previous commit tracked but this one does not; ignored files (build
        # directories) stay, so builds in the worktree stay incremental.
        wt.git.clean("-ffd", "--quiet")
        if (self.path / ".gitmodules").exists():
            wt.git.submodule("update", "--init", "--recursive", "--quiet")

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
        self.repo.git.worktree("prune")
