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

from toolkit.profile.in_tvm.devtimer import HostTimer
from toolkit.profile.records import PURE_BUILTINS, Call, Timings, is_builtin

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
    """The instrument: times each VM call on the host and, with ``marks``, on the device.

    ``marks`` is a device timer (``devtimer``) or None. ``sync`` (GPU runtimes without a
    device timer only) syncs the device around every call, so host times cover the work.
    """

    def __init__(self, sync: Callable[[], None] | None, kernels: Collection[str] = (),
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.sync = sync
        self.kernels = frozenset(kernels)  # symbols safe to call here and skip in the VM
        self.clock = clock
        self.marks: Any = None
        self.calls: list[Call] = []
        self.pairs: list[tuple[Any, Any]] = []  # device marks of self.calls[i] for i in marked
        self.marked: list[int] = []
        self.signatures: list[tuple[str, tuple[str, ...]]] | None = None
        self.arguments: list[tuple[str, tuple[Any, ...]]] = []  # of the describing run
        # Per symbol: what timing a call from Python costs with nothing to do (``calibrate``).
        self.floors: dict[str, float] = {}
        self._t0 = 0.0
        self._open: tuple[float, Any] = (0.0, None)

    def begin_run(self, describe: bool, marks: Any = None) -> None:
        self.calls, self.pairs, self.marked = [], [], []
        self.marks = marks
        self.signatures = [] if describe else None
        self._t0 = self.clock()

    def finish_run(self) -> list[Call]:
        """After the run was synchronised: the device time of every marked call."""
        if self.marks is not None:
            on_host = isinstance(self.marks, HostTimer)
            for i, seconds in zip(self.marked, self.marks.durations(self.pairs)):
                floor = self.floors.get(self.calls[i].symbol, 0.0) if on_host else 0.0
                self.calls[i].device = max(0.0, seconds - floor)
        return self.calls

    def __call__(self, func: Any, symbol: Any, before: bool, ret: Any, *args: Any) -> int:
        clock, marks = self.clock, self.marks
        if before:
            symbol = str(symbol)
            if self.signatures is not None:
                self.signatures.append((symbol, describe_args(args)))
                self.arguments.append((symbol, args))
            if self.sync is not None:
                self.sync()
            kernel = symbol in self.kernels
            if not kernel and symbol not in PURE_BUILTINS:
                # Timed until the "after" callback; an extern may run work on the device.
                start = clock()
                self._open = (start, marks.mark() if marks is not None and
                              not is_builtin(symbol) else None)
                return GO_ON
            first = marks.mark() if marks is not None and kernel else None
            start = clock()
            func(*args)
            if self.sync is not None:
                self.sync()
            end = clock()
            if first is not None:
                self.marked.append(len(self.calls))
                self.pairs.append((first, marks.mark()))
            self.calls.append(self._call(symbol, start, end))
            return SKIP_RUN if kernel else GO_ON
        # The VM does not call "after" for a skipped call; pure builtins were timed already.
        symbol = str(symbol)
        if symbol in PURE_BUILTINS:
            return GO_ON
        start, first = self._open
        if first is not None:
            self.marked.append(len(self.calls))
            self.pairs.append((first, marks.mark()))
        if self.sync is not None:
            self.sync()
        self.calls.append(self._call(symbol, start, clock()))
        return GO_ON

    def _call(self, symbol: str, start: float, end: float) -> Call:
        # With a sync around each call (no device timer) the host span holds the device work.
        end = max(start, end - self.floors.get(symbol, 0.0))
        synced = self.sync is not None and not is_builtin(symbol)
        return Call(symbol, start - self._t0, end - self._t0, end - start if synced else None)

    def calibrate(self, reps: int = 15) -> None:
        """Learn each symbol's floor from the describing run's arguments.

        A call timed from the hook costs a Python-to-FFI call (argument conversion) and a
        clock read that the VM's own call does not - about 1 us with the thread CPU clock,
        more than most builtins take. ``testing.nop`` with the same arguments costs exactly
        that, so its median time is taken off each call of the symbol.
        """
        import tvm

        nop = tvm.get_global_func("testing.nop", allow_missing=True)
        if nop is None:
            return
        clock, samples = self.clock, {}
        for symbol, args in self.arguments:
            if symbol not in self.kernels and symbol not in PURE_BUILTINS:
                continue  # timed between the callbacks, not called from here: no such cost
            times = samples.setdefault(symbol, [])
            for _ in range(reps):
                start = clock()
                nop(*args)
                times.append(clock() - start)
        self.floors = {symbol: sorted(t)[len(t) // 2] for symbol, t in samples.items()}
        self.arguments = []


def _noop(*_: Any) -> int:
    return GO_ON


def tvm_threads() -> int:
    """Worker threads of TVM's CPU thread pool (TVM_NUM_THREADS, else TVM's default)."""
    import tvm

    return int(tvm.get_global_func("runtime.NumThreads")())


def clock_for(gpu: bool) -> tuple[Callable[[], float], str]:
    """The profiling clock: the calling thread's CPU time where that is the whole run.

    With one TVM thread on the CPU every kernel, builtin and the VM itself run on the
    calling thread, so its CPU time is the run's cost and other processes taking the core
    do not add to it (on a loaded 2-core machine the wall-clock sum of per-call medians fell
    to 0.53-0.70 of the end-to-end median; CPU time keeps it near 1). With more threads the
    workers' time is not the caller's, and on a GPU the host waits on the device: wall time.
    """
    if not gpu and tvm_threads() == 1:
        return time.thread_time, "thread CPU time"
    return time.perf_counter, "wall"


REDO = 3  # device-timed runs tried again when the filler ran out before the run was issued


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
    clock: tuple[Callable[[], float], str] | None = None,
    device_timer: tuple[Any, str] | None = None,
) -> Timings:
    """Time the entry function per call (instrumented) and end to end (plain), interleaved.

    ``make_vm(**kwargs)`` makes a fresh VirtualMachine for the compiled executable;
    ``kernels`` are the symbols of the module's PrimFuncs (see ``CallTimer``); ``clock`` is
    (function, name), by default ``clock_for(gpu)``; ``device_timer`` is (timer, what it
    measures), by default ``devtimer.for_device``.

    Each repeat runs the plain VM, the instrumented VM and a VM with a do-nothing hook back
    to back, so load from other processes lands on all alike. On the CPU the instrumented
    run gives host and device spans at once (they are the same). On a GPU with a device
    timer it is two runs: one timed on the host only (launch costs and builtins as in a
    real run, no syncs), one with device marks behind a filler (``devtimer``).
    """
    from toolkit.profile.in_tvm import devtimer
    from toolkit.stack import compat

    if not compat.vm_has_instrument():
        if compat.vm_has_profiler():
            return _measure_old_profiler(make_vm, entry, args, dev, repeat=repeat, warmup=warmup)
        from toolkit.errors import TkError

        raise TkError("this TVM's VM has neither set_instrument nor profile(); cannot time calls")
    now, clock_name = clock or clock_for(gpu)
    marks, timer_name = device_timer or devtimer.for_device(dev, gpu, now)
    separate = gpu and marks is not None  # device marks in runs of their own
    plain, timed, hooked = make_vm(), make_vm(), make_vm()
    timer = CallTimer(dev.sync if gpu and marks is None else None, kernels, now)
    timed.set_instrument(timer)
    hooked.set_instrument(_noop)
    f_plain, f_timed, f_hooked = plain[entry], timed[entry], hooked[entry]

    def wall(fn: Callable[..., Any]) -> float:
        start = now()
        fn(*args)
        dev.sync()
        return now() - start

    def plain_run() -> tuple[float, float, float]:
        """End to end on the profiling clock and on the wall, and the time to issue it."""
        start_wall, start = time.perf_counter(), now()
        f_plain(*args)
        issued = now() - start
        dev.sync()
        return now() - start, time.perf_counter() - start_wall, issued

    def timed_run() -> tuple[float, float]:
        start = now()
        f_timed(*args)
        issued = now() - start
        dev.sync()
        return now() - start, issued

    def device_run() -> tuple[list[Call], bool]:
        """One run timed on the device, and whether the filler outlasted issuing it."""
        timer.begin_run(describe=False, marks=marks)
        marks.begin()
        f_timed(*args)
        backed_up = marks.issued()
        dev.sync()
        calls = timer.finish_run()
        marks.size_filler(calls[-1].end if calls else 0.0)
        return calls, backed_up

    try:
        timer.begin_run(describe=True, marks=None if separate else marks)
        wall(f_timed)  # the first call also loads code; its shapes name the rows
        signatures = timer.signatures or []
        timer.calibrate()
        if separate:
            marks.size_filler(timer.calls[-1].end if timer.calls else 0.0)
        for _ in range(warmup):
            wall(f_plain)
            wall(f_hooked)
            timer.begin_run(describe=False, marks=None if separate else marks)
            wall(f_timed)
            timer.finish_run()
            if separate:
                device_run()
        result = Timings("instrument", [], signatures, [], clock=clock_name,
                         device_timer=timer_name, gpu=gpu, floors=dict(timer.floors))
        for _ in range(repeat):
            e2e, e2e_wall, issued = plain_run()
            result.end_to_end.append(e2e)
            result.end_to_end_wall.append(e2e_wall)
            result.issue_plain.append(issued)
            timer.begin_run(describe=False, marks=None if separate else marks)
            e2e, issued = timed_run()
            result.instrumented.append(e2e)
            result.issue_instrumented.append(issued)
            host = timer.finish_run()
            if separate:
                for _ in range(REDO):
                    device, backed_up = device_run()
                    if backed_up:
                        break
                    result.device_runs_redone += 1
                # A run the filler never outlasted (a sync inside the run drains the stream)
                # is kept, counted: its kernel spans may hold launch latency.
                result.device_runs_gapped += not backed_up
                if len(device) == len(host):
                    for h, d in zip(host, device):
                        h.device = d.device
                    result.device_runs += 1
            result.runs.append(host)
            result.hooked_noop.append(wall(f_hooked))
        if isinstance(marks, devtimer.CudaEventTimer):
            result.device_timer = marks.name  # it may have changed its filler on the way
    finally:
        close = getattr(marks, "close", None)
        if close is not None:
            close()
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
    result = Timings("vm.profile", [], signatures, [],
                     device_timer="TVM's vm.profile() (its own timers)")
    for i in range(warmup + repeat):
        start = time.perf_counter()
        plain[entry](*args)
        dev.sync()
        e2e = time.perf_counter() - start
        # Report::AsJSON: strings bare, durations {"microseconds": x}, counts {"count": n}.
        report = json.loads(profiled.profile(entry, *args).json())
        calls: list[Call] = []
        for call in report.get("calls", []):
            name = str(call.get("Name", "?"))
            micros = float(call.get("Duration (us)", {}).get("microseconds", 0.0))
            count = int(call.get("Count", {}).get("count", 1) or 1)
            shapes = _old_shapes(str(call.get("Argument Shapes", "")))
            for _ in range(count):
                start, seconds = calls[-1].end if calls else 0.0, micros / count * 1e-6
                calls.append(Call(name, start, start + seconds,
                                  None if is_builtin(name) else seconds))
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
