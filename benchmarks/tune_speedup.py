"""What MetaSchedule tuning buys on llvm, and what it costs per trial.

Tunes a matmul-heavy builtin (default ``builtin:matmul``: one 128x128x128 float32 product)
for N trials with ``toolkit.stack.tune`` (what ``tk tune`` runs), then compiles it twice
- TVM's default schedule, and with the database applied (``--db``) - and times both side by
side in one run (alternating rounds of ``time_evaluator``, median of the rounds), so machine
load hits both alike. Prints the tuned/default speedup and the tuning time per trial.

    python benchmarks/tune_speedup.py [--workload builtin:matmul] [--trials 32] [--rounds 7]

Needs psutil. With apache-tvm 0.27.0.post1 beside apache-tvm-ffi 0.1.15.post2, TVM's JSON
serialisation crashes until tk repairs it (``tune.check_serialisation``), as ``tk tune`` does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit import stack  # noqa: E402
from toolkit.stack import target as targets  # noqa: E402
from toolkit.stack import tune  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402


def timer(compiled: stack.Compiled, inputs: list, number: int):
    """A callable returning the mean seconds of one call of the entry over ``number`` calls."""
    import tvm

    dev = tvm.cpu()
    wl = compiled.workload
    if wl.kind == workloads.TIR:
        module = compiled.executable.mod if hasattr(compiled.executable, "mod") \
            else compiled.executable
        args = wl.call_args(stack.to_device(inputs, dev), stack.to_device(wl.make_outputs(), dev))
        evaluator = module.time_evaluator(wl.entry, dev, number=number, repeat=1)
    else:
        vm = stack.virtual_machine(compiled, dev)
        args = stack.to_device([*inputs, *wl.params], dev)
        evaluator = vm.time_evaluator(wl.entry, dev, number=number, repeat=1)
    return lambda: evaluator(*args).mean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:matmul")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=50, help="calls per timing round")
    parser.add_argument("--db", type=Path, help="keep the database here (default: a temp dir)")
    a = parser.parse_args()

    wl = workloads.load(a.workload)
    target = targets.resolve("llvm")
    with tempfile.TemporaryDirectory(prefix="tk-tune-") as tmp:
        db = a.db or Path(tmp) / "db"
        print(f"tuning {a.workload} on llvm for {a.trials} trials ({os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}) ...", flush=True)
        result = tune.tune(wl, target.tvm, a.trials, db)
        if result.records == 0:
            print(f"no candidate built and ran in {result.seconds:.0f} s: nothing to compare")
            return 1
        default = stack.compile(wl, target)
        tuned = stack.compile(wl, target, options=stack.compile_options(database=db))
        inputs = wl.make_inputs()
        cmp = stack.compare(stack.run(tuned, inputs).outputs,
                            stack.run(default, inputs).outputs, "default schedule")
        run_default, run_tuned = timer(default, inputs, a.number), timer(tuned, inputs, a.number)
        samples: dict[str, list[float]] = {"default": [], "tuned": []}
        for _ in range(a.rounds):  # alternate, so load drifts hit both alike
            samples["default"].append(run_default())
            samples["tuned"].append(run_tuned())
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"workload        {a.workload} ({wl.kind}, {result.tasks} kernel(s))")
    print(f"tuning          {result.trials} trials in {result.seconds:.1f} s = "
          f"{result.seconds / max(result.trials, 1):.2f} s/trial (cost model "
          f"{result.cost_model}, {result.records} usable records)")
    print(f"default         median {med['default'] * 1e6:9.1f} us  "
          f"(rounds {', '.join(f'{x * 1e6:.0f}' for x in samples['default'])})")
    print(f"tuned           median {med['tuned'] * 1e6:9.1f} us  "
          f"(rounds {', '.join(f'{x * 1e6:.0f}' for x in samples['tuned'])})")
    print(f"speedup         {med['default'] / med['tuned']:.2f}x tuned/default; outputs agree: "
          f"{cmp.ok} (max abs err {cmp.max_abs:.3g})")
    print(f"load after      {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
