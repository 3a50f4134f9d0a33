"""Cost of loading an extension through tk's loader, against a bare ctypes.CDLL.

Each sample is a fresh interpreter that times, from before ``import tvm`` to after the
extension is loaded, either ``toolkit.ext.loader.load_extension(lib)`` (with every pre-load check
and the registry diff) or ``ctypes.CDLL(lib, RTLD_GLOBAL)``. The two kinds alternate, so
machine load hits both alike. Prints the medians and their ratio (goal: <= 1.1).

    python benchmarks/ext_load.py [--lib LIB.so] [--runs N]

Without --lib it scaffolds and builds the sample extension (tk ext new + tk ext build) in a
temporary directory first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TK = """
import time
t0 = time.perf_counter()
import tvm
from toolkit.ext.loader import load_extension
load_extension({lib!r})
print(time.perf_counter() - t0)
"""

BARE = """
import time
t0 = time.perf_counter()
import ctypes
import tvm
ctypes.CDLL({lib!r}, ctypes.RTLD_GLOBAL)
print(time.perf_counter() - t0)
"""


def sample(code: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def build_sample(work: Path) -> Path:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    tk = [sys.executable, "-m", "toolkit"]
    subprocess.run([*tk, "ext", "new", "bench_ext", "--dir", str(work)], check=True, env=env)
    subprocess.run([*tk, "ext", "build", str(work / "bench_ext")], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return work / "bench_ext" / "python" / "bench_ext" / "lib" / "libbench_ext.so"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", help="an extension built by tk ext build")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tk-ext-bench-") as tmp:
        lib = Path(args.lib) if args.lib else build_sample(Path(tmp))
        sample(BARE.format(lib=str(lib)))  # warm the page cache for both kinds
        tk_times, bare_times = [], []
        for _ in range(args.runs):
            tk_times.append(sample(TK.format(lib=str(lib))))
            bare_times.append(sample(BARE.format(lib=str(lib))))
    tk_med, bare_med = statistics.median(tk_times), statistics.median(bare_times)
    print(f"extension: {lib.name}, {args.runs} fresh processes each")
    print(f"import tvm + ctypes.CDLL           median {bare_med * 1000:8.1f} ms")
    print(f"import tvm + tk load_extension     median {tk_med * 1000:8.1f} ms")
    print(f"ratio tk / bare: {tk_med / bare_med:.3f} (goal <= 1.1)")


if __name__ == "__main__":
    main()
