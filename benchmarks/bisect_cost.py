"""What tk bisect saves over ``git bisect run`` with a clean rebuild per step.

On a 64-commit history of the miniature fork (tests/minifork.py) with a regression at a
known commit and every third commit touching only Python, measured side by side in one run:

- ``tk bisect run`` from an empty artifact store and an empty ccache: builds done (goal <= 8)
  and wall time;
- ``git bisect run`` in a clone, each step ``rm -rf build``, configure, build (the same
  config.cmake and CMake arguments as tk's plan) and the same check: wall time; the ratio
  tk / git (goal <= 0.35);
- ``tk bisect reset`` then the same bisection again over the same range: wall time against
  the first (goal <= 0.1).

    python benchmarks/bisect_cost.py [--commits 64] [--culprit 41] [--sources N] [--parallel N]
                                     [--again N]

``--again N`` runs the second bisection N times (a reset before each) and reports the run of
median CPU time: it lasts about a second, and one run of it on a busy machine says more about
the load than about tk.

The default is the minifork as the build tests make it; ``--sources 24`` adds C++ files so
a clean build weighs more against an incremental one, as in a real TVM tree.

``--real``: the real apache/tvm tree ($TK_FIXTURES/tvm-main.tar.xz) with a planted history on
top (``--commits``, default 24: C++ runtime, C++ compiler and Python-only commits in turn;
the runtime's ``TkBenchAdd`` breaks at ``--culprit``, default 17), its tvm-ffi a git
submodule with a tag as in a clone of apache/tvm (``--ffi files``: plain files, as in the
fixture). The check loads the runtime library and calls ``TkBenchAdd``, so both sides build
the runtime alone: ``tk bisect start --runtime-only`` against ``git bisect run`` with a clean
``cmake --build build --target runtime`` per step. Then ``tk bisect`` again, and a build of
the user's own tree after one more edit: the tvm-ffi wheels each built (0 after the first
bisection: they are keyed by their sources' content, wherever those are checked out).
About an hour on 2 cores.

    python benchmarks/bisect_cost.py --real [--commits 24] [--culprit 17] [--ffi files]

tk runs as installed: its bytecode is compiled once first, as ``pip install`` does (into
the ``__pycache__`` directories git ignores). Where ``PYTHONDONTWRITEBYTECODE`` is set, as
on the machines this was written on, a tk process would otherwise compile its ~190 modules
from source every time it starts (~0.25 s each); the start-up line shows both.

Where tk's time goes is printed from its own report: the steps' waits for builds, the check
runs (with checkouts and store look-ups), and everything outside the steps (process
start-up, imports, git, planning, the report). CPU times are those of the processes each
side ran and waited for; tk's packing of the builds a run displaced happens after, in a
process of its own, and is printed apart (from the store's pack.log).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from bisect_helpers import CHECK, make_history  # noqa: E402


def tk(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "toolkit", "bisect", *args],
                          capture_output=True, text=True, env=env, cwd=REPO)
    if proc.returncode != 0:
        sys.exit(f"tk bisect {args[0]} failed: {proc.stderr.strip()[-2000:]}")
    return proc


def tk_bisect(repo: Path, good: str, env: dict[str, str], parallel: int | None = None,
              check: str = CHECK, *flags: str) -> tuple[float, float, dict]:
    """``tk bisect start`` and ``run``: wall and CPU seconds (the report's read after)."""
    slots = ["--parallel", str(parallel)] if parallel else []
    cpu, start = children_cpu(), time.perf_counter()
    tk(env, "start", "--source", str(repo), "--good", good, "--bad", "HEAD", *slots, *flags,
       "--check", check)
    tk(env, "run", "--source", str(repo))
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    report = json.loads(tk(env, "report", "--json", "--source", str(repo)).stdout)
    return seconds, cpu, report


def git_bisect(repo: Path, good: str, work: Path, request: object = None, check: str = CHECK,
               step_env: str = "PYTHONPATH=$PWD/python") -> tuple[float, str, int]:
    """git bisect run in a clone, rebuilding from scratch at every step, as people do: the
    config.cmake, CMake arguments and targets of tk's plan for ``request``, no ccache."""
    from toolkit.builds import driver as build
    from toolkit.builds.recipes import Request
    from toolkit.builds.tools import cmake_binary

    plan, _ = build.plan(request or Request(), repo)
    clone = work / "git-bisect-clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    # The submodules the user initialised (tvm-ffi), not the optional ones nobody fetched.
    status = subprocess.run(["git", "-C", str(repo), "submodule", "status"], check=True,
                            capture_output=True, text=True).stdout.splitlines()
    mine = [line.split()[1] for line in status if not line.startswith("-")]
    if mine:
        subprocess.run(["git", "-c", "protocol.file.allow=always", "-C", str(clone),
                        "submodule", "update", "--init", "-q", "--", *mine], check=True)
    (work / "config.cmake").write_text(plan.config_cmake())
    cmake = cmake_binary()
    cmake_args = " ".join(f"'{a}'" for a in plan.cmake_args())
    targets = f" --target {' '.join(plan.targets)}" if plan.targets else ""
    steps = work / "steps"
    script = work / "step.sh"
    script.write_text(f"""#!/bin/sh
echo step >> {steps}
rm -rf build && mkdir build && cp {work / 'config.cmake'} build/config.cmake || exit 125
{cmake} -S . -B build {cmake_args} >/dev/null 2>&1 || exit 125
{cmake} --build build{targets} >/dev/null 2>&1 || exit 125
{step_env} {check}
""")
    script.chmod(0o755)
    # TVM's CMake compiles through ccache wherever one is installed (USE_CCACHE AUTO): off,
    # or every step after the first would be mostly cache hits, not the clean build promised.
    env = {**os.environ, "CCACHE_DISABLE": "1"}
    env.pop("TVM_LIBRARY_PATH", None)
    start = time.perf_counter()
    subprocess.run(["git", "bisect", "start", "HEAD", good], cwd=clone, check=True,
                   capture_output=True)
    proc = subprocess.run(["git", "bisect", "run", str(script)], cwd=clone, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    first_bad = next((ln.split()[0] for ln in proc.stdout.splitlines()
                      if "is the first bad commit" in ln), "?")
    return seconds, first_bad, len(steps.read_text().splitlines())


def children_cpu() -> float:
    """CPU seconds of the processes this one started and waited for, theirs included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def compile_tk() -> None:
    """tk's bytecode, as an installed tk has it (``__pycache__`` is ignored by git)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "toolkit")],
                   check=True, stdout=subprocess.DEVNULL)


def startup(env: dict[str, str], repo: Path, repeat: int = 3) -> float:
    """Best wall time of a tk bisect process that does next to nothing."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "toolkit", "bisect", "status", "--source",
                        str(repo)], capture_output=True, env=env, cwd=REPO)
        best = min(best, time.perf_counter() - start)
    return best


def breakdown(seconds: float, report: dict) -> str:
    steps = report["steps"]
    waited = sum(s["build_seconds"] for s in steps)  # building, or a spare slot finishing
    in_steps = sum(s["seconds"] for s in steps)
    runs = sum(len(s["returncodes"]) for s in steps if not s["known"])
    return (f"steps waiting for builds {waited:.1f} s, check runs ({runs}) and checkouts "
            f"{in_steps - waited:.1f} s, outside the steps (start-up, git, plan, report) "
            f"{seconds - in_steps:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", action="store_true",
                    help="the real TVM tree from $TK_FIXTURES/tvm-main.tar.xz (about an hour)")
    ap.add_argument("--commits", type=int, default=None, help="default 64 (--real: 24)")
    ap.add_argument("--culprit", type=int, default=None, help="default 41 (--real: 17)")
    # The figure is for the plain minifork (0); real TVM has ~1500 C++ files, so a
    # larger N shows how the ratios move as a clean build grows against an incremental one.
    ap.add_argument("--sources", type=int, default=0,
                    help="extra C++ files in the base commit (default 0: the plain minifork)")
    ap.add_argument("--ffi", choices=("submodule", "files"), default="submodule",
                    help="--real: the tree's tvm-ffi as a tagged git submodule (a clone of "
                         "apache/tvm) or as plain files of the tree (the fixture)")
    ap.add_argument("--parallel", type=int, default=None,
                    help="tk's build slots (default: tk's own rule, see tk bisect start --help)")
    ap.add_argument("--again", type=int, default=1, metavar="N",
                    help="run the second bisection N times; the run of median CPU is reported "
                         "(default 1)")
    args = ap.parse_args()
    if args.again < 1:
        ap.error("--again must be at least 1")
    if args.real:
        real(args.commits or 24, args.culprit or 17, args.ffi, args.parallel)
    else:
        minifork(args.commits or 64, args.culprit or 41, args.sources, args.parallel, args.again)


def minifork(commits: int, culprit: int, sources: int, parallel: int | None,
             repeat: int = 1) -> None:
    with tempfile.TemporaryDirectory(prefix="tk-bisect-bench-") as tmp:
        work = Path(tmp)
        repo = work / "fork"
        shas = make_history(repo, commits=commits, culprit=culprit, sources=sources)
        # tk starts from nothing: an empty store, and an empty ccache of its own (a warm one
        # left by an earlier run would be a cache the empty store does not show).
        env = {**os.environ, "TK_CACHE": str(work / "cache"), "PYTHONPATH": str(REPO),
               "CCACHE_DIR": str(work / "ccache")}
        t_start_source = startup(env, repo)  # whatever bytecode there is: none, here
        compile_tk()
        t_start = startup(env, repo)
        t_tk, c_tk, first = tk_bisect(repo, shas[0], env, parallel)
        runs = []
        for _ in range(repeat):
            tk(env, "reset", "--source", str(repo))
            runs.append(tk_bisect(repo, shas[0], env, parallel))
        # The run of median CPU time: its wall time and its report with it.
        t_again, c_again, again = sorted(runs, key=lambda r: r[1])[len(runs) // 2]
        cpu = children_cpu()
        t_git, git_bad, git_steps = git_bisect(repo, shas[0], work)
        c_git = children_cpu() - cpu
        load = os.getloadavg()[0]

    want = shas[culprit]
    print(f"history: {commits} commits of the minifork (+{sources} C++ files), "
          f"regression at #{culprit} ({want[:10]}), every 3rd commit Python-only")
    slots = f" --parallel {parallel}" if parallel else ""
    ahead = first.get("built_ahead", 0)
    print(f"tk bisect run{slots}:        {t_tk:6.1f} s ({c_tk:.1f} s CPU)  builds "
          f"{first['builds'] - ahead} "
          f"(goal <= 8){f' + {ahead} built ahead in spare slots' if ahead else ''}, "
          f"probes {first['probes']}, found {first['first_bad']['hash'][:10]}"
          f"{' (right)' if first['first_bad']['hash'] == want else ' (WRONG)'}")
    print(f"  where tk's time went: {breakdown(t_tk, first)}")
    print(f"git bisect run:       {t_git:6.1f} s ({c_git:.1f} s CPU)  clean builds {git_steps}, "
          f"found {git_bad[:10]}{' (right)' if git_bad == want else ' (WRONG)'}")
    of = (f", the median of {repeat} by CPU (wall {min(r[0] for r in runs):.2f}-"
          f"{max(r[0] for r in runs):.2f} s, CPU {min(r[1] for r in runs):.2f}-"
          f"{max(r[1] for r in runs):.2f} s)") if repeat > 1 else ""
    print(f"tk bisect again:      {t_again:6.1f} s ({c_again:.2f} s CPU)  builds "
          f"{max(r[2]['builds'] for r in runs)}{of}")
    print(f"  where tk's time went: {breakdown(t_again, again)}")
    print(f"tk process start-up:   {t_start:.2f} s (bytecode compiled), {t_start_source:.2f} s "
          "(before compiling it)")
    print(f"ratio tk / git:        {t_tk / t_git:.2f} wall, {c_tk / c_git:.2f} CPU "
          "(goal <= 0.35)")
    print(f"ratio again / first:   {t_again / t_tk:.2f} wall, {c_again / c_tk:.2f} CPU "
          "(goal <= 0.1)")
    print(f"{os.cpu_count()} cores, load average {load:.1f} at the end")


# --- the real tree -------------------------------------------------------------------------

FFI = "3rdparty/tvm-ffi"
# Submodules apache/tvm records that a clone without --recursive leaves empty (the fixture
# holds them empty too): gitlinks nobody initialised.
OPTIONAL = ["3rdparty/OpenCL-Headers", "3rdparty/cutlass", "3rdparty/cutlass_fpA_intB_gemm",
            "3rdparty/libflash_attn"]
PROBE = "src/runtime/file_utils.cc"  # compiled into libtvm_runtime: the planted function's home
ADD = '\nextern "C" __attribute__((visibility("default"))) int TkBenchAdd(int a, int b) {{ return {}; }}\n'
REAL_CHECK = ("python -c \"import ctypes, os, sys; lib = ctypes.CDLL(os.path.join("
              "os.environ['TVM_LIBRARY_PATH'], 'libtvm_runtime.so')); "
              "sys.exit(0 if lib.TkBenchAdd(2, 2) == 4 else 1)\"")
RUNTIME = ["src/runtime/logging.cc", "src/runtime/module.cc", "src/runtime/tensor.cc",
           "src/runtime/workspace_pool.cc", "src/runtime/thread_pool.cc"]
COMPILER = ["src/relax/transform/fuse_ops.cc", "src/tirx/transform/storage_rewrite.cc",
            "src/relax/transform/legalize_ops.cc", "src/tirx/transform/lower_tvm_builtin.cc"]
PYTHON = ["python/tvm/__init__.py", "python/tvm/runtime/__init__.py"]


def rgit(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "user.name=tk",
                           "-c", "user.email=bench@tk.invalid", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def append(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.write_text(path.read_text() + text)


def real_history(work: Path, commits: int, culprit: int, ffi: str) -> tuple[Path, list[str]]:
    """The fixture as the first commit, with ``TkBenchAdd`` planted in the runtime; then
    ``commits`` commits: C++ runtime, C++ compiler and Python-only changes in turn, and at
    ``culprit`` the runtime change that breaks ``TkBenchAdd``."""
    tarball = Path(os.environ.get("TK_FIXTURES", "")) / "tvm-main.tar.xz"
    if not tarball.is_file():
        sys.exit("--real needs TK_FIXTURES: the directory holding tvm-main.tar.xz")
    with tarfile.open(tarball) as tf:
        tf.extractall(work, filter="tar")
    repo = work / "tvm-main"
    append(repo, PROBE, ADD.format("a + b"))
    rgit(repo, "init", "-q", "-b", "main")
    if ffi == "submodule":
        # As in a clone of apache/tvm: tvm-ffi a submodule of its own, at a tagged commit
        # (setuptools-scm then names its wheel from git).
        sub = work / "tvm-ffi"
        shutil.move(str(repo / FFI), sub)
        rgit(sub, "init", "-q", "-b", "main")
        rgit(sub, "add", "-A", "--force")
        rgit(sub, "commit", "-q", "-m", "tvm-ffi")
        rgit(sub, "tag", "v0.1.14")
        for i, path in enumerate(OPTIONAL, 1):
            rgit(repo, "update-index", "--add", "--cacheinfo", f"160000,{str(i) * 40},{path}")
        rgit(repo, "submodule", "add", "-q", "--force", str(sub), FFI)
    rgit(repo, "add", "-A", "--force")
    rgit(repo, "commit", "-q", "-m", "base: apache/tvm main, TkBenchAdd planted")
    shas = [rgit(repo, "rev-parse", "HEAD")]
    for i in range(1, commits + 1):
        if i == culprit:
            path = repo / PROBE
            path.write_text(path.read_text().replace("return a + b;", "return a + b + 1;"))
            kind = "runtime: TkBenchAdd off by one"
        elif i % 3 == 0:
            append(repo, PYTHON[i % len(PYTHON)], f"\n# step {i}: a Python-only change\n")
            kind = "python only"
        elif i % 3 == 1:
            append(repo, RUNTIME[i % len(RUNTIME)],
                   f'\nextern "C" int TkBenchRuntimeStep{i}() {{ return {i}; }}\n')
            kind = "C++ runtime"
        else:
            append(repo, COMPILER[i % len(COMPILER)],
                   f'\nextern "C" int TkBenchCompilerStep{i}() {{ return {i}; }}\n')
            kind = "C++ compiler"
        rgit(repo, "commit", "-q", "-am", f"step {i}: {kind}")
        shas.append(rgit(repo, "rev-parse", "HEAD"))
    return repo, shas


def wheels_built(cache: Path) -> int:
    """tvm-ffi wheels the store holds (one directory per sources' content and Python)."""
    return len(list((cache / "wheels").glob("*/*.whl")))


def packing_cpu(cache: Path) -> str:
    """What the background packers wrote in the store's pack.log."""
    log = cache / "pack.log"
    cpu = [float(m) for m in re.findall(r"CPU ([\d.]+) s", log.read_text())] if log.exists() \
        else []
    return f"{len(cpu)} packer runs, {sum(cpu):.1f} s CPU" if cpu else "no packer ran"


def real(commits: int, culprit: int, ffi: str, parallel: int | None) -> None:
    from toolkit.builds import gc
    from toolkit.builds.recipes import Request

    began = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="tk-bisect-real-") as tmp:
        work = Path(tmp)
        repo, shas = real_history(work, commits, culprit, ffi)
        cache = work / "cache"
        env = {**os.environ, "TK_CACHE": str(cache), "PYTHONPATH": str(REPO),
               "CCACHE_DIR": str(work / "ccache")}
        env.pop("TVM_LIBRARY_PATH", None)
        compile_tk()

        def bisect() -> tuple[float, float, dict]:
            return tk_bisect(repo, shas[0], env, parallel, REAL_CHECK, "--runtime-only")

        t_tk, c_tk, first = bisect()
        wheels_first = wheels_built(cache)
        os.environ["TK_CACHE"] = str(cache)  # this process's wait for the packers
        gc.wait_for_packing()
        tk(env, "reset", "--source", str(repo))
        t_again, c_again, again = bisect()
        wheels_again = wheels_built(cache) - wheels_first
        # The user's own tree, one runtime source edited: built beside the tree, its tvm-ffi
        # wheel the one the bisection's worktree built.
        append(repo, RUNTIME[0], '\nextern "C" int TkBenchMine() { return 1; }\n')
        cpu, start = children_cpu(), time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "-C", str(repo),
                               "--runtime-only", "--json"], capture_output=True, text=True,
                              env=env)
        t_mine, c_mine = time.perf_counter() - start, children_cpu() - cpu
        if proc.returncode != 0:
            sys.exit(f"tk build of the tree failed: {proc.stderr.strip()[-2000:]}")
        mine = json.loads(proc.stdout)
        wheels_mine = wheels_built(cache) - wheels_first - wheels_again
        gc.wait_for_packing()
        packed = packing_cpu(cache)
        load.append(os.getloadavg()[0])
        # tk's side now, on stderr: git bisect run's clean builds take most of the hour.
        print(f"tk's side done at {time.strftime('%H:%M:%S')}: first {t_tk:.1f} s wall, "
              f"{c_tk:.1f} s CPU, builds {first['builds']}, wheels {wheels_first}; again "
              f"{t_again:.1f} s, {c_again:.2f} s CPU, builds {again['builds']}, wheels "
              f"{wheels_again}; your tree {t_mine:.1f} s, wheels {wheels_mine}; load "
              f"{load[-1]:.1f}", file=sys.stderr, flush=True)
        cpu = children_cpu()
        t_git, git_bad, git_steps = git_bisect(repo, shas[0], work,
                                               Request(fragments={"runtime-only": ""}),
                                               REAL_CHECK, "TVM_LIBRARY_PATH=$PWD/build/lib")
        c_git = children_cpu() - cpu
        load.append(os.getloadavg()[0])

    want = shas[culprit]
    print(f"real tree: apache/tvm main ($TK_FIXTURES/tvm-main.tar.xz) + {commits} planted "
          f"commits (C++ runtime, C++ compiler, Python-only in turn; tvm-ffi as {ffi}), "
          f"regression at #{culprit} ({want[:10]}); both sides build the runtime alone")
    print(f"started {began}, {os.cpu_count()} cores, load average {load[0]:.1f} at the start, "
          f"{load[1]:.1f} before git bisect, {load[2]:.1f} at the end")
    ahead = first.get("built_ahead", 0)
    print(f"tk bisect run:        {t_tk:7.1f} s wall, {c_tk:7.1f} s CPU  builds "
          f"{first['builds'] - ahead}{f' + {ahead} ahead' if ahead else ''}, probes "
          f"{first['probes']}, tvm-ffi wheels built {wheels_first}, found "
          f"{first['first_bad']['hash'][:10]}"
          f"{' (right)' if first['first_bad']['hash'] == want else ' (WRONG)'}")
    print(f"  where tk's time went: {breakdown(t_tk, first)}")
    print(f"git bisect run:       {t_git:7.1f} s wall, {c_git:7.1f} s CPU  clean builds "
          f"{git_steps}, found {git_bad[:10]}{' (right)' if git_bad == want else ' (WRONG)'}")
    print(f"tk bisect again:      {t_again:7.1f} s wall, {c_again:7.1f} s CPU  builds "
          f"{again['builds']}, tvm-ffi wheels built {wheels_again}")
    print(f"your tree, one runtime source edited, tk build --runtime-only: {t_mine:.1f} s wall, "
          f"{c_mine:.1f} s CPU (compile {mine['timings'].get('compile', 0):.1f} s), tvm-ffi "
          f"wheels built {wheels_mine}")
    print(f"tk's packing in the background (not in the figures above): {packed}")
    print(f"ratio tk / git:        {t_tk / t_git:.2f} wall, {c_tk / c_git:.2f} CPU "
          "(goal <= 0.25)")
    print(f"ratio again / first:   {t_again / t_tk:.3f} wall")


if __name__ == "__main__":
    main()
