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

The default is the minifork as the build tests make it; ``--sources 24`` adds C++ files so
a clean build weighs more against an incremental one, as in a real TVM tree.

tk runs as installed: its bytecode is compiled once first, as ``pip install`` does (into
the ``__pycache__`` directories git ignores). Where ``PYTHONDONTWRITEBYTECODE`` is set, as
on the machines this was written on, a tk process would otherwise compile its ~190 modules
from source every time it starts (~0.25 s each); the start-up line shows both.

Where tk's time goes is printed from its own report: the steps' waits for builds, the check
runs (with checkouts and store look-ups), and everything outside the steps (process
start-up, imports, git, planning, the report).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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


def tk_bisect(repo: Path, good: str, env: dict[str, str],
              parallel: int | None = None) -> tuple[float, dict]:
    slots = ["--parallel", str(parallel)] if parallel else []
    start = time.perf_counter()
    tk(env, "start", "--source", str(repo), "--good", good, "--bad", "HEAD", *slots,
       "--check", CHECK)
    tk(env, "run", "--source", str(repo))
    seconds = time.perf_counter() - start
    report = json.loads(tk(env, "report", "--json", "--source", str(repo)).stdout)
    return seconds, report


def git_bisect(repo: Path, good: str, work: Path) -> tuple[float, str, int]:
    """git bisect run in a clone, rebuilding from scratch at every step, as people do."""
    from toolkit.builds import driver as build
    from toolkit.builds.recipes import Request

    plan, _ = build.plan(Request(), repo)
    clone = work / "git-bisect-clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    (work / "config.cmake").write_text(plan.config_cmake())
    cmake_args = " ".join(f"'{a}'" for a in plan.cmake_args())
    steps = work / "steps"
    script = work / "step.sh"
    script.write_text(f"""#!/bin/sh
echo step >> {steps}
rm -rf build && mkdir build && cp {work / 'config.cmake'} build/config.cmake || exit 125
cmake -S . -B build {cmake_args} >/dev/null 2>&1 || exit 125
cmake --build build >/dev/null 2>&1 || exit 125
PYTHONPATH=$PWD/python {CHECK}
""")
    script.chmod(0o755)
    env = {**os.environ}
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
    ap.add_argument("--commits", type=int, default=64)
    ap.add_argument("--culprit", type=int, default=41)
    # The figure is for the plain minifork (0); real TVM has ~1500 C++ files, so a
    # larger N shows how the ratios move as a clean build grows against an incremental one.
    ap.add_argument("--sources", type=int, default=0,
                    help="extra C++ files in the base commit (default 0: the plain minifork)")
    ap.add_argument("--parallel", type=int, default=None,
                    help="tk's build slots (default: tk's own rule, see tk bisect start --help)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tk-bisect-bench-") as tmp:
        work = Path(tmp)
        repo = work / "fork"
        shas = make_history(repo, commits=args.commits, culprit=args.culprit,
                            sources=args.sources)
        # tk starts from nothing: an empty store, and an empty ccache of its own (a warm one
        # left by an earlier run would be a cache the empty store does not show).
        env = {**os.environ, "TK_CACHE": str(work / "cache"), "PYTHONPATH": str(REPO),
               "CCACHE_DIR": str(work / "ccache")}
        t_start_source = startup(env, repo)  # whatever bytecode there is: none, here
        compile_tk()
        t_start = startup(env, repo)
        t_tk, first = tk_bisect(repo, shas[0], env, args.parallel)
        tk(env, "reset", "--source", str(repo))
        t_again, again = tk_bisect(repo, shas[0], env, args.parallel)
        t_git, git_bad, git_steps = git_bisect(repo, shas[0], work)

    want = shas[args.culprit]
    print(f"history: {args.commits} commits of the minifork (+{args.sources} C++ files), "
          f"regression at #{args.culprit} ({want[:10]}), every 3rd commit Python-only")
    slots = f" --parallel {args.parallel}" if args.parallel else ""
    ahead = first.get("built_ahead", 0)
    print(f"tk bisect run{slots}:        {t_tk:6.1f} s  builds {first['builds'] - ahead} "
          f"(goal <= 8){f' + {ahead} built ahead in spare slots' if ahead else ''}, "
          f"probes {first['probes']}, found {first['first_bad']['hash'][:10]}"
          f"{' (right)' if first['first_bad']['hash'] == want else ' (WRONG)'}")
    print(f"  where tk's time went: {breakdown(t_tk, first)}")
    print(f"git bisect run:       {t_git:6.1f} s  clean builds {git_steps}, found "
          f"{git_bad[:10]}{' (right)' if git_bad == want else ' (WRONG)'}")
    print(f"tk bisect again:      {t_again:6.1f} s  builds {again['builds']}")
    print(f"  where tk's time went: {breakdown(t_again, again)}")
    print(f"tk process start-up:   {t_start:.2f} s (bytecode compiled), {t_start_source:.2f} s "
          "(before compiling it)")
    print(f"ratio tk / git:        {t_tk / t_git:.2f} (goal <= 0.35)")
    print(f"ratio again / first:   {t_again / t_tk:.2f} (goal <= 0.1)")


if __name__ == "__main__":
    main()
