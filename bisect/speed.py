#!/usr/bin/env python
"""Ready-made check: a workload's speed with the TVM under test.

    speed WORKLOAD [--target T] [--threshold PCT] [--repeat N]

Bad (exit 1) when the median latency is more than PCT percent (default 10) over the good
end's, which is measured and kept when the good end is checked.
"""

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import baseline_path, compile_and_inputs, is_good_end, parser  # noqa: E402


def median_latency(compiled, inputs, repeat: int) -> float:
    from toolkit import stack
    from toolkit.stack import target as targets

    dev = targets.device_for(compiled.target)
    vm = stack.virtual_machine(compiled, dev)
    args = stack.to_device([*inputs, *compiled.workload.params], dev)
    fn = vm[compiled.workload.entry]
    fn(*args)  # warm up: first-call allocations are not the kernel's speed
    dev.sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        dev.sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--threshold", type=float, default=10.0, help="percent over the good end")
    p.add_argument("--repeat", type=int, default=50)
    args = p.parse_args()
    compiled, inputs = compile_and_inputs(args)
    median = median_latency(compiled, inputs, args.repeat)
    path = baseline_path("speed", args).with_suffix(".json")
    if is_good_end() or not path.exists():
        path.write_text(json.dumps({"median_s": median}))
        print(f"check: good end median {median * 1e3:.4f} ms (kept in {path})")
        return 0
    base = json.loads(path.read_text())["median_s"]
    slower = (median / base - 1) * 100
    print(f"check: median {median * 1e3:.4f} ms vs good end {base * 1e3:.4f} ms "
          f"({slower:+.1f}%, threshold {args.threshold:g}%)")
    return 1 if slower > args.threshold else 0


if __name__ == "__main__":
    sys.exit(main())
