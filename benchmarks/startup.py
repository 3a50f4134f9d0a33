"""Startup and compile overhead of the tk command, measured side by side in one run.

Prints the median wall time of ``tk --help`` against ``python -c pass`` (goal <= 3x) and
of ``tk compile builtin:mlp --target llvm`` against a plain Python script doing the same
compile and export (goal <= 1.2x).

    python benchmarks/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The same model as builtin:mlp, loaded from its file but compiled with plain TVM calls.
PLAIN_COMPILE = """
import runpy, sys
import tvm
ns = runpy.run_path(sys.argv[2])
mod, _ = ns["model"].export_tvm(spec=ns["spec"])
tvm.compile(mod, target=tvm.target.Target("llvm")).export_library(sys.argv[1])
"""


def wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def paired_medians(a: list[str], b: list[str], repeat: int, env: dict[str, str]):
    """Alternate the two commands so both see the same machine load."""
    wall(a, env), wall(b, env)  # warm the page cache for both
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(wall(a, env))
        times_b.append(wall(b, env))
    return statistics.median(times_a), statistics.median(times_b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    tk = [sys.executable, "-m", "toolkit"]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "plain_compile.py"
        script.write_text(PLAIN_COMPILE)
        lib = str(Path(tmp) / "mlp.so")
        rows = [
            ("tk --help", tk + ["--help"], "python -c pass", [sys.executable, "-c", "pass"], 3.0),
            ("tk compile builtin:mlp", tk + ["compile", "builtin:mlp", "--target", "llvm",
                                             "-o", lib],
             "plain script", [sys.executable, str(script), lib,
                               str(REPO / "toolkit" / "stack" / "workloads" / "mlp.py")], 1.2),
        ]
        print(f"{'measured':26} {'median s':>9}   {'baseline':16} {'median s':>9}  ratio  goal")
        for name, cmd, base_name, base_cmd, goal in rows:
            ours, base = paired_medians(cmd, base_cmd, args.repeat, env)
            ratio = ours / base
            verdict = "ok" if ratio <= goal else "MISSED"
            print(f"{name:26} {ours:9.3f}   {base_name:16} {base:9.3f}  {ratio:5.2f}  "
                  f"<= {goal} {verdict}")


if __name__ == "__main__":
    main()
