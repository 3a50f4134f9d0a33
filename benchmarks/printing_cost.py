"""What one print costs as the process grows: TVM's printer on builtin:mlp40's function
versions, alone and beside builtin:mlp400's.

dump-ir prints every distinct function version once (see docs/dump-ir-internals.md); on
mlp400 that costs more per version than on mlp40 although the versions are as large. This
prints the same 2,450 mlp40 versions three times - in a process holding only them, with
mlp400's 24,422 versions alive beside them, and after those are dropped - and mlp400's once,
so a per-call cost that depends on what else the process holds shows as the first three
differing. CPU time of this process; the load beside it.

    taskset -c 0 python benchmarks/printing_cost.py
"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import stack  # noqa: E402
from toolkit.stack import compat  # noqa: E402
from toolkit.stack import workload as workloads  # noqa: E402
from toolkit.stack.numbering import functions  # noqa: E402


def versions_of(source: str) -> dict[tuple[int, str], Any]:
    """Each distinct (structural hash, name) a compile's passes produced, kept alive."""
    from tvm.ir.instrument import pass_instrument

    structural_hash = compat.structural_hash()
    versions: dict[tuple[int, str], Any] = {}

    @pass_instrument
    class Keep:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            for name, func in functions(mod).items():
                versions.setdefault((structural_hash(func), name), func)

    stack.compile(workloads.load(source), "llvm", instruments=[Keep()])
    return versions


def print_all(label: str, versions: dict[tuple[int, str], Any]) -> None:
    printer = compat.script_printer()
    start = time.process_time()
    size = sum(len(printer(func, name)) for (_, name), func in versions.items())
    cpu = time.process_time() - start
    print(f"  {label:<40} {len(versions):6} versions {size / 1e6:6.1f} MB {cpu:7.2f} s CPU "
          f"{cpu / len(versions) * 1e3:6.3f} ms a version", flush=True)


def main() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine load {os.getloadavg()[0]:.1f} (1-minute average) on {os.cpu_count()} cores; "
          f"this process may run on {cores}")
    small = versions_of("builtin:mlp40")
    print_all("mlp40 alone", small)
    big = versions_of("builtin:mlp400")
    print_all("mlp40 with mlp400's versions alive", small)
    print_all("mlp400", big)
    del big
    gc.collect()
    print_all("mlp40 after mlp400's are dropped", small)
    print(f"machine load {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
