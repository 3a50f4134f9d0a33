#!/usr/bin/env python
"""Ready-made check: a workload's numerics with the TVM under test.

    numerics WORKLOAD [--target T]                 like 'tk run --check': reference or llvm
    numerics WORKLOAD [--target T] --against good  equal (within tolerance) to the good end

Exit 0 when the outputs match, 1 when they differ or the workload no longer compiles/runs.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import baseline_path, compile_and_inputs, is_good_end, parser  # noqa: E402


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--against", choices=["reference", "good"], default="reference")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    args = p.parse_args()
    from toolkit import stack
    from toolkit.errors import TkError

    compiled, inputs = compile_and_inputs(args)
    try:
        outputs = stack.run(compiled, inputs).outputs
    except TkError as e:
        print(f"check: {e}", file=sys.stderr)
        return 1
    if args.against == "reference":
        cmp = stack.check(compiled, inputs, outputs, rtol=args.rtol, atol=args.atol)
    else:
        path = baseline_path("numerics", args)
        if is_good_end() or not path.exists():
            np.savez(path, *outputs)
            print(f"check: saved the good end's outputs to {path}")
            return 0
        with np.load(path) as data:
            expected = [data[f"arr_{i}"] for i in range(len(data.files))]
        cmp = stack.compare(outputs, expected, "good end", args.rtol, args.atol)
    print(f"check: {'OK' if cmp.ok else 'MISMATCH'} against {cmp.against}: max abs err "
          f"{cmp.max_abs:.3g}, max rel err {cmp.max_rel:.3g}")
    return 0 if cmp.ok else 1


if __name__ == "__main__":
    sys.exit(main())
