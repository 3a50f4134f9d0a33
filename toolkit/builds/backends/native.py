"""The native backend: CMake and Ninja on this machine, in the plan's build directory."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from toolkit.builds import ccache
from toolkit.builds.backends import (
    BackendResult,
    BuildFailed,
    BuildJob,
    cmake_error,
    compile_argv,
    configure_argv,
    log_size,
    read_cmake_cache,
    run_logged,
    shell_line,
)
from toolkit.builds.recipes import BuildPlan
from toolkit.builds.tools import cmake_binary, tool_output
from toolkit.events import ignore


def build(job: BuildJob) -> BackendResult:
    env = {**os.environ, **job.plan.env}
    result = BackendResult(toolchain=toolchain(job.plan))
    launcher = ccache_args(job.plan)
    cached = bool(launcher) or job.plan.options.get("USE_CCACHE", "").upper() == "ON"
    stats_log = job.log.parent / ccache.STATS_LOG
    if cached:
        result.toolchain["ccache"] = first_line(["ccache", "--version"])
        # Paths relative to the tree and no working directory in the hash: the same sources
        # unpacked elsewhere (another worktree, a test's temporary tree, another machine of
        # the team's) hit the same cache.
        env.setdefault("CCACHE_BASEDIR", ccache_base(job.source_dir, job.build_dir))
        env.setdefault("CCACHE_NOHASHDIR", "1")
    steps = [("configure", configure_argv(job) + launcher), ("compile", compile_argv(job))]
    if job.configured:
        steps = steps[1:]
        result.timings["configure"] = 0.0
    cmake = cmake_binary()  # the reproduce lines say "cmake"; tk runs what it stands for
    for step, argv in steps:
        line = shell_line(argv, env=job.plan.env)
        result.commands.append(line)
        start = log_size(job.log)
        # ccache's stats log counts the compile alone; the remote's URL is in no line above.
        step_env = {**env, **ccache.environment(job.ccache_remote, stats_log)} \
            if cached and step == "compile" else env
        rc, seconds = run_logged([cmake, *argv[1:]], job.log, env=step_env, cwd=job.build_dir,
                                 events=job.events if step == "compile" else ignore)
        result.timings[step] = round(seconds, 3)
        if rc != 0 or cmake_error(job.log, start):
            raise BuildFailed(step, job, reproduce=line)
    if cached:
        result.extra["ccache"] = ccache.read_stats(
            stats_log, job.ccache_remote or os.environ.get("CCACHE_REMOTE_STORAGE"))
    cxx = read_cmake_cache(job.build_dir).get("CMAKE_CXX_COMPILER")
    if cxx:
        result.toolchain["cxx"] = first_line([cxx, "--version"])
    return result


def ccache_base(source_dir: Path, build_dir: Path) -> str:
    """The directory ccache makes paths relative to: the one holding both the tree and the
    build directory. A build directory beside the tree (a bisection's, each of its build
    slots') is named relatively too - its ``-I`` for generated headers - so another
    bisection, or another slot laid out alike, hits the cache; never ``/``."""
    common = os.path.commonpath([os.path.abspath(source_dir), os.path.abspath(build_dir)])
    return common if common != os.path.dirname(common) else str(source_dir)


def ccache_args(plan: BuildPlan, available: bool | None = None) -> list[str]:
    """ccache when available (on this machine, unless told), unless the plan says otherwise.
    It cannot change what is built, so it is a property of the machine, not of the plan (and
    not in its hash)."""
    if available is None:
        available = shutil.which("ccache") is not None
    # USE_CCACHE=ON: TVM sets the launchers itself, and refuses ones already defined.
    if (plan.options.get("USE_CCACHE", "AUTO").upper() != "AUTO" or not available
            or any(k.endswith("_COMPILER_LAUNCHER") for k in plan.cmake)):
        return []
    langs = ["C", "CXX"] + (["CUDA"] if plan.wants_cuda else [])
    return [f"-DCMAKE_{lang}_COMPILER_LAUNCHER=ccache" for lang in langs]


def toolchain(plan: BuildPlan) -> dict[str, str]:
    """Versions of the tools this build runs, as this machine reports them."""
    tools = {"cmake": [cmake_binary(), "--version"], "ninja": ["ninja", "--version"]}
    if plan.llvm_config:
        tools["llvm"] = [plan.llvm_config, "--version"]
    if plan.wants_cuda:
        tools["nvcc"] = ["nvcc", "--version"]
    if plan.options.get("USE_CCACHE", "").upper() == "ON":
        tools["ccache"] = ["ccache", "--version"]
    return {name: first_line(argv) for name, argv in tools.items()}


def first_line(argv: list[str]) -> str:
    """The line of ``argv``'s output that carries its version ("absent" if it does not run)."""
    return _first_line(tuple(argv))


def _first_line(argv: tuple[str, ...]) -> str:
    out = tool_output(argv)
    return "absent" if out is None else version_line(out)


def version_line(out: str) -> str:
    """The line of a ``--version`` output that carries the version (else its first line)."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    for line in lines:
        if re.search(r"\d+\.\d+", line) and ("release" in line.lower() or "version" in line.lower()):
            return line
    return lines[0] if lines else ""
