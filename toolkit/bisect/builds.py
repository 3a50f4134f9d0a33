"""Each step's build, through ``tk build``'s plan and artifact store.

The store key is the plan hash plus the tree's build key (sources, CMake files, submodule
SHAs), so a commit that only touches Python or docs is served by a build of a neighbour, and
a range bisected a second time builds nothing. The build directory lives beside the state,
outside the worktree, and is reused from step to step, so a build that does happen is
incremental. ``cached`` answers from git objects alone, which lets the search prefer a
commit whose build is already stored.
"""

from __future__ import annotations

import time
from pathlib import Path

import git

from toolkit import build as builder
from toolkit import source, store
from toolkit.bisect.runner import BuildResult, Progress
from toolkit.bisect.state import BisectState
from toolkit.errors import TkError, UserError
from toolkit.recipes import BuildPlan, Request


def request_of(options: dict) -> Request:
    return Request(llvm=options.get("llvm"), cuda=bool(options.get("cuda")),
                   cuda_arch=options.get("cuda_arch"), debug=bool(options.get("debug")),
                   ccache=bool(options.get("ccache")),
                   runtime_only=bool(options.get("runtime_only")),
                   recipe_files=[Path(p) for p in options.get("recipe_files", [])],
                   sets=list(options.get("sets", [])), backend=options.get("backend", "native"))


class StoreBuilder:
    def __init__(self, st: BisectState, repo: git.Repo, worktree: Path,
                 progress: Progress = lambda msg: None) -> None:
        self.st = st
        self.repo_dir = Path(repo.git_dir)
        self.worktree = worktree
        self.progress = progress
        self._plan: BuildPlan | None = None
        self._keys: dict[str, str] = {}

    def plan(self) -> BuildPlan:
        if self._plan is None:
            root = self.worktree if self.worktree.exists() else Path(self.st.source)
            self._plan, _ = builder.plan(request_of(self.st.build_options), root)
        return self._plan

    def key(self, sha: str) -> str:
        if sha not in self._keys:
            tree = source.tree_key(self.repo_dir, sha)
            self._keys[sha] = store.build_key(self.plan().hash, tree)
        return self._keys[sha]

    def stored(self, sha: str) -> dict | None:
        try:
            return store.load(self.key(sha))
        except TkError:
            return None

    def cached(self, sha: str) -> bool:
        return self.stored(sha) is not None

    def build(self, sha: str) -> BuildResult:
        start = time.perf_counter()
        manifest = self.stored(sha)
        if manifest is not None:
            # Straight from git objects: no tree inspection, no pre-flight for a stored build.
            return BuildResult(ok=True, env=store.env_of(manifest, self.worktree),
                               cache_hit=True, key=manifest["id"],
                               seconds=time.perf_counter() - start, log=manifest.get("log"))
        shown = [0]

        def ninja(done: int, total: int) -> None:
            # A line per quarter: enough to see it move, not a flood in a log.
            if done * 4 // total > shown[0] or done == total:
                shown[0] = done * 4 // total
                self.progress(f"  building {sha[:10]}: [{done}/{total}]")

        try:
            plan, tree = builder.plan(request_of(self.st.build_options), self.worktree)
            bdir = self.st.directory / f"build-{plan.hash[:8]}"
            out = builder.build(plan, tree, build_dir=str(bdir), progress=ninja, check=False)
        except UserError as e:
            return BuildResult(ok=False, seconds=time.perf_counter() - start,
                               message=f"cannot build this commit: {e}")
        except TkError as e:
            log = getattr(e, "log", None)
            return BuildResult(ok=False, seconds=time.perf_counter() - start,
                               message=str(e).splitlines()[0], log=str(log) if log else None)
        manifest = out.manifest
        self._keys[sha] = manifest["id"]
        return BuildResult(
            ok=True, env=store.env_of(manifest, self.worktree), cache_hit=out.from_store,
            key=manifest["id"], seconds=time.perf_counter() - start, log=manifest.get("log"),
        )
