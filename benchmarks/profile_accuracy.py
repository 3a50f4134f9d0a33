"""How well ``tk profile``'s per-operator times add up, and what its instrument costs.

For builtin:mlp40, builtin:convnet and builtin:attention on llvm, prints in one run:

* accuracy: the sum of the per-operator medians (each row's median time per run, as
  ``tk profile`` reports it) divided by the median end-to-end time of the same executable
  run without any instrument (goal 0.85 - 1.15); the profiler interleaves plain and timed
  runs, so load from other processes lands on both alike;
* the same ratio with means, and as the median over runs of each run's operator sum
  ("run-sum"): means add up exactly, medians only for symmetric noise, and a loaded machine
  preempts a long run almost always and a short call rarely, so there the sum of
  per-operator medians falls below the end-to-end median while the run-sum tracks it;
* the median ratio again with every clock read being the calling thread's CPU time
  (``time.thread_time``), which other processes taking the core do not inflate - valid
  with one TVM thread, where all the work runs on the calling thread;
* the instrument's overhead per VM call: (a run with a do-nothing ``set_instrument`` hook -
  a run without) / VM calls per run, in microseconds (goal <= 10), measured as CPU time of
  the calling thread, which other processes taking the core do not inflate (with one TVM
  thread all the work runs on that thread); median and minimum over interleaved repeats;
* tk's own timing hook's overhead per VM call the same way (it also calls pure builtins a
  second time to time them).

    python benchmarks/profile_accuracy.py [--repeat N] [--threads N] [WORKLOAD ...]

``--threads`` (default 1) sets TVM_NUM_THREADS: on a shared machine a worker thread that
loses its core makes a whole parallel kernel wait for it, which turns run times bimodal.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = ["builtin:mlp40", "builtin:convnet", "builtin:attention"]


def hook_overhead(prepared, hook, repeat: int) -> tuple[float, float, int]:
    """Per-call CPU-time cost of ``hook`` over no hook: (median-based, min-based, calls)."""
    import numpy as np

    from toolkit.tvm_side.profile.timing import CallTimer

    entry, args = prepared.workload.entry, prepared.args
    plain = prepared.make_vm()[entry]
    vm = prepared.make_vm()
    vm.set_instrument(hook)
    hooked = vm[entry]
    counter = CallTimer(None, prepared.kernels)
    counting = prepared.make_vm()
    counting.set_instrument(counter)
    counter.begin_run(describe=False)
    counting[entry](*args)
    calls = len(counter.calls)
    cpu: dict[str, list[float]] = {"plain": [], "hooked": []}
    for _ in range(3):
        plain(*args), hooked(*args)
    for _ in range(repeat):
        for name, fn in (("plain", plain), ("hooked", hooked)):
            start = time.thread_time()
            fn(*args)
            cpu[name].append(time.thread_time() - start)
    med = (np.median(cpu["hooked"]) - np.median(cpu["plain"])) * 1e6 / calls
    low = (np.min(cpu["hooked"]) - np.min(cpu["plain"])) * 1e6 / calls
    return float(med), float(low), calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", default="1", help="TVM_NUM_THREADS ('' keeps the default)")
    parser.add_argument("--target", default="llvm")
    args = parser.parse_args()
    if args.threads:
        os.environ["TVM_NUM_THREADS"] = args.threads  # before tvm starts its thread pool
    sys.path.insert(0, str(REPO))
    import numpy as np

    from toolkit.profile import report
    from toolkit.tvm_side.profile import header_for, prepare, timing

    print(f"target {args.target}, {args.repeat} repeats after {args.warmup} warm-up, "
          f"TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS', 'default')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    head = (f"{'workload':18} {'calls':>5} {'e2e median us':>13} {'sum op medians':>14} "
            f"{'ratio':>6} {'mean':>6} {'run-sum':>7} {'cpu':>6} {'hook us/call med/min':>20} "
            f"{'tk timer us/call med/min':>24}  ok")
    print(head)
    print("-" * len(head))
    failed = 0
    for workload in args.workloads:
        start = time.perf_counter()
        p = prepare(workload, args.target)
        timings = timing.measure(p.make_vm, p.workload.entry, p.args, p.dev,
                                 repeat=args.repeat, warmup=args.warmup, gpu=p.gpu,
                                 kernels=p.kernels)
        header = header_for(workload, args.target, p.target, p.dev, p.gpu, args.repeat,
                            args.warmup, timings.method)
        rep = report.build(timings, p.kernels, header)
        s = rep.summary
        ratio = s["accounted_ratio"]
        runs = rep.runs_us
        mean_ratio = (sum(float(np.mean(v)) for k, v in runs.items() if k != report.E2E)
                      / float(np.mean(runs[report.E2E])))
        hook_med, hook_min, calls = hook_overhead(p, _noop,
                                                  args.repeat)
        timer_med, timer_min, _ = hook_overhead(p, timing.CallTimer(None, p.kernels),
                                          args.repeat)
        cpu = timing.measure(p.make_vm, p.workload.entry, p.args, p.dev, repeat=args.repeat,
                             warmup=args.warmup, gpu=p.gpu, kernels=p.kernels,
                             clock=time.thread_time)
        cpu_ratio = report.build(cpu, p.kernels, header).summary["accounted_ratio"]
        run_sum_ratio = s["operators_run_median_us"] / s["e2e_median_us"]
        ok = 0.85 <= ratio <= 1.15 and hook_med <= 10  # the goals as stated: wall medians
        failed += not ok
        print(f"{workload:18} {calls:5d} {s['e2e_median_us']:13.1f} {s['accounted_us']:14.1f} "
              f"{ratio:6.3f} {mean_ratio:6.3f} {run_sum_ratio:7.3f} {cpu_ratio:6.3f} "
              f"{hook_med:11.2f}/{hook_min:<8.2f} "
              f"{timer_med:15.2f}/{timer_min:<8.2f}  {'yes' if ok else 'NO'}"
              f"   ({time.perf_counter() - start:.0f} s)")
    print("ratio = sum of per-operator medians / end-to-end median (wall clock); mean, run-sum:"
          " the same with means / with each run's operator sum; cpu: ratio on thread CPU time")
    print("goals: ratio within 0.85-1.15, hook overhead <= 10 us per VM call; "
          f"load average now {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


def _noop(*_: object) -> int:
    return 0


if __name__ == "__main__":
    sys.exit(main())
