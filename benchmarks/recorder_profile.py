"""Where tk dump-ir's own time goes, and how each part grows from one workload to a bigger one.

Runs ``tk dump-ir`` (the library call, as the CLI makes it: no texts rendered) under
cProfile for each workload (default ``builtin:mlp40`` then ``builtin:mlp400``, ten times its
layers and kernels) after one plain compile to warm up, and prints, for the functions with
the most time of their own, that time on each workload and the ratio: linear growth is the
ratio of the plain compiles (about 10 for these two), printed first. cProfile slows Python
code more than C++, so the figures say where the time goes and how it grows, not what a run
costs without the profiler: ``benchmarks/dumpir_overhead.py`` says that. The structural
hashes, the recorder's largest part, are also timed per call by what was hashed (a Relax
function or a PrimFunc, plain or with free variables mapped): the count, the total and the
time a call, on each workload.

    taskset -c 0 python benchmarks/recorder_profile.py [--top 25] [WORKLOAD WORKLOAD]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.dumpir.in_tvm import dump as dumper  # noqa: E402
from toolkit.stack import compat  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402

Hashes = dict[str, list[float]]  # kind -> [calls, seconds]


def timed_hashes(hashes: Hashes) -> None:
    """Make every structural hash tk takes count into ``hashes`` by what it hashed."""
    real = compat.structural_hash

    def factory():  # noqa: ANN202 - returns what compat.structural_hash returns
        hash_ = real()

        def timed(obj, **kwargs):  # noqa: ANN001, ANN202
            start = time.perf_counter()
            value = hash_(obj, **kwargs)
            kind = type(obj).__name__ + (" (free vars mapped)" if kwargs else "")
            entry = hashes.setdefault(kind, [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - start
            return value
        return timed

    compat.structural_hash = factory  # type: ignore[assignment]


def profile(source: str, scratch: Path, hashes: Hashes,
            ) -> tuple[float, float, dict[str, tuple[int, float]]]:
    """(plain compile CPU, dump CPU, {function: (calls, own seconds)}) for one workload."""
    wl = workloads.load(source)
    start = time.process_time()
    stack.compile(wl, "llvm")
    plain = time.process_time() - start
    profiler = cProfile.Profile()
    start = time.process_time()
    profiler.runcall(dumper.dump, wl, "llvm", scratch / "dump")
    dumped = time.process_time() - start
    stats = pstats.Stats(profiler)
    own = {}
    for (path, line, name), (_, calls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(path).name}:{line}({name})" if line else name
        own[where] = (calls, tottime)
    shutil.rmtree(scratch / "dump", ignore_errors=True)
    return plain, dumped, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=["builtin:mlp40", "builtin:mlp400"])
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if len(args.workloads) != 2:
        parser.error("give two workloads, the small one first")
    scratch = Path(tempfile.mkdtemp(prefix="tk-recorder-profile-"))
    load_before = os.getloadavg()[0]
    hashed: tuple[Hashes, Hashes] = ({}, {})
    timed = compat.structural_hash
    small = profile(args.workloads[0], scratch, hashed[0])
    timed_hashes(hashed[0])
    profile(args.workloads[0], scratch, hashed[0])
    compat.structural_hash = timed
    big = profile(args.workloads[1], scratch, hashed[1])
    timed_hashes(hashed[1])
    profile(args.workloads[1], scratch, hashed[1])
    compat.structural_hash = timed
    load_after = os.getloadavg()[0]
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{args.workloads[0]} -> {args.workloads[1]}, llvm; load {load_before:.1f} before, "
          f"{load_after:.1f} after; this process may run on {len(os.sched_getaffinity(0))} "
          "core(s)")
    print(f"  plain compile CPU {small[0]:.2f} s -> {big[0]:.2f} s: x{big[0] / small[0]:.1f} "
          "(linear)")
    print(f"  tk dump-ir CPU under cProfile {small[1]:.2f} s -> {big[1]:.2f} s: "
          f"x{big[1] / small[1]:.1f}")
    print(f"  {'function (own time)':<58} {'small s':>8} {'big s':>8} {'ratio':>6} "
          f"{'calls small -> big':>22}")
    names = sorted(big[2], key=lambda n: -big[2][n][1])[:args.top]
    for name in names:
        calls_b, t_b = big[2][name]
        calls_s, t_s = small[2].get(name, (0, 0.0))
        ratio = f"{t_b / t_s:6.1f}" if t_s > 0 else "   new"
        print(f"  {name[:58]:<58} {t_s:8.3f} {t_b:8.3f} {ratio} {calls_s:>10} -> {calls_b:<10}")
    print("  structural hashes, timed in a second dump of each without cProfile:")
    for kind in sorted(hashed[1], key=lambda k: -hashed[1][k][1]):
        cs, ts = hashed[0].get(kind, [0, 0.0])
        cb, tb = hashed[1][kind]
        per = (f"{ts / cs * 1e6:7.1f} -> {tb / cb * 1e6:7.1f} us a call" if cs
               else f"{tb / cb * 1e6:.1f} us a call")
        print(f"    {kind:<34} {cs:>7} -> {cb:<7} calls  {ts:7.3f} -> {tb:7.3f} s  {per}")


if __name__ == "__main__":
    main()
