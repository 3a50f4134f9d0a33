"""The hosted compile stack: workload -> Relax -> TIR -> codegen -> runtime.

Every model-level command (compile, run, dump-ir, profile, pass bisection) goes through
``compile`` and ``run`` here, so each can be pointed at any workload the loader accepts.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.errors import TvmFailure, UserError
from toolkit.tvm_side import compat
from toolkit.tvm_side import target as targets
from toolkit.tvm_side.workload import Workload, flatten_outputs

SOURCE_SUFFIX = {"llvm": ".ll", "cuda": ".cu", "c": ".c", "opencl": ".cl", "metal": ".metal"}


@dataclass
class Compiled:
    workload: Workload
    target_spec: str
    target: Any  # tvm.target.Target
    executable: Any  # relax VMExecutable
    seconds: float


def reproduce_command(command: str, workload: Workload, target_spec: str, *extra: str) -> str:
    """The tk command line that repeats the failing work, with tracebacks shown.

    ``--debug`` is tk's own option, so it goes before the command (``tk compile --debug`` is
    refused by click); ``extra`` are options of ``command``.
    """
    words = ["tk", "--debug", command, workload.source, "--target", target_spec, *extra]
    return " ".join(shlex.quote(w) for w in words)


def _gpu_schedule(mod: Any, target: Any) -> Any:
    """TVM's default GPU schedules, for TVMs whose pipeline does not apply them itself."""
    from tvm import relax

    dl = compat.dlight()
    if dl is None:
        raise UserError("this TVM has no dlight; GPU targets need scheduled PrimFuncs")
    with target:
        mod = relax.transform.LegalizeOps()(mod)
        return dl.ApplyDefaultSchedule(
            dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(),
            dl.gpu.GeneralReduction(), dl.gpu.Fallback(),
        )(mod)


def compile(
    workload: Workload,
    target_spec: str,
    *,
    instruments: Sequence[Any] = (),
    pass_config: dict[str, Any] | None = None,
) -> Compiled:
    """Compile a workload's module for a target through TVM's default pipeline.

    ``instruments`` are PassInstruments attached to the PassContext of the whole compile,
    Relax and TIR alike: the seam dump-ir and pass bisection plug into.
    """
    import tvm

    target = targets.to_tvm(target_spec)
    mod = workload.mod
    start = time.perf_counter()
    try:
        with tvm.transform.PassContext(
            opt_level=3, instruments=list(instruments), config=pass_config or {}
        ):
            if targets.is_gpu(target) and not compat.gpu_pipeline_schedules():
                mod = _gpu_schedule(mod, target)
            custom = {"relax_pipeline": workload.pipeline} if workload.pipeline is not None else {}
            executable = compat.compile_fn()(mod, target=target, **custom)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - any TVM error is a compile failure to report
        raise TvmFailure(
            f"compiling {workload.source} for {target_spec} failed: {_first_line(e)}",
            reproduce=reproduce_command("compile", workload, target_spec),
        ) from e
    return Compiled(workload, target_spec, target, executable, time.perf_counter() - start)


def _first_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    # TVM errors end with the most specific line; its traceback comes first.
    tail = [ln for ln in lines if "Error" in ln or "error" in ln]
    return (tail[-1] if tail else lines[-1] if lines else type(e).__name__).strip()


