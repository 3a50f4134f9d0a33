"""Per-operator profile on a remote device over TVM RPC (``tk profile --rpc/--tracker``).

The local profile's per-call hook is a Python callback inside the VM, which cannot run on
the far side of an RPC session (a C++ ``tvm_rpc`` server has no Python at all). So the far
side times with TVM's own ``time_evaluator``, which runs its loop there and sends back only
the numbers: the entry function end to end through the remote VM, and every kernel alone
from the same compiled code (the executable's kernel library, uploaded as its own module,
since a loaded VM executable resolves only VM functions by name). The call sequence comes
from the compiled Relax entry: its calls of the module's kernels, in order. Builtins run on
the remote host and are not timed one by one; they are what end to end leaves over.

Every call waits in a step of the session's watchdog (``toolkit.watchdog``), whose bound is
on one call going without a reply; so time_evaluator's rounds are asked for a few seconds'
worth at a time, and ``-n 5000`` on a live server runs as long as it takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolkit import reproduce
from toolkit.cause import one_line
from toolkit.errors import TkError, TvmFailure, UserError
from toolkit.profile.records import Call, Measured, Timings

METHOD = "rpc time_evaluator"
# time_evaluator repeats a call until one round takes this long and reports the round's
# mean: a time slice lost to another process is then a share of a round, not all of it.
MIN_REPEAT_MS = 10
# Seconds of rounds asked for in one time_evaluator call, at most, and at most this share of
# the bound on a call (Bounds.timeout): a busy machine may slow one call down many times.
CALL_S = 2.0
CALL_SHARE = 0.1


def call_sequence(final: Any, entry: str) -> list[str]:
    """The kernels the compiled entry calls, in order, by the symbol the library exports."""
    import tvm
    from tvm import relax

    symbols = {name: symbol for name, (symbol, _) in _prim_funcs(final).items()}
    order: list[str] = []

    def visit(expr: Any) -> None:
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.GlobalVar) \
                and expr.op.name_hint in symbols:
            order.append(symbols[expr.op.name_hint])

    relax.analysis.post_order_visit(final[entry].body, visit)
    return order


def kernel_arguments(func: Any, rng: np.random.Generator) -> list[np.ndarray] | None:
    """Random arrays for a kernel's buffers, or None where a shape or a scalar argument
    is only known at run time (a dynamic-shape kernel: its values come from the VM)."""
    from toolkit.stack import compat
    from toolkit.stack.workload import random_array

    arrays = []
    for buffer, _ in compat.prim_func_buffers(func):
        if buffer is None:
            return None
        _, shape, dtype = buffer
        try:
            dims = [int(d) for d in shape]
        except TypeError:
            return None
        arrays.append(random_array(rng, dims, dtype))
    return arrays


def profile(workload: Any, target: Any, session: Any, *, repeat: int = 20, warmup: int = 3,
            seed: int = 0, inputs: Sequence[Any] | None = None, options: Any = None,
            input_flags: Sequence[str] = ()) -> Measured:
    """Compile ``workload`` here, run and time it on ``session``'s device (a
    ``toolkit.stack.remote.Session``), return what was measured. ``input_flags`` are the
    options that chose ``inputs`` (``--inputs FILE``), for a failure's reproduce line."""
    from tvm import relax

    from toolkit import stack
    from toolkit.profile.in_tvm import cost
    from toolkit.profile.in_tvm.measure import header_for
    from toolkit.stack import target as targets
    from toolkit.stack.workload import TIR

    if repeat < 1 or warmup < 0:
        raise UserError("--repeat must be >= 1 and --warmup >= 0")
    if workload.kind == TIR:
        raise UserError(f"{workload.source} ({workload.entry}) is a TIR function, one kernel "
                        f"with no VM to profile; time it with 'tk run {workload.source} --entry "
                        f"{workload.entry} --rpc ...'")
    if workload.library is not None:
        raise UserError(f"{workload.source} is already compiled and keeps no IR to find its "
                        f"kernels in; profile the workload it came from")
    t = targets.resolve(target)
    dev = session.device(t.tvm)  # refused before a compile whose result could not run
    capture = cost.KernelCapture()
    compiled = stack.compile(workload, t, instruments=[cost.instrument(capture)],
                             options=options)
    kernels = cost.analyse(capture)
    sequence = call_sequence(capture.final, workload.entry)
    where = f"{targets.device_kind(t.tvm)}:0 at {session.address}"
    doing = f"profiling {workload.source}"
    rng = np.random.default_rng(seed)
    try:
        vm_module, dev = session.load(compiled)
        library = session.load_kernels(compiled)
        arrays = list(inputs) if inputs is not None else workload.make_inputs(seed)
        with session.step(f"{doing} (sending its inputs)"):
            args = stack.to_device([*arrays, *workload.params], dev)
            vm = relax.VirtualMachine(vm_module, dev)
        for i in range(warmup):
            with session.step(f"{doing} (warm-up run {i + 1} of {warmup})"):
                vm[workload.entry](*args)
                dev.sync()
        end_to_end = _rounds(session, doing, "end to end", repeat,
                             lambda n, vm=vm, args=args: vm.time_evaluator(
                                 workload.entry, dev, number=1, repeat=n,
                                 min_repeat_ms=MIN_REPEAT_MS)(*args))
        per_kernel: dict[str, list[float]] = {}
        signatures: dict[str, tuple[str, ...]] = {}
        untimed: list[str] = []
        kargs: list[Any] = []
        by_symbol = dict(_prim_funcs(capture.final).values())
        for symbol in dict.fromkeys(sequence):
            arrays_k = kernel_arguments(by_symbol[symbol], rng)
            if arrays_k is None:
                untimed.append(symbol)
                continue
            with session.step(f"{doing} (sending {symbol}'s arguments)"):
                kargs = stack.to_device(arrays_k, dev)
            per_kernel[symbol] = _rounds(
                session, doing, f"timing {symbol}", repeat + warmup,
                lambda n, symbol=symbol, kargs=kargs, library=library: library.time_evaluator(
                    symbol, dev, number=1, repeat=n, min_repeat_ms=MIN_REPEAT_MS)(*kargs),
            )[warmup:]
            signatures[symbol] = tuple(f"{a.dtype}[{','.join(str(d) for d in a.shape)}]"
                                       for a in arrays_k)
        # What tk put on the server is freed by calls to it, which wait like any other.
        with session.step(f"{doing} (freeing its tensors and modules on the server)"):
            del vm, args, kargs, library, vm_module
    except (TkError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - a kernel failing remotely is TVM's failure
        raise TvmFailure(
            f"{doing} on {where} failed: {one_line(e)}",
            reproduce=reproduce.tk_command(
                "profile", workload.source, t.spec, *compiled.options.flags(),
                "--entry", workload.entry, "-n", str(repeat), "--warmup", str(warmup),
                *(input_flags or ["--seed", str(seed)]), *session.remote.flags()),
        ) from e
    timed = [s for s in sequence if s in per_kernel]
    runs = []
    for r in range(repeat):
        clock, run = 0.0, []
        for symbol in timed:  # back to back: each kernel's round r, in call order
            seconds = per_kernel[symbol][r]
            run.append(Call(symbol, clock, clock + seconds, device=seconds))
            clock += seconds
        runs.append(run)
    timings = Timings(method=METHOD, runs=runs,
                      signatures=[(s, signatures[s]) for s in timed], end_to_end=end_to_end,
                      clock="remote device clock (time_evaluator)",
                      device_timer="time_evaluator on the remote device, each kernel alone",
                      gpu=t.gpu)
    header = header_for(workload.source, t.spec, t.tvm, dev, t.gpu, repeat, warmup, METHOD,
                        workload.entry)
    header.update(device=where, remote=session.address, host=session.address,
                  threads=_remote_threads(session))
    warnings = list(compiled.notes)
    warnings += [f"not timed remotely (shapes known only at run time): {', '.join(untimed)}; "
                "their time is in what end to end leaves over"] if untimed else []
    return Measured(timings, kernels, header, warnings)


def _rounds(session: Any, doing: str, what: str, rounds: int,
            timer: Callable[[int], Any]) -> list[float]:
    """``rounds`` rounds of time_evaluator (``timer(n)`` runs n of them remotely), asked for
    a few at a time (``CALL_S``, ``CALL_SHARE``), each call a step of ``session``."""
    call_s = min(CALL_S, CALL_SHARE * session.remote.bounds.timeout)
    results: list[float] = []
    batch = 1  # the first call says how long a round takes
    while len(results) < rounds:
        n = min(batch, rounds - len(results))
        start = time.monotonic()
        with session.step(f"{doing} ({what}, rounds {len(results) + 1}-{len(results) + n} "
                          f"of {rounds})"):
            results += list(timer(n).results)
        took = max(time.monotonic() - start, 1e-6)
        batch = max(1, min(10 * n, int(n * call_s / took)))
    return results


def _prim_funcs(final: Any) -> dict[str, tuple[str, Any]]:
    """Kernel name in the module -> (the symbol the library exports, the PrimFunc)."""
    from toolkit.stack import compat

    out = {}
    for gv, func in final.functions.items():
        if isinstance(func, compat.tir().PrimFunc):
            attrs = func.attrs
            symbol = str(attrs["global_symbol"]) \
                if attrs is not None and "global_symbol" in attrs else gv.name_hint
            out[gv.name_hint] = (symbol, func)
    return out


def _remote_threads(session: Any) -> int | None:
    """The remote runtime's CPU thread pool, where it says."""
    try:
        with session.step("asking for its thread count"):
            return int(session.rpc.get_function("runtime.NumThreads")())
    except TkError:
        raise
    except Exception:  # noqa: BLE001 - a runtime without the query: the header says unknown
        return None
