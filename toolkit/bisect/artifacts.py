"""Each step's build: through ``tk build``'s plan and artifact store for a TVM tree, or the
user's build command for any other tree.

The store key is the plan hash plus the tree's build key (sources, CMake files, submodule
SHAs), so a commit that only touches Python or docs is served by a build of a neighbour, and
a range bisected a second time builds nothing. The build directory lives beside the state,
outside the worktree, and is reused from step to step, so a build that does happen is
incremental. ``cached`` answers from git objects alone, which lets the search prefer a
commit whose build is already stored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import events as ev
from toolkit.bisect.protocol import BISECT_BUILD_DIR
from toolkit.bisect.state import BisectState
from toolkit.bisect.worktree import Repo
from toolkit.errors import TkError, UserError

if TYPE_CHECKING:
    from toolkit.bisect.runner import BuildResult
    from toolkit.builds.recipes import BuildPlan
    from toolkit.builds.record import BuildRecord

# tk build's planner, driver and store, the runner (and the failure explainer) are imported
# where they are used: 'tk bisect start' and the other quick commands never load them.


class StoreBuilder:
    def __init__(self, st: BisectState, repo: Repo, worktree: Path,
                 events: ev.Handler = ev.ignore, jobs: int | None = None) -> None:
        self.st = st
        self.repo_dir = Path(repo.git_dir)
        self.worktree = worktree
        self.events = events  # hears the build's stages and Ninja's progress
        self.jobs = jobs  # Ninja's jobs, when build slots share the machine
        self._plan: BuildPlan | None = None
        self._keys: dict[str, str] = {}

    def plan(self) -> BuildPlan:
        from toolkit.builds import driver as builder

        if self._plan is None:
            root = self.worktree if self.worktree.exists() else Path(self.st.source)
            self._plan = builder.plan_for(self.st.request, root)
        return self._plan

    def key(self, sha: str) -> str:
        from toolkit.builds import source, store

        if sha not in self._keys:
            # The whole range at once: the search asks for most of it (see tree_keys).
            wanted = [c for c in dict.fromkeys([*self.st.commits, sha]) if c not in self._keys]
            plan = self.plan().hash
            for commit, tree in source.tree_keys(self.repo_dir, wanted).items():
                self._keys[commit] = store.build_key(plan, tree)
        return self._keys[sha]

    def stored(self, sha: str, verify: bool = False) -> BuildRecord | None:
        from toolkit.builds import store

        try:
            return store.load(self.key(sha), verify=verify)
        except TkError:
            return None

    def cached(self, sha: str) -> bool:
        return self.stored(sha) is not None

    def identity(self, sha: str) -> str:
        """What the build of ``sha`` is, from git objects: its store key."""
        return self.key(sha)

    @contextlib.contextmanager
    def in_use(self, sha: str) -> Iterator[None]:
        """Hold the build of ``sha`` materialised while a check uses it: a spare build slot
        storing its build meanwhile packs every other build nobody holds."""
        from toolkit.builds import store

        key = self.key(sha)
        with store.using(key):
            if store.packed_links(key):  # packed before the hold began: back in place
                store.load(key, verify=True)
            yield

    def build(self, sha: str) -> BuildResult:
        from toolkit.bisect.runner import BuildResult
        from toolkit.builds import store

        start = time.perf_counter()
        record = self.stored(sha, verify=True)  # served: its libraries must be what was built
        if record is not None:
            # Straight from git objects: no tree inspection, no pre-flight for a stored build.
            return BuildResult(ok=True, env=store.env_of(record, self.worktree),
                               cache_hit=True, key=record.id,
                               seconds=time.perf_counter() - start, log=record.log)
        from toolkit.builds import driver as builder

        try:
            plan, tree = builder.plan(self.st.request, self.worktree)
            # Beside the worktree (each build slot has both): ccache names both relatively.
            bdir = self.worktree.parent / f"build-{plan.hash[:8]}"
            out = builder.build(plan, tree, build_dir=str(bdir), jobs=self.jobs,
                                events=self.events, check=False, pack=False)
        except UserError as e:
            return BuildResult(ok=False, seconds=time.perf_counter() - start,
                               message=f"cannot build this commit: {e}")
        except TkError as e:
            log = getattr(e, "log", None)
            return BuildResult(ok=False, seconds=time.perf_counter() - start,
                               message=str(e).splitlines()[0], log=str(log) if log else None)
        record = out.record
        self._keys[sha] = record.id
        return BuildResult(
            ok=True, env=store.env_of(record, self.worktree), cache_hit=out.from_store,
            key=record.id, seconds=time.perf_counter() - start, log=record.log,
        )


def is_tvm_tree(repo: Repo, sha: str) -> bool:
    """TVM or a fork of it: what ``tk build`` knows how to build and store."""
    return any(repo.has(sha, path) for path in ("include/tvm", "python/tvm"))


def default_command(repo: Repo, sha: str) -> str | None:
    """CMake's configure (once) and build, in the step's build directory; None without CMake."""
    if not repo.has(sha, "CMakeLists.txt"):
        return None
    gen = " -G Ninja" if shutil.which("ninja") else ""
    return ('[ -f "$TK_BISECT_BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B '
            f'"$TK_BISECT_BUILD_DIR"{gen} -DCMAKE_BUILD_TYPE=RelWithDebInfo && '
            'cmake --build "$TK_BISECT_BUILD_DIR"')


class CommandBuilder:
    """A tree tk build does not know: the user's command (or CMake's) builds it in one build
    directory kept beside the state, so each step is incremental. A commit whose tree is the
    one already built needs no build at all; ``""`` leaves building to the check."""

    def __init__(self, st: BisectState, repo: Repo, worktree: Path) -> None:
        self.st = st
        self.repo = repo
        self.worktree = worktree
        self.build_dir = st.directory / "build"
        self.stamp = self.build_dir / ".tk-bisect-tree"

    def env(self) -> dict[str, str]:
        return {BISECT_BUILD_DIR: str(self.build_dir)} if self.st.build_command else {}

    def tree(self, sha: str) -> str:
        return self.repo.git("rev-parse", f"{sha}^{{tree}}")

    def identity(self, sha: str) -> str:
        """What the build of ``sha`` is: the command that builds it and the tree it builds."""
        return f"{self.st.build_command}\0{self.tree(sha)}"

    def in_use(self, sha: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()  # one build directory, no store: nothing packs it

    def cached(self, sha: str) -> bool:
        return (not self.st.build_command or (self.stamp.exists()
                and self.stamp.read_text().strip() == self.tree(sha)))

    def build(self, sha: str) -> BuildResult:
        from toolkit.bisect.runner import BuildResult

        if not self.st.build_command:
            return BuildResult(ok=True, cache_hit=None)
        tree = self.tree(sha)
        if self.cached(sha):
            return BuildResult(ok=True, env=self.env(), cache_hit=True, key=tree)
        start = time.perf_counter()
        self.build_dir.mkdir(parents=True, exist_ok=True)
        self.stamp.unlink(missing_ok=True)
        logs = self.st.directory / "logs"
        logs.mkdir(exist_ok=True)
        log = logs / f"build-{sha[:12]}.log"
        with log.open("w") as out:
            out.write(f"$ {self.st.build_command}\n")
            out.flush()
            rc = subprocess.call(["/bin/sh", "-c", self.st.build_command], cwd=self.worktree,
                                 env={**os.environ, **self.env()}, stdout=out,
                                 stderr=subprocess.STDOUT)
        seconds = time.perf_counter() - start
        if rc != 0:
            from toolkit.cause import first_cause

            text = log.read_text(errors="replace")
            why = first_cause(text).text[:200] if text.strip() else f"exit {rc}"
            return BuildResult(ok=False, seconds=seconds, log=str(log),
                               message=f"build command exit {rc}: {why}")
        self.stamp.write_text(tree + "\n")
        return BuildResult(ok=True, env=self.env(), cache_hit=False, key=tree, seconds=seconds,
                           log=str(log))


def builder_for(st: BisectState, repo: Repo, worktree: Path,
                events: ev.Handler = ev.ignore, jobs: int | None = None,
                ) -> StoreBuilder | CommandBuilder:
    if st.build_command is None:
        return StoreBuilder(st, repo, worktree, events, jobs=jobs)
    return CommandBuilder(st, repo, worktree)


def choose_command(repo: Repo, bad: str, build_cmd: str | None, no_build: bool) -> str | None:
    """At start: tk build for TVM trees; otherwise the given command, CMake's, or none."""
    if no_build:
        return ""
    if build_cmd:
        return build_cmd
    if is_tvm_tree(repo, bad):
        return None
    cmd = default_command(repo, bad)
    if cmd is None:
        raise UserError(f"{repo.working_tree_dir} is neither a TVM tree nor a CMake project: "
                        "give --build-cmd CMD (or --no-build if the check builds)")
    return cmd
