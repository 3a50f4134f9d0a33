"""Build backends: how a ``BuildPlan`` becomes a configured and compiled build directory.

A backend is a module ``toolkit.builds.backends.<name>`` exposing ``build(job) -> BackendResult``
(and, optionally, ``render_dockerfile(plan) -> str`` for ``--dry-run``). It owns only the
running of CMake and Ninja; everything around it — plan, pre-flight, build directory,
manifest, artifact store, the post-build check — is shared (``toolkit.builds.driver``).

Contract for ``build(job)``:

- ``job.build_dir`` is a host directory (created, possibly holding an earlier build of the
  same plan: keep it, builds are incremental). ``job.config_cmake`` is already written there.
- Configure with ``configure_argv(job)`` and compile with ``compile_argv(job)`` (map paths if
  they run elsewhere, e.g. a container that mounts ``job.source_dir``), appending all output
  to ``job.log`` and reporting ``ninja_progress(line)`` to ``job.events`` as Ninja goes.
- A step fails when its command exits non-zero or CMake printed an error (``cmake_error``:
  some exit 0).
- On failure raise ``BuildFailed(step, job, reproduce=...)``; on success return a
  ``BackendResult`` with the tool versions seen *where the build ran*, and the image id.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.builds.recipes import BuildPlan
from toolkit.errors import TvmFailure, UserError
from toolkit.events import Handler, Progress, ignore

BACKENDS = ("native", "docker")
NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")
PLAN_STAMP = ".tk-plan"  # written by toolkit.builds.driver after a successful build of a plan


@dataclass
class BuildJob:
    plan: BuildPlan
    source_dir: Path
    build_dir: Path
    log: Path
    jobs: int | None = None
    events: Handler = ignore  # hears the compile's Progress
    files_key: str = ""  # SourceTree.files_key: which source files exist
    ccache_remote: str | None = None  # the team's ccache remote storage (toolkit.builds.ccache)

    @property
    def config_cmake(self) -> Path:
        return self.build_dir / "config.cmake"

    @property
    def stamp(self) -> str:
        return f"{self.plan.hash} {self.files_key}"

    @property
    def configured(self) -> bool:
        """This plan was configured here before, on the same set of source files: Ninja re-runs
        CMake itself when a CMake file changed, so a backend may go straight to compiling. A new
        or deleted file needs CMake again (TVM before tvm_file_glob globbed without CONFIGURE_DEPENDS)."""
        stamp = self.build_dir / PLAN_STAMP
        return ((self.build_dir / "CMakeCache.txt").exists()
                and stamp.exists() and stamp.read_text().strip() == self.stamp)


@dataclass
class BackendResult:
    toolchain: dict[str, str] = field(default_factory=dict)  # cmake, ninja, cxx, llvm, nvcc
    image_id: str | None = None
    timings: dict[str, float] = field(default_factory=dict)  # configure, compile (seconds)
    commands: list[str] = field(default_factory=list)  # shell lines that reproduce the build
    extra: dict[str, Any] = field(default_factory=dict)


class BuildFailed(TvmFailure):
    """Configure or compile failed: exit 1 with the log path and the command that reproduces it."""

    def __init__(self, step: str, job: BuildJob, reproduce: str) -> None:
        from toolkit.explain import hint

        first = first_error(job.log)
        head, more = (first[0], first[1:]) if first else ("", [])
        known = hint(log_text(job.log))
        super().__init__(f"{step} failed{': ' + head if head else ''}"
                         + "".join(f"\n  {line}" for line in more)
                         + f"\n  (log: {job.log})" + (f"\n  {known}" if known else ""),
                         reproduce=reproduce)
        self.step = step
        self.log = job.log


def log_text(log: Path, lines: int = 2000) -> str:
    """The first error's neighbourhood and the end of a log, for toolkit.explain (whole TVM
    build logs run to megabytes)."""
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    first = next((i for i, ln in enumerate(text) if ERROR_LINE.search(ln)), None)
    head = text[max(0, first - 5):first + 60] if first is not None else []
    return "\n".join(head + text[-lines:])


ERROR_LINE = re.compile(r"^CMake Error|\berror\b:|^FAILED: ", re.I)
MAX_ERROR_LINES = 12


def first_error(log: Path) -> list[str]:
    """The first error in a build log with the lines that belong to it: a CMake error's
    indented message (it spans lines, after the ``CMake Error at ...`` header), or the first
    compiler ``error:`` with the source excerpt under it. Empty when there is none.

    Which line is the first error is toolkit.explain's first-cause reader's call (the one
    every tk failure goes through); this only gathers the lines under it."""
    from toolkit.explain import first_cause

    text = log_text(log).splitlines()
    cause = first_cause("\n".join(text))
    if not cause.definite:
        return []
    i = cause.line - 1
    block = [text[i].strip()[:300]]
    for nxt in text[i + 1:]:
        if cause.kind == "CMake Error":
            if not nxt.startswith((" ", "\t")) or not nxt.strip():
                break
            block.append(nxt.strip())
        elif re.match(r"^\s*(\d+\s*)?\|", nxt):  # gcc/clang/nvcc: "  123 | code", "  |   ^~~"
            block.append(nxt.rstrip()[:300])
        else:
            break
    return block[:MAX_ERROR_LINES]


def configure_argv(job: BuildJob, source_dir: Path | str | None = None,
                   build_dir: Path | str | None = None) -> list[str]:
    """``cmake -S src -B build -G Ninja -D...``; pass other paths when it runs elsewhere."""
    src = str(source_dir or job.source_dir)
    bld = str(build_dir or job.build_dir)
    return ["cmake", "-S", src, "-B", bld, *job.plan.cmake_args()]


def compile_argv(job: BuildJob, build_dir: Path | str | None = None) -> list[str]:
    argv = ["cmake", "--build", str(build_dir or job.build_dir)]
    if job.plan.targets:
        argv += ["--target", *job.plan.targets]
    if job.jobs:
        argv += ["--parallel", str(job.jobs)]
    return argv


def shell_line(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    prefix = f"cd {shlex.quote(str(cwd))} && " if cwd else ""
    envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
    return prefix + (envs + " " if envs else "") + shlex.join(argv)


def ninja_progress(line: str) -> Progress | None:
    """Ninja's ``[done/total] ...`` status line as a ``Progress`` of the compile."""
    m = NINJA_PROGRESS.match(line)
    return Progress("compile", int(m.group(1)), int(m.group(2))) if m else None