def export(compiled: Compiled, path: Path) -> Path:
    """Write the executable as a shared library loadable by ``tvm.runtime.load_module``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        compiled.executable.export_library(str(path))
    except Exception as e:  # noqa: BLE001
        raise TvmFailure(
            f"exporting {path} failed: {_first_line(e)}",
            reproduce=reproduce_command(
                "compile", compiled.workload, compiled.target_spec, "-o", str(path)
            ),
        ) from e
    return path


def _modules(root: Any) -> Iterator[Any]:
    seen: set[int] = set()
    stack = [root]
    while stack:
        mod = stack.pop(0)
        key = id(mod)
        if key in seen:
            continue
        seen.add(key)
        yield mod
        stack.extend(getattr(mod, "imports", []) or [])


def sources(compiled: Compiled) -> dict[str, str]:
    """Generated source per module of the executable: host LLVM IR, CUDA C, ..."""
    out: dict[str, str] = {}
    for mod in _modules(compiled.executable.mod):
        kind = str(getattr(mod, "kind", None) or mod.type_key)
        try:
            text = mod.inspect_source()
        except Exception:  # noqa: BLE001 - binary-only modules (the VM bytecode) have none
            continue
        if not text:
            continue
        name = ("host" if kind == "llvm" else kind) + SOURCE_SUFFIX.get(kind, ".txt")
        n = 1
        while name in out:
            n += 1
            stem, dot, ext = name.partition(".")
            name = f"{stem.rstrip('0123456789_')}_{n}.{ext}"
        out[name] = text
    return out


def emit_sources(compiled: Compiled, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sources(compiled).items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written


@dataclass
class RunResult:
    outputs: list[np.ndarray]
    seconds: float
    device: str


def to_device(arrays: Sequence[np.ndarray], dev: Any) -> list[Any]:
    make = compat.tensor_fn()
    return [make(np.ascontiguousarray(a), dev) for a in arrays]


def virtual_machine(compiled: Compiled, dev: Any) -> Any:
    from tvm import relax

    return relax.VirtualMachine(compiled.executable, dev)


def run(compiled: Compiled, inputs: Sequence[np.ndarray]) -> RunResult:
    """Run the entry function on the target's device (refused when it is absent)."""
    dev = targets.device_for(compiled.target)
    vm = virtual_machine(compiled, dev)
    args = to_device([*inputs, *compiled.workload.params], dev)
    start = time.perf_counter()
    try:
        out = vm[compiled.workload.entry](*args)
        dev.sync()
    except Exception as e:  # noqa: BLE001
        raise TvmFailure(
            f"running {compiled.workload.source} on {dev} failed: {_first_line(e)}",
            reproduce=reproduce_command("run", compiled.workload, compiled.target_spec),
        ) from e
    return RunResult(flatten_outputs(out), time.perf_counter() - start, str(dev))


@dataclass
class Comparison:
    against: str  # "reference" or the target compared with
    max_abs: float
    max_rel: float
    ok: bool
    rtol: float
    atol: float


def compare(
    actual: Sequence[np.ndarray], expected: Sequence[np.ndarray], against: str,
    rtol: float = 1e-3, atol: float = 1e-4,
) -> Comparison:
    if len(actual) != len(expected):
        return Comparison(against, float("inf"), float("inf"), False, rtol, atol)
    max_abs = max_rel = 0.0
    ok = True
    for a, e in zip(actual, expected):
        a = np.asarray(a, dtype="float64")
        e = np.asarray(e, dtype="float64")
        if a.shape != e.shape:
            return Comparison(against, float("inf"), float("inf"), False, rtol, atol)
        diff = np.abs(a - e)
        if diff.size:
            max_abs = max(max_abs, float(np.nanmax(diff)))
            max_rel = max(max_rel, float(np.nanmax(diff / np.maximum(np.abs(e), 1e-12))))
        ok = ok and bool(np.all(diff <= atol + rtol * np.abs(e))) and not np.isnan(a).any()
    return Comparison(against, max_abs, max_rel, ok, rtol, atol)


def check(
    compiled: Compiled, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray],
    rtol: float = 1e-3, atol: float = 1e-4,
) -> Comparison:
    """Compare outputs with the workload's reference, else with the same workload on llvm."""
    expected = compiled.workload.reference_outputs(inputs)
    if expected is not None:
        return compare(outputs, expected, "reference", rtol, atol)
    baseline = compile(compiled.workload, "llvm")
    return compare(outputs, run(baseline, inputs).outputs, "llvm", rtol, atol)


@contextlib.contextmanager
def timed() -> Iterator[list[float]]:
    box: list[float] = []
    start = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)
