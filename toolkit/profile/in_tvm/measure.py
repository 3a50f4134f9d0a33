"""Per-operator timing of a compiled workload (``tk profile``), inside the TVM under test.

``profile()`` compiles through the hosted stack with a kernel-capturing PassInstrument,
times every VM call (``timing``), estimates each kernel's work (``cost``) and returns what it
measured (``records.Measured``); the host's ``toolkit.profile.report.build`` makes the report.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit import reproduce
from toolkit.profile.records import Measured

if TYPE_CHECKING:
    from toolkit.stack.target import Target
    from toolkit.stack.workload import Workload

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _device_name(dev: Any, gpu: bool) -> str:
    if gpu:
        name = getattr(dev, "device_name", None)
        return f"{dev} {name}" if name else str(dev)
    return f"{dev} {_cpu_model()} x{os.cpu_count()}"


def header_for(workload: str, target_spec: str, target: Any, dev: Any, gpu: bool,
               repeat: int, warmup: int, method: str, entry: str | None = None) -> dict[str, Any]:
    """What makes two profiles comparable, plus when and where this one was taken."""
    import tvm

    from toolkit import __version__
    from toolkit.profile.in_tvm.timing import tvm_threads

    return {
        "workload": workload,
        "entry": entry,
        "target": target_spec,
        "target_kind": target.kind.name,
        "device": _device_name(dev, gpu),
        "tk_version": __version__,
        "tvm_version": getattr(tvm, "__version__", "unknown"),
        "repeat": repeat,
        "warmup": warmup,
        "method": method,
        # TVM's CPU thread pool; a GPU run uses it only for host-side builtins.
        "threads": tvm_threads(),
        "host": platform.node(),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


@dataclass
class Prepared:
    """A workload compiled for profiling, its kernels analysed, inputs on the device."""

    workload: Any  # toolkit.stack.workload.Workload
    target_spec: str
    target: Any
    compiled: Any  # toolkit.stack.Compiled
    kernels: dict[str, Any]  # symbol -> cost.KernelInfo
    dev: Any
    args: list[Any]
    gpu: bool

    def make_vm(self, **kwargs: Any) -> Any:
        from tvm import relax

        return relax.VirtualMachine(self.compiled.executable, self.dev, **kwargs)


def prepare(workload: Workload, target: str | Target = "llvm", *, seed: int = 0,
            inputs: Sequence[Any] | None = None, options: Any = None) -> Prepared:
    """Compile a loaded workload with the kernel capture; refuse absent devices first.

    ``inputs`` are the entry's input arrays (``tk profile --inputs``); without them, the
    workload's own or seeded-random ones (``seed``). ``options`` are the compile's
    ``stack.CompileOptions`` (``--db``, ``--opt-level``, ...).
    """
    from toolkit import stack
    from toolkit.errors import DeviceAbsent
    from toolkit.profile.in_tvm import cost
    from toolkit.stack import target as targets
    from toolkit.stack.workload import TIR

    t = targets.resolve(target)
    try:
        dev = targets.device_for(t.tvm)
    except DeviceAbsent as e:  # before a compile whose result could not run anyway
        raise DeviceAbsent(f"cannot profile on {t.kind}: {e}") from None
    if workload.kind == TIR:
        from toolkit.errors import UserError

        raise UserError(f"{workload.source} ({workload.entry}) is a TIR function, one kernel "
                        f"with no VM to profile; time it with 'tk run {workload.source} --entry "
                        f"{workload.entry}'")
    capture = cost.KernelCapture()
    compiled = stack.compile(workload, t, instruments=[cost.instrument(capture)],
                             options=options)
    arrays = list(inputs) if inputs is not None else workload.make_inputs(seed)
    args = stack.to_device([*arrays, *workload.params], dev)
    return Prepared(workload, t.spec, t.tvm, compiled, cost.analyse(capture), dev, args, t.gpu)


def profile(workload: Workload, target: str | Target = "llvm", *, repeat: int = 20,
            warmup: int = 3, seed: int = 0, inputs: Sequence[Any] | None = None,
            options: Any = None) -> Measured:
    """Compile a loaded workload for ``target``, time every VM call, return what was
    measured."""
    from toolkit.cause import one_line
    from toolkit.errors import TvmFailure, UserError
    from toolkit.profile.in_tvm import timing

    if repeat < 1 or warmup < 0:
        raise UserError("--repeat must be >= 1 and --warmup >= 0")
    p = prepare(workload, target, seed=seed, inputs=inputs, options=options)
    wl = p.workload
    try:
        timings = timing.measure(p.make_vm, wl.entry, p.args, p.dev, repeat=repeat,
                                 warmup=warmup, gpu=p.gpu, kernels=p.kernels)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - a kernel failing under timing is TVM's failure
        raise TvmFailure(
            f"running {wl.source} on {p.dev} failed: {one_line(e)}",
            reproduce=reproduce.tk_command("profile", wl.source, p.target_spec),
        ) from e
    header = header_for(wl.source, p.target_spec, p.target, p.dev, p.gpu, repeat, warmup,
                        timings.method, wl.entry)
    return Measured(timings, p.kernels, header, list(p.compiled.notes))
