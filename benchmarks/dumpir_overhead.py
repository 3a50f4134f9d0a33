"""What recording every pass costs: tk dump-ir against a plain compile and TVM's DumpIR.

Compiles one workload (default ``builtin:mlp40`` for ``llvm``) in this one process three
ways, interleaved so all see the same machine load: plain ``stack.compile``; the whole
``tk dump-ir`` as the user runs it (instrument, index.json, the pack of generated sources,
directory swap; no function text is printed, as none is asked for); and ``stack.compile``
with ``tvm.ir.instrument.DumpIR`` where this TVM has it. Beside them, the first ask of that
dump's texts (what the first ``show --pass``/``find``/``diff``/``page`` costs once: the
second compile that renders them, the pack, the page, the manifest), timed by itself. Prints median
wall and CPU times, the ratios, bytes and files on disk, and the machine load (1-minute load
average before and after, the cores this process may run on) beside them: on a shared
machine the wall-time ratios mean little without it. CPU is every process's: this one's
(all its threads) and that of every child it waited for (``os.times``), so work handed to
another process would be counted; on a compile that succeeds tk dump-ir starts none. For
tk dump-ir it also says where the time went: the compile with its hooks, the recording jobs
within it (on one core they run in the hooks), and what follows the compile (index, pack,
page, swap), which the user waits for as well.

Then the floor: the same compile once more, keeping each distinct function version the
passes produced, each then printed as dump-ir prints it - the CPU any recorder spends that
has every version's text on disk when it returns; tk dump-ir leaves it to the first ask.

Goals (issue 29), with the process on one core (``taskset -c 0``): tk / plain <= 1.3 in CPU
and in wall, tk / DumpIR <= 0.2, tk's bytes <= 25% of DumpIR's.

    taskset -c 0 python benchmarks/dumpir_overhead.py [--workload builtin:mlp40] [--target llvm]
                                                      [--repeat 3] [--no-dumpir]
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.dumpir.in_tvm import dump as dumper  # noqa: E402
from toolkit.dumpir.in_tvm import render  # noqa: E402
from toolkit.stack import compat  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402
from toolkit.stack.numbering import functions  # noqa: E402


def disk(directory: Path) -> tuple[int, int]:
    files = [p for p in directory.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def cpu_seconds() -> float:
    """CPU time of this process (every thread) and of the children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def printing_floor(wl: Any, target: str) -> tuple[int, int, float]:
    """(distinct versions, characters, CPU seconds to print them) of one compile."""
    from tvm.ir.instrument import pass_instrument

    versions: dict[tuple[int, str], Any] = {}
    structural_hash = compat.structural_hash()

    @pass_instrument
    class Keep:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            for name, func in functions(mod).items():
                versions.setdefault((structural_hash(func), name), func)

    stack.compile(wl, target, instruments=[Keep()])
    printer = compat.script_printer()
    start = time.process_time()
    size = sum(len(printer(func, name)) for (_, name), func in versions.items())
    return len(versions), size, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="builtin:mlp40")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-dumpir", action="store_true",
                        help="leave TVM's DumpIR out (on builtin:mlp400 it alone takes 30 min)")
    args = parser.parse_args()

    import tvm.ir.instrument

    wl = workloads.load(args.workload)
    scratch = Path(tempfile.mkdtemp(prefix="tk-dumpir-bench-"))
    dump_ir_cls = getattr(tvm.ir.instrument, "DumpIR", None)

    def plain() -> None:
        stack.compile(wl, args.target)

    phases: list[tuple[float, float, float]] = []  # (compile, recording jobs, total) wall

    def tk() -> None:
        start = time.perf_counter()
        summary = dumper.dump(wl, args.target, scratch / "tk").index.summary
        phases.append((summary["compile_seconds"], summary["worker_seconds"],
                       time.perf_counter() - start))

    dumped_bytes: list[tuple[int, int]] = []

    def first_show() -> None:
        dumped_bytes.append(disk(scratch / "tk"))  # as tk dump-ir left it
        render.render(scratch / "tk")

    def tvm_dumpir() -> None:
        shutil.rmtree(scratch / "dumpir", ignore_errors=True)
        stack.compile(wl, args.target, instruments=[dump_ir_cls(scratch / "dumpir")])

    ways: dict[str, Callable[[], None]] = {"plain": plain, "tk dump-ir": tk,
                                           "first show": first_show}
    if dump_ir_cls is not None and not args.no_dumpir:
        ways["DumpIR"] = tvm_dumpir
    times: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    plain()  # warm-up: imports, target parsing, LLVM initialisation
    load_before = os.getloadavg()[0]
    for _ in range(args.repeat):
        for name, fn in ways.items():
            start, cpu_start = time.perf_counter(), cpu_seconds()
            fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_seconds() - cpu_start)
    load_after = os.getloadavg()[0]
    versions, size, print_cpu = printing_floor(wl, args.target)

    wall = {name: statistics.median(t) for name, t in times.items()}
    cpus = {name: statistics.median(t) for name, t in cpu.items()}
    print(f"{args.workload} for {args.target}, median of {args.repeat} (tvm {tvm.__version__})")
    print(f"  machine load: {load_before:.1f} before, {load_after:.1f} after (1-minute load "
          f"average) on {os.cpu_count()} cores; this process may run on {cores()}"
          + (" (dump-ir records on the compile's thread)" if cores() == 1
             else " (dump-ir prints in a second thread)"))
    for name, t in times.items():
        print(f"  {name:<11} {wall[name]:8.2f} s wall  {cpus[name]:8.2f} s CPU"
              f"   runs: {', '.join(f'{x:.2f}' for x in t)} s wall; "
              f"{', '.join(f'{x:.2f}' for x in cpu[name])} s CPU")
    compile_wall, jobs_wall, total_wall = (statistics.median(p) for p in zip(*phases))
    print(f"  tk dump-ir's wall: compile with the hooks {compile_wall:.2f} s, of which the "
          f"recording jobs (hashes, keys) {jobs_wall:.2f} s"
          + (" on the compile's thread" if cores() == 1 else " in the worker thread")
          + f"; after the compile (codegen records, index, pack, swap) "
          f"{total_wall - compile_wall:.2f} s; all in this process")
    tk_bytes, tk_files = dumped_bytes[-1]
    shown_bytes, shown_files = disk(scratch / "tk")
    print(f"  tk / plain   = {cpus['tk dump-ir'] / cpus['plain']:.2f} CPU, "
          f"{wall['tk dump-ir'] / wall['plain']:.2f} wall   (goal <= 1.3 in both)")
    print(f"  first show / plain = {cpus['first show'] / cpus['plain']:.2f} CPU, "
          f"{wall['first show'] / wall['plain']:.2f} wall (once per dump, when texts are "
          f"first asked for); dump + first show / plain = "
          f"{(cpus['tk dump-ir'] + cpus['first show']) / cpus['plain']:.2f} CPU; "
          f"rendered dump {shown_bytes / 1e6:.2f} MB in {shown_files} files")
    if "DumpIR" in wall:
        dump_bytes, dump_files = disk(scratch / "dumpir")
        print(f"  tk / DumpIR  = {cpus['tk dump-ir'] / cpus['DumpIR']:.2f} CPU, "
              f"{wall['tk dump-ir'] / wall['DumpIR']:.2f} wall   (goal <= 0.2)")
        print(f"  bytes: tk {tk_bytes / 1e6:.2f} MB in {tk_files} files; "
              f"DumpIR {dump_bytes / 1e6:.2f} MB in {dump_files} files; "
              f"tk / DumpIR = {tk_bytes / dump_bytes:.1%}   (goal <= 25%)")
    else:
        print(f"  bytes: tk {tk_bytes / 1e6:.2f} MB in {tk_files} files; "
              + ("DumpIR left out (--no-dumpir)" if args.no_dumpir
                 else "this TVM has no tvm.ir.instrument.DumpIR to compare with"))
    print(f"  floor: printing the {versions} distinct function versions ({size / 1e6:.1f} MB of "
          f"TVMScript) takes {print_cpu:.2f} s CPU = {print_cpu / cpus['plain']:.2f} x plain: "
          "what a recorder that prints every version before it returns cannot avoid "
          "(tk dump-ir prints them on first ask instead)")
    print(f"  so tk / plain >= {1 + print_cpu / cpus['plain']:.2f} in CPU for such a recorder"
          + (f"; and a recorder costing nothing would give tk / DumpIR = "
             f"{cpus['plain'] / cpus['DumpIR']:.2f} in CPU" if "DumpIR" in cpus else ""))
    if cores() > 1:
        print("  note: the goals are for one core: run under taskset -c 0")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
