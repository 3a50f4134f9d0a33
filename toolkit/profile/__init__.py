"""Per-operator timing of a compiled workload (``tk profile``) and comparison of two profiles.

``profile()`` compiles through the hosted stack with a kernel-capturing PassInstrument,
times every VM call (``timing``), estimates each kernel's work (``cost``) and returns a
``report.Report`` whose ``operators`` DataFrame is the table; ``compare`` matches two.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from typing import Any

from toolkit.profile.report import Report

__all__ = ["Report", "profile", "header_for"]


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
               repeat: int, warmup: int, method: str) -> dict[str, Any]:
    """What makes two profiles comparable, plus when and where this one was taken."""
    import tvm

    from toolkit import __version__

    return {
        "workload": workload,
        "target": target_spec,
        "target_kind": target.kind.name,
        "device": _device_name(dev, gpu),
        "tk_version": __version__,
        "tvm_version": getattr(tvm, "__version__", "unknown"),
        "repeat": repeat,
        "warmup": warmup,
        "method": method,
        "threads": os.environ.get("TVM_NUM_THREADS", "default"),
        "host": platform.node(),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def profile(source: str, target_spec: str = "llvm", *, repeat: int = 20, warmup: int = 3,
            seed: int = 0) -> Report:
    """Compile ``source`` for ``target_spec``, time every VM call, return the report."""
    from tvm import relax

    from toolkit import stack
    from toolkit import target as targets
    from toolkit import workload as workloads
    from toolkit.errors import DeviceAbsent, UserError
    from toolkit.profile import cost, report, timing

    if repeat < 1 or warmup < 0:
        raise UserError("--repeat must be >= 1 and --warmup >= 0")
    target = targets.to_tvm(target_spec)
    try:
        dev = targets.device_for(target)
    except DeviceAbsent as e:  # before a compile whose result could not run anyway
        raise DeviceAbsent(f"cannot profile on {target.kind.name}: {e}") from None
    wl = workloads.load(source, seed=seed)
    capture = cost.KernelCapture()
    compiled = stack.compile(wl, target_spec, instruments=[cost.instrument(capture)])
    kernels = cost.analyse(capture)
    args = stack.to_device([*wl.make_inputs(seed), *wl.params], dev)
    gpu = targets.is_gpu(target)

    def make_vm(**kwargs: Any) -> Any:
        return relax.VirtualMachine(compiled.executable, dev, **kwargs)

    try:
        timings = timing.measure(make_vm, wl.entry, args, dev, repeat=repeat, warmup=warmup,
                                 gpu=gpu)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - a kernel failing under timing is TVM's failure
        from toolkit.errors import TvmFailure

        raise TvmFailure(
            f"running {wl.source} on {dev} failed: {stack._first_line(e)}",
            reproduce=stack.reproduce_command("run", wl, target_spec, "--debug"),
        ) from e
    header = header_for(wl.source, target_spec, target, dev, gpu, repeat, warmup,
                        timings.method)
    return report.build(timings, kernels, header)
