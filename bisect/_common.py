"""Shared by the ready-made workload checks: arguments, and where a baseline is kept.

A baseline (the good commit's outputs, or its latency) is written when the step is the good
end (``TK_BISECT_PHASE=good-end``), which tk always checks first, into the bisection's own
directory (``TK_BISECT_DIR``); later steps compare with it. The environment of a check is
written down in ``toolkit.bisect.protocol``; these checks spell its names out, so that they start
where toolkit is not importable.
"""

import argparse
import hashlib
import os
import sys
from pathlib import Path


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("workload", help="builtin:NAME, a .py or an .onnx workload")
    p.add_argument("--target", "-t", default="llvm")
    p.add_argument("--seed", type=int, default=0)
    return p


def baseline_path(kind: str, args: argparse.Namespace) -> Path:
    where = Path(os.environ.get("TK_BISECT_DIR") or ".")
    digest = hashlib.sha256(f"{args.workload} {args.target} {args.seed}".encode()).hexdigest()
    return where / f"{kind}-{digest[:12]}.npz"


def is_good_end() -> bool:
    return os.environ.get("TK_BISECT_PHASE") == "good-end"


def compile_and_inputs(args: argparse.Namespace):
    """Compile with the TVM under test; a failure to compile is the regression (exit 1)."""
    from toolkit import stack
    from toolkit.errors import TkError
    from toolkit.stack import workload

    try:
        wl = workload.load(args.workload, seed=args.seed)
        return stack.compile(wl, args.target), wl.make_inputs(args.seed)
    except TkError as e:
        print(f"check: {e}", file=sys.stderr)
        sys.exit(1)