def run_logged(argv: list[str], log: Path, env: dict[str, str] | None = None,
               cwd: Path | None = None, events: Handler = ignore) -> tuple[int, float]:
    """Run a command, appending its output to ``log``; report Ninja's [n/m]; (rc, seconds)."""
    start = time.monotonic()
    with log.open("a") as out:
        out.write(f"$ {shlex.join(argv)}\n")
        out.flush()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=env, cwd=cwd, bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            moved = ninja_progress(line)
            if moved is not None:
                events(moved)
        rc = proc.wait()
    return rc, time.monotonic() - start


def read_cmake_cache(build_dir: Path) -> dict[str, str]:
    """NAME -> value from CMakeCache.txt (types dropped); empty when not configured."""
    cache = build_dir / "CMakeCache.txt"
    values: dict[str, str] = {}
    if cache.exists():
        for line in cache.read_text(errors="replace").splitlines():
            m = re.match(r"^([A-Za-z_][\w.+-]*)(?::[A-Z]+)?=(.*)$", line)
            if m:
                values[m.group(1)] = m.group(2)
    return values


CMAKE_ERROR = re.compile(r"^CMake Error\b.*$", re.M)


def log_size(log: Path) -> int:
    """Where the next step's output starts in ``log`` (``cmake_error`` reads from there)."""
    try:
        return log.stat().st_size
    except FileNotFoundError:
        return 0


def cmake_error(log: Path, start: int) -> str | None:
    """The first ``CMake Error`` line written to ``log`` from byte ``start`` on, or None.
    CMake prints some errors and exits 0: run in a build directory whose cache was made for
    another tree ("The current CMakeCache.txt directory ... is different"), it warns so and
    Ninja then compiles the other tree's sources."""
    with log.open("rb") as f:
        f.seek(start)
        m = CMAKE_ERROR.search(f.read().decode(errors="replace"))
    return m.group(0) if m else None


def foreign_cache(build_dir: Path, source_dir: Path) -> str | None:
    """Why ``build_dir``'s CMake cache is not this tree's, or None (no cache, or its own).

    CMake keeps the tree it configured (CMAKE_HOME_DIRECTORY) and where the cache was made
    (CMAKE_CACHEFILE_DIR) in the cache itself: a build directory copied with its tree (``cp
    -a tvm tvm2``) or moved still names the first, and its build.ninja compiles that tree's
    sources."""
    cache = read_cmake_cache(build_dir)
    if not cache:
        return None
    home, made_in = cache.get("CMAKE_HOME_DIRECTORY"), cache.get("CMAKE_CACHEFILE_DIR")
    if not home or not same_dir(home, source_dir):
        return f"its CMake cache was made for the sources in {home or 'an unnamed tree'}"
    if not made_in or not same_dir(made_in, build_dir):
        return f"its CMake cache was made in {made_in or 'an unnamed directory'}"
    return None


def same_dir(a: Path | str, b: Path | str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def empty_dir(path: Path, keep: tuple[str, ...] = ()) -> None:
    """Remove everything in ``path`` but the names in ``keep``."""
    for child in path.iterdir():
        if child.name in keep:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def read_build_options(build_dir: Path) -> dict[str, str]:
    """TVMBuildOptions.txt ("NAME VALUE" lines, TVM >= 0.9): the values CMake really used."""
    path = build_dir / "TVMBuildOptions.txt"
    values: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            name, _, value = line.strip().partition(" ")
            if name:
                values[name] = value.strip()
    return values


def backend(name: str):
    """The backend module; a missing one is a user-facing error, not an ImportError."""
    if name not in BACKENDS:
        raise UserError(f"--backend {name}: unknown backend (known: {', '.join(BACKENDS)})")
    try:
        return importlib.import_module(f"toolkit.builds.backends.{name}")
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("toolkit.builds.backends"):
            raise UserError(f"--backend {name}: not available in this tk") from None
        raise
