"""How well ``tk profile``'s per-operator times add up, and what its instrument costs.

For builtin:mlp40, builtin:convnet and builtin:attention (and any WORKLOAD given), prints in
one run, per workload:

* ratio: the report's parts (kernels + builtins on the CPU; GPU busy + host overhead on a
  GPU) over the median end-to-end time of the same executable run without any instrument,
  interleaved with the timed runs (goal 0.85 - 1.15). On the CPU with one TVM thread every
  time is the calling thread's CPU time (``tk profile``'s clock there), which other
  processes taking the core do not inflate;
* kernels: the sum of kernel times alone over end to end (on a GPU: device time, goal
  >= 0.85 and <= 1);
* alone: how many kernels of 10 us or more are within 15% of the same PrimFunc timed alone
  by TVM's ``time_evaluator`` (number 100, on the arguments it got in a real run); only
  where the profile's clock is wall time too (GPU, or several TVM threads), "-" otherwise;
* the instrument's overhead per VM call (a run with a do-nothing hook - a run without,
  over calls; goal <= 10 us) and tk's timing hook's, both on thread CPU time.

    python benchmarks/profile_accuracy.py [--target llvm|cuda] [--repeat N] [--threads N] [--wall]
                                          [--json FILE] [--no-cuda-bindings] [--filler hold|memset]
                                          [WORKLOAD ...]

``--target cuda`` needs a CUDA GPU and says so when there is none. On a GPU the checks are
the issue's: kernel device time <= end to end and >= 0.85 of it, every kernel of 10 us or
more within 15% of itself alone, "unaccounted" (idle gaps) >= 0.
``--no-cuda-bindings`` times as if cuda-bindings were not installed: the host-side fallback,
which the report must name (TVM then compiles CUDA with nvcc, TVM_CUDA_COMPILE_MODE=nvcc:
its default, NVRTC, needs cuda-bindings too). ``--json FILE`` also writes every figure, per workload and per
timed-alone kernel, for benchmarks/gpu/run.
``--filler memset`` times CUDA kernels behind tk's first filler, 128 MiB memsets, instead of
the hold kernel (``toolkit/profile/in_tvm/devtimer.py``): the two side by side show what the
filler does to the kernels behind it.
``--threads`` (default 1) sets TVM_NUM_THREADS: on a shared machine a worker thread that
loses its core makes a whole parallel kernel wait for it, which turns run times bimodal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = ["builtin:mlp40", "builtin:convnet", "builtin:attention"]
ALONE_MIN_US = 10.0
ALONE_TOLERANCE = 0.15


def hook_overhead(prepared, hook, repeat: int) -> tuple[float, int]:
    """Per-call CPU-time cost of ``hook`` over no hook (medians), and VM calls per run."""
    import numpy as np

    entry, args = prepared.workload.entry, prepared.args
    plain = prepared.make_vm()[entry]
    vm = prepared.make_vm()
    vm.set_instrument(hook)
    hooked = vm[entry]
    calls = len(kernel_arguments(prepared, count_only=True))
    cpu: dict[str, list[float]] = {"plain": [], "hooked": []}
    for _ in range(3):
        plain(*args), hooked(*args)
    for _ in range(repeat):
        for name, fn in (("plain", plain), ("hooked", hooked)):
            start = time.thread_time()
            fn(*args)
            cpu[name].append(time.thread_time() - start)
    return float((np.median(cpu["hooked"]) - np.median(cpu["plain"])) * 1e6 / calls), calls


def kernel_arguments(prepared, count_only: bool = False) -> list:
    """(symbol, args) of every VM call of one real run; args kept only for kernels."""
    seen = []

    def hook(func, symbol, before, ret, *args):
        if before:
            symbol = str(symbol)
            keep = not count_only and symbol in prepared.kernels
            seen.append((symbol, tuple(args) if keep else ()))
        return 0

    vm = prepared.make_vm()
    vm.set_instrument(hook)
    vm[prepared.workload.entry](*prepared.args)
    prepared.dev.sync()
    return seen


def alone_us(prepared, rows) -> dict[str, float]:
    """Row name+args -> median per-call time of the kernel alone (time_evaluator, number
    100, repeat 5: TVM's device timer - CUDA events on a GPU)."""
    import numpy as np

    from toolkit import stack
    from toolkit.profile.in_tvm.timing import describe_args

    modules = list(stack._modules(prepared.compiled.executable.mod))
    wanted = {(r.name, r.args) for r in rows.itertuples()
              if r.kind == "kernel" and r.median_us >= ALONE_MIN_US}
    out: dict[str, float] = {}
    for symbol, args in kernel_arguments(prepared):
        key = (symbol, " ".join(describe_args(args)))
        if key not in wanted or f"{key}" in out:
            continue
        lib = next((m for m in modules if m.implements_function(symbol)), None)
        if lib is None:
            continue
        evaluator = lib.time_evaluator(symbol, prepared.dev, number=100, repeat=5)
        out[f"{key}"] = float(np.median(evaluator(*args).results)) * 1e6
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", default="1", help="TVM_NUM_THREADS ('' keeps the default)")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--wall", action="store_true",
                        help="time on the wall clock even where tk profile uses thread CPU "
                             "time (to see what that choice buys under load)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--no-cuda-bindings", action="store_true",
                        help="hide cuda-bindings, as if not installed (the host-side fallback)")
    parser.add_argument("--filler", choices=("hold", "memset"), default="hold",
                        help="what holds the CUDA stream while a timed run is issued")
    args = parser.parse_args()
    if args.no_cuda_bindings:
        # None in sys.modules makes every later import of the package raise ImportError,
        # exactly what an interpreter without it does. TVM (0.27) compiles CUDA with NVRTC
        # through cuda-bindings by default; without it, only with nvcc, as a user must.
        sys.modules["cuda.bindings"] = sys.modules["cuda.bindings.driver"] = None
        sys.modules["cuda.bindings.nvrtc"] = None
        os.environ.setdefault("TVM_CUDA_COMPILE_MODE", "nvcc")
    if args.threads:
        os.environ["TVM_NUM_THREADS"] = args.threads  # before tvm starts its thread pool
    sys.path.insert(0, str(REPO))

    from toolkit.errors import DeviceAbsent
    from toolkit.profile import report
    from toolkit.profile.in_tvm import devtimer, timing
    from toolkit.profile.in_tvm.measure import header_for, prepare
    from toolkit.profile.records import Measured
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads

    target = targets.resolve(args.target)
    try:
        targets.device_for(target.tvm)
    except DeviceAbsent as e:
        print(f"profile_accuracy.py --target {args.target} needs a {args.target} device: {e}",
              file=sys.stderr)
        return 2
    print(f"target {args.target}, {args.repeat} repeats after {args.warmup} warm-up, "
          f"TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS', 'default')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    head = (f"{'workload':18} {'calls':>5} {'e2e us':>9} {'parts us':>9} {'ratio':>6} "
            f"{'kernels':>7} {'rest us':>8} {'alone ok':>8} {'hook us':>7} {'timer us':>8}  "
            f"clock / verdict")
    print(head)
    print("-" * len(head))
    failed = 0
    records = []
    for workload in args.workloads:
        start = time.perf_counter()
        p = prepare(workloads.load(workload), target)
        now, clock_name = (time.perf_counter, "wall") if args.wall else timing.clock_for(p.gpu)
        timings = timing.measure(p.make_vm, p.workload.entry, p.args, p.dev,
                                 repeat=args.repeat, warmup=args.warmup, gpu=p.gpu,
                                 kernels=p.kernels, clock=(now, clock_name),
                                 device_timer=devtimer.for_device(p.dev, p.gpu, now,
                                                                  filler=args.filler))
        header = header_for(workload, args.target, p.target, p.dev, p.gpu, args.repeat,
                            args.warmup, timings.method, p.workload.entry)
        rep = report.build(Measured(timings, p.kernels, header))
        s = rep.summary
        e2e = s["e2e_median_us"]
        busy, host, rest = s["split_us"].values()
        kernels = busy / e2e
        # time_evaluator reads wall time: beside thread CPU time on a loaded machine it
        # would compare the load, not the profiler.
        alone = alone_us(p, rep.operators) if s["clock"] == "wall" else {}
        pairs = [(r, alone[f"{(r.name, r.args)}"]) for r in rep.operators.itertuples()
                 if f"{(r.name, r.args)}" in alone]
        close = [abs(r.median_us / us - 1) <= ALONE_TOLERANCE for r, us in pairs]
        hook, calls = hook_overhead(p, _noop, args.repeat)
        timer, _ = hook_overhead(p, timing.CallTimer(None, p.kernels), args.repeat)
        if p.gpu:
            ok = 0.85 <= kernels <= 1.0 and all(close) and rest >= 0
        else:
            ok = 0.85 <= s["accounted_ratio"] <= 1.15 and hook <= 10
        failed += not ok
        print(f"{workload:18} {calls:5d} {e2e:9.1f} {busy + host:9.1f} {s['accounted_ratio']:6.3f} "
              f"{kernels:7.3f} {rest:8.1f} {f'{sum(close)}/{len(close)}' if alone else '-':>8} {hook:7.2f} "
              f"{timer:8.2f}  {s['clock']}; {s['verdict']}  {'ok' if ok else 'NO'}"
              f"   ({time.perf_counter() - start:.0f} s)")
        for line in s["warnings"]:
            print(f"{'':18} warning: {line}")
        records.append({
            "workload": workload, "calls": calls, "e2e_us": e2e, "parts_us": busy + host,
            "ratio": s["accounted_ratio"], "kernels": kernels, "rest_us": rest,
            "split_us": s["split_us"], "alone": [
                {"kernel": r.name, "args": r.args, "profile_us": r.median_us, "alone_us": us,
                 "ratio": r.median_us / us, "within": ok_one}
                for (r, us), ok_one in zip(pairs, close)],
            "hook_us": hook, "timer_us": timer, "clock": s["clock"],
            "device_timer": s["device_timer"], "verdict": s["verdict"],
            "warnings": s["warnings"], "ok": ok, "seconds": time.perf_counter() - start})
        if args.json:  # after each workload: what was measured survives a later failure
            write_json(args, records)
    print(f"device times: {s['device_timer']}")
    print("ratio = (kernels + builtins | GPU busy + host overhead) / end-to-end median; kernels ="
          " kernel time / end to end; rest = the third part (VM and other | idle gaps); alone ok ="
          f" kernels >= {ALONE_MIN_US:g} us within {100 * ALONE_TOLERANCE:g}% of time_evaluator")
    print("goals: CPU ratio within 0.85-1.15 and hook <= 10 us per VM call; GPU kernels within "
          "0.85-1, every kernel alone ok, rest >= 0; "
          f"load average now {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


def write_json(args: argparse.Namespace, records: list[dict]) -> None:
    args.json.write_text(json.dumps({
        "target": args.target, "repeat": args.repeat, "warmup": args.warmup,
        "threads": os.environ.get("TVM_NUM_THREADS"), "hidden_cuda_bindings":
        args.no_cuda_bindings, "cuda_compile_mode": os.environ.get("TVM_CUDA_COMPILE_MODE"),
        "filler": args.filler,
        "alone_min_us": ALONE_MIN_US, "alone_tolerance": ALONE_TOLERANCE,
        "load_average": os.getloadavg()[0], "cores": os.cpu_count(), "workloads": records},
        indent=2) + "\n")


def _noop(*_: object) -> int:
    return 0


if __name__ == "__main__":
    sys.exit(main())
