"""How true ``tk trace``'s compile time is: traced (tk's hooks taken out) against plain.

Compiles one workload (default ``builtin:mlp`` for ``llvm``) in this one process, plain
``stack.compile`` and ``toolkit.trace.in_tvm.record.trace`` interleaved so both see the same
machine load, and prints the best compile time of each, their ratio (traced / plain: 1.0
means the trace's spans add up to what an untraced compile takes), the best wall time of a
traced compile with its hooks (what tracing costs the user), and the machine load (1-minute
load average before and after, and the cores) beside them.

    python benchmarks/trace_accuracy.py [--workload builtin:mlp] [--target llvm] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402
from toolkit.trace.in_tvm import record as tracer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:mlp")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-us", type=float, default=1000.0)
    args = parser.parse_args()

    wl = workloads.load(args.workload)
    stack.compile(wl, args.target)  # warm: first-call imports and caches are not the compile
    load_before = os.getloadavg()[0]
    plain, traced, wall = [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        stack.compile(wl, args.target)
        plain.append(time.perf_counter() - start)
        t = tracer.trace(wl, args.target, min_seconds=args.min_us / 1e6)
        traced.append(next(s.seconds for s in t.spans if s.kind == "compile"))
        wall.append(t.wall_seconds)
    load_after = os.getloadavg()[0]
    # The best of each: on a shared machine load only ever adds, and it comes and goes
    # faster than a compile (medians of a few compiles swing by 2x on 2 loaded cores).
    p, t, w = (min(x) for x in (plain, traced, wall))
    print(f"{args.workload} for {args.target}, {args.repeat} compiles each, --min-us "
          f"{args.min_us:g}")
    print(f"  plain compile        {p:8.3f} s")
    print(f"  traced (hooks out)   {t:8.3f} s   traced / plain {t / p:.2f}")
    print(f"  traced, wall         {w:8.3f} s   wall / plain   {w / p:.2f}")
    print(f"  load average {load_before:.2f} -> {load_after:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
