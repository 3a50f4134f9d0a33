"""What recording every pass costs: tk dump-ir against a plain compile and TVM's DumpIR.

Compiles one workload (default ``builtin:mlp40`` for ``llvm``) in this one process three
ways, interleaved so all see the same machine load: plain ``stack.compile``; the whole
``tk dump-ir`` (instrument, store, index.json, index.html, directory swap); and
``stack.compile`` with ``tvm.ir.instrument.DumpIR`` where this TVM has it. Prints median
wall and CPU times, the ratios, bytes and files on disk, and the machine load (1-minute load
average before and after, and the cores) beside them: on a shared machine the wall-time
ratios mean little without it. Goals (issues 3 and 13): tk / plain <= 1.5,
tk / DumpIR <= 0.3, tk bytes <= 25% of DumpIR's, few files.

    python benchmarks/dumpir_overhead.py [--workload builtin:mlp40] [--target llvm] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.dumpir.in_tvm import dump as dumper  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402


def disk(directory: Path) -> tuple[int, int]:
    files = [p for p in directory.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:mlp40")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import tvm.ir.instrument

    wl = workloads.load(args.workload)
    scratch = Path(tempfile.mkdtemp(prefix="tk-dumpir-bench-"))
    dump_ir_cls = getattr(tvm.ir.instrument, "DumpIR", None)

    def plain() -> None:
        stack.compile(wl, args.target)

    def tk() -> None:
        dumper.dump(wl, args.target, scratch / "tk")

    def tvm_dumpir() -> None:
        shutil.rmtree(scratch / "dumpir", ignore_errors=True)
        stack.compile(wl, args.target, instruments=[dump_ir_cls(scratch / "dumpir")])

    ways: dict[str, Callable[[], None]] = {"plain": plain, "tk dump-ir": tk}
    if dump_ir_cls is not None:
        ways["DumpIR"] = tvm_dumpir
    times: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    plain()  # warm-up: imports, target parsing, LLVM initialisation
    load_before = os.getloadavg()[0]
    for _ in range(args.repeat):
        for name, fn in ways.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu_start)

    load_after = os.getloadavg()[0]
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"{args.workload} for {args.target}, median of {args.repeat} (tvm {tvm.__version__})")
    print(f"  machine load: {load_before:.1f} before, {load_after:.1f} after "
          f"(1-minute load average) on {os.cpu_count()} cores")
    for name, t in times.items():
        print(f"  {name:<11} {med[name]:8.2f} s wall  {statistics.median(cpu[name]):8.2f} s CPU"
              f"   runs: {', '.join(f'{x:.2f}' for x in t)}")
    tk_bytes, tk_files = disk(scratch / "tk")
    cpu_ratio = statistics.median(cpu["tk dump-ir"]) / statistics.median(cpu["plain"])
    print(f"  tk / plain   = {med['tk dump-ir'] / med['plain']:.2f}   (goal <= 1.5; "
          f"CPU time {cpu_ratio:.2f}: tk prints on a second thread)")
    if "DumpIR" in med:
        dump_bytes, dump_files = disk(scratch / "dumpir")
        print(f"  tk / DumpIR  = {med['tk dump-ir'] / med['DumpIR']:.2f}   (goal <= 0.3)")
        print(f"  bytes: tk {tk_bytes / 1e6:.2f} MB in {tk_files} files; "
              f"DumpIR {dump_bytes / 1e6:.2f} MB in {dump_files} files; "
              f"tk / DumpIR = {tk_bytes / dump_bytes:.1%}   (goal <= 25%)")
    else:
        print(f"  bytes: tk {tk_bytes / 1e6:.2f} MB in {tk_files} files; "
              "this TVM has no tvm.ir.instrument.DumpIR to compare with")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
