"""What asking for a remote profile's rounds a few at a time costs, and whether it measures
the same: ``tk profile WORKLOAD --rpc`` of this checkout against a baseline revision (which
asks time_evaluator for all rounds in one call), side by side on one TVM RPC server on
127.0.0.1, alternating.

    python benchmarks/remote_rounds.py [--baseline e6747a2] [-n 500] [--times 3]

Prints, per tree, the median over ``--times`` runs of: tk's wall time, its CPU time (the
client; the server's rounds are the same work either way), and the profile's end-to-end
median and each kernel's median; then the ratios this / baseline. The machine's load
(``os.getloadavg``) is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from rpc_helpers import free_port, tvm_process  # noqa: E402


def profile(tree: Path, address: str, workload: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("TK_DEBUG", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "toolkit", "profile", workload, "--rpc",
                           address, "-n", str(n), "--warmup", "1", "--json"],
                          capture_output=True, text=True, env=env, cwd=tree)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{tree}: tk profile failed:\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout)
    out = {"wall_s": wall,
           "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
           "e2e_median_us": report["summary"]["e2e_median_us"]}
    out.update({f"{r['name']}_median_us": r["median_us"] for r in report["rows"]
                if r["kind"] == "kernel"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="e6747a2", help="git revision to compare with")
    parser.add_argument("-n", type=int, default=500, help="timed rounds per profile")
    parser.add_argument("--times", type=int, default=3, help="profiles per tree")
    parser.add_argument("--workload", default="builtin:mlp")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="tk-baseline-") as tmp:
        baseline = Path(tmp)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.baseline],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        trees = {f"baseline {args.baseline}": baseline, "this checkout": REPO}
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        port = free_port()
        with tvm_process("tvm.exec.rpc_server", port=port):
            for _ in range(args.times):
                for name, tree in trees.items():
                    results[name].append(profile(tree, f"127.0.0.1:{port}", args.workload,
                                                 args.n))
    medians = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
               for name, runs in results.items()}
    keys = list(next(iter(medians.values())))
    base, this = medians.values()
    print(f"{args.workload}, -n {args.n}, median of {args.times} profiles per tree")
    print(f"{'':28}" + "".join(f"{name:>24}" for name in medians) + f"{'this / baseline':>18}")
    for key in keys:
        print(f"{key:28}" + "".join(f"{m[key]:24.3f}" for m in medians.values())
              + f"{this[key] / base[key]:18.3f}")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
