"""Timing every call a Relax VM makes, and the whole entry function without any hook.

The hook is ``VirtualMachine.set_instrument`` (v0.16+): the VM calls it before and after
every ``Call`` instruction. Timing inside it naively (clock in the "before" callback, clock
in the "after" one) charges each call with the cost of converting the arguments to Python
objects for the "after" callback, several microseconds - more than many small kernels take.
So a compiled kernel (a PrimFunc of the module: returns nothing, destination-passing
style) is called by the hook itself between two clock reads and the VM is told to skip its
own call. Any other callee might return a value the VM needs (a ``call_packed`` extern, a
builtin), so the VM makes its call either way. VM builtins return
values too: the pure, cheap ones (``PURE_BUILTINS``: allocation, shape checks) are also
called once by the hook to time them; any other callee (it may have side effects, e.g. a
KV-cache append) is timed between the two callbacks, so its row includes the callback's
entry cost (``Timings.builtin_note``).

Where only the old ``vm.profile()`` exists (before v0.24, before the instrument), its
report is read instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from toolkit.profile.records import PURE_BUILTINS, Timings

SKIP_RUN = 1  # VMInstrumentReturnKind::kSkipRun
GO_ON = 0

def describe_args(args: Sequence[Any]) -> tuple[str, ...]:
    """Tensor arguments as ``dtype[shape]``; scalars, strings and shapes are left out."""
    out = []
    for a in args:
        shape = getattr(a, "shape", None)
        dtype = getattr(a, "dtype", None)
        if shape is None or dtype is None:
            continue
        out.append(f"{dtype}[{','.join(str(int(d)) for d in shape)}]")
    return tuple(out)


class CallTimer:
    """The instrument: times each VM call, syncing the device around it on GPUs."""

    def __init__(self, sync: Callable[[], None] | None, kernels: Collection[str] = (),
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.sync = sync
        self.kernels = frozenset(kernels)  # symbols safe to call here and skip in the VM
        self.clock = clock
        self.calls: list[tuple[str, float]] = []
        self.signatures: list[tuple[str, tuple[str, ...]]] | None = None
        self._start = 0.0

    def begin_run(self, describe: bool) -> None:
        self.calls = []
        self.signatures = [] if describe else None

    def __call__(self, func: Any, symbol: Any, before: bool, ret: Any, *args: Any) -> int:
        clock = self.clock
        if before:
            symbol = str(symbol)
            if self.signatures is not None:
                self.signatures.append((symbol, describe_args(args)))
            sync = self.sync
            if sync is not None:
                sync()
            kernel = symbol in self.kernels
            if not kernel and symbol not in PURE_BUILTINS:
                self._start = clock()
                return GO_ON
            start = clock()
            func(*args)
            if sync is not None:
                sync()
            self.calls.append((symbol, clock() - start))
            return SKIP_RUN if kernel else GO_ON
        # The VM does not call "after" for a skipped call; pure builtins were timed already.
        symbol = str(symbol)
        if symbol in PURE_BUILTINS:
            return GO_ON
        if self.sync is not None:
            self.sync()
        self.calls.append((symbol, self.clock() - self._start))
        return GO_ON


def _noop(*_: Any) -> int:
    return GO_ON


def measure(
    make_vm: Callable[..., Any],
    entry: str,
    args: Sequence[Any],
    dev: Any,
    *,
    repeat: int,
    warmup: int,
    gpu: bool,
    kernels: Collection[str] = (),
    clock: Callable[[], float] = time.perf_counter,
) -> Timings:
    """Time the entry function per call (instrumented) and end to end (plain), interleaved.

    ``make_vm(**kwargs)`` makes a fresh VirtualMachine for the compiled executable;
    ``kernels`` are the symbols of the module's PrimFuncs (see ``CallTimer``).
    ``clock`` is wall time; ``time.thread_time`` (CPU time of this thread, blind to other
    processes) suits only single-threaded CPU runs, as benchmarks/profile_accuracy.py uses.

    Each repeat runs the plain VM, the instrumented VM and a VM with a do-nothing hook back
    to back, so load from other processes lands on all three alike.
    """
    from toolkit.tvm_side import compat

    if not compat.vm_has_instrument():
        if compat.vm_has_profiler():
            return _measure_old_profiler(make_vm, entry, args, dev, repeat=repeat, warmup=warmup)
        from toolkit.errors import TkError

        raise TkError("this TVM's VM has neither set_instrument nor profile(); cannot time calls")
    sync = dev.sync if gpu else None
    plain, timed, hooked = make_vm(), make_vm(), make_vm()
    timer = CallTimer(sync, kernels, clock)
    timed.set_instrument(timer)
    hooked.set_instrument(_noop)
    f_plain, f_timed, f_hooked = plain[entry], timed[entry], hooked[entry]

    def wall(fn: Callable[..., Any]) -> float:
        start = clock()
        fn(*args)
        dev.sync()
        return clock() - start

    timer.begin_run(describe=True)
    wall(f_timed)  # the first call also loads code; its shapes name the rows
    signatures = timer.signatures or []
    for _ in range(warmup):
        wall(f_plain)
        wall(f_hooked)
        timer.begin_run(describe=False)
        wall(f_timed)
    result = Timings("instrument", [], signatures, [])
    for _ in range(repeat):
        result.end_to_end.append(wall(f_plain))
        timer.begin_run(describe=False)
        result.instrumented.append(wall(f_timed))
        result.runs.append(timer.calls)
        result.hooked_noop.append(wall(f_hooked))
    return result


def _measure_old_profiler(
    make_vm: Callable[..., Any], entry: str, args: Sequence[Any], dev: Any, *,
    repeat: int, warmup: int,
) -> Timings:
    """A TVM with ``vm.profile()`` but no ``set_instrument``: read the per-call report.

    Not exercised here (the installed TVM has only the instrument); written against
    ``src/runtime/profiling.cc``'s ``Report::AsJSON``.
    """
    import json

    plain = make_vm()
    profiled = make_vm(profile=True)
    signatures: list[tuple[str, tuple[str, ...]]] = []
    result = Timings("vm.profile", [], signatures, [])
    for i in range(warmup + repeat):
        start = time.perf_counter()
        plain[entry](*args)
        dev.sync()
        e2e = time.perf_counter() - start
        # Report::AsJSON: strings bare, durations {"microseconds": x}, counts {"count": n}.
        report = json.loads(profiled.profile(entry, *args).json())
        calls = []
        for call in report.get("calls", []):
            name = str(call.get("Name", "?"))
            micros = float(call.get("Duration (us)", {}).get("microseconds", 0.0))
            count = int(call.get("Count", {}).get("count", 1) or 1)
            shapes = _old_shapes(str(call.get("Argument Shapes", "")))
            for _ in range(count):
                calls.append((name, micros / count * 1e-6))
                if i == 0:
                    signatures.append((name, shapes))
        if i >= warmup:
            result.end_to_end.append(e2e)
            result.runs.append(calls)
    return result


def _old_shapes(text: str) -> tuple[str, ...]:
    """``"float32[1, 784], float32[784, 256]"`` -> ("float32[1,784]", "float32[784,256]")."""
    parts = (part.replace(" ", "").lstrip(",") for part in text.split("]"))
    return tuple(part + "]" for part in parts if part)
