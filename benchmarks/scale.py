"""Cost against model size: tk dump-ir and tk profile on builtin:mlp40 and builtin:mlp400.

builtin:mlp400 is mlp40 ten times over (400 layers, each with kernels of its own). For each
workload, in this one process: the plain compile; the whole ``tk dump-ir`` (index, store,
page); ``tk profile``'s measurement (compile with the kernel capture, cost analysis, warm-up
and timed runs through the VM instrument) and its report (built, then written as csv, json,
md and html). Prints CPU time (this process, all its threads, and every child it waited for)
and wall time of each, the kernels each compile made, and the last workload over the first:
cost that grows linearly grows as the kernels do. Beside it, dump-ir and profile over the
plain compile of the same model: a recorder that grows faster than the compile shows as a
ratio rising with size.

    taskset -c 0 python benchmarks/scale.py [--repeat 1] [--runs 20] [WORKLOAD ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.dumpir.in_tvm import dump as dumper  # noqa: E402
from toolkit.profile import report as reporting  # noqa: E402
from toolkit.profile.in_tvm import measure  # noqa: E402
from toolkit.profile.records import Measured  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402

WORKLOADS = ["builtin:mlp40", "builtin:mlp400"]
PARTS = ["plain compile", "tk dump-ir", "profile: measure", "profile: report"]


def cpu_seconds() -> float:
    """CPU time of this process (every thread) and of the children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (CPU, wall) seconds of ``repeat`` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = cpu_seconds(), time.perf_counter()
        fn()
        cpu.append(cpu_seconds() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall)


def measure_workload(source: str, target: str, repeat: int, runs: int,
                     scratch: Path) -> tuple[int, dict[str, tuple[float, float]]]:
    wl = workloads.load(source)
    stack.compile(wl, target)  # warm-up: imports, LLVM initialisation
    measured: list[Measured] = []
    figures = {
        "plain compile": timed(lambda: stack.compile(wl, target), repeat),
        "tk dump-ir": timed(lambda: dumper.dump(wl, target, scratch / "dump"), repeat),
        "profile: measure": timed(lambda: measured.append(
            measure.profile(wl, target, repeat=runs, warmup=3)), repeat),
        "profile: report": timed(lambda: reporting.build(measured[-1]).write(
            scratch / "profile", ["csv", "json", "md", "html"]), repeat),
    }
    return len(measured[-1].kernels), figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20, help="tk profile --repeat")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="tk-scale-bench-"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load_before = os.getloadavg()[0]
    results = {}
    for source in args.workloads:
        results[source] = measure_workload(source, args.target, args.repeat, args.runs, scratch)
        shutil.rmtree(scratch / "dump", ignore_errors=True)
    load_after = os.getloadavg()[0]
    shutil.rmtree(scratch, ignore_errors=True)

    print(f"{', '.join(args.workloads)} for {args.target}, median of {args.repeat}; "
          f"profile {args.runs} runs after 3 warm-up")
    print(f"  machine load: {load_before:.1f} before, {load_after:.1f} after (1-minute load "
          f"average) on {os.cpu_count()} cores; this process may run on {cores}")
    for source, (kernels, figures) in results.items():
        plain_cpu = figures["plain compile"][0]
        print(f"  {source}: {kernels} kernels")
        for part in PARTS:
            cpu, wall = figures[part]
            over = "" if part == "plain compile" else f"   {cpu / plain_cpu:5.2f} x plain CPU"
            print(f"    {part:<17} {cpu:8.2f} s CPU {wall:8.2f} s wall{over}")
    first, last = args.workloads[0], args.workloads[-1]
    if first != last:
        (k0, f0), (k1, f1) = results[first], results[last]
        print(f"  {last} / {first}: kernels x{k1 / k0:.1f} (linear cost grows as much)")
        for part in PARTS:
            print(f"    {part:<17} x{f1[part][0] / f0[part][0]:5.1f} CPU  "
                  f"x{f1[part][1] / f0[part][1]:5.1f} wall")


if __name__ == "__main__":
    main()
