"""Codegen as the last records of a dump (the generated source of every module, timed), and
which dlight rule scheduled each function.

TVM turns each TIR module into a runtime module in ``codegen_build(mod, target)``
(``tvm.tirx.build`` since the tirx rename, ``tvm.tir.build`` before), called once for the host
module and once per device module. For the length of one compile that function is wrapped:
each call is timed and its runtime module's source read (CUDA C; LLVM IR and assembly for
the host). ``--verify`` compiles the CUDA source with nvcc to a cubin (ptxas runs), so
shared-memory, register and architecture errors surface on a machine without a GPU.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.cause import first_cause
from toolkit.stack import compat

# Sources per runtime-module kind: (file name suffix, inspect_source format).
FORMATS: dict[str, list[tuple[str, str]]] = {
    "llvm": [(".ll", "ll")],
    "cuda": [(".cu", "")],
    "c": [(".c", "")],
}
# Host assembly runs LLVM's whole backend again (on builtin:mlp40 more CPU time than the rest
# of the compile): only on request.
ASSEMBLY = {"llvm": (".s", "asm")}


@dataclass
class Codegen:
    """One ``codegen_build`` call: which module, for which target, what came out."""

    target_kind: str
    target: str
    functions: list[str]
    seconds: float
    sources: dict[str, str] = field(default_factory=dict)  # file name -> text
    arch: str | None = None
    error: str | None = None
    start: float = 0.0  # when the call began, on capture's clock


@contextlib.contextmanager
def capture(assembly: bool = False, sources: bool = True,
            clock: Callable[[], float] = time.perf_counter) -> Iterator[list[Codegen]]:
    """Record every codegen call made while the block runs (none on TVMs without the seam);
    with ``assembly``, host modules' assembly too; without ``sources``, only what was built
    and how long it took (reading sources back costs time the compile does not spend).
    Calls are timed on ``clock``."""
    calls: list[Codegen] = []
    module = _build_module()
    original = getattr(module, "codegen_build", None) if module is not None else None
    if original is None:
        yield calls
        return

    def codegen_build(mod: Any, target: Any) -> Any:
        start = clock()
        kind = str(target.kind.name)
        arch = target.attrs.get("arch") if hasattr(target, "attrs") else None
        call = Codegen(kind, f"{kind} -arch={arch}" if arch else kind,
                       [gv.name_hint for gv in mod.functions], 0.0,
                       arch=str(arch) if arch else None, start=start)
        calls.append(call)
        try:
            runtime = original(mod, target)
        except Exception as e:
            call.error = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            raise
        finally:
            call.seconds = clock() - start
        if sources:
            call.sources = _sources(runtime, kind, assembly)
        return runtime

    module.codegen_build = codegen_build
    try:
        yield calls
    finally:
        module.codegen_build = original


def _build_module() -> Any:
    return compat.first_module("tvm.tirx.build", "tvm.tir.build")


def _sources(runtime: Any, kind: str, assembly: bool) -> dict[str, str]:
    out = {}
    stem = "host" if kind in ("llvm", "c") else kind
    formats = FORMATS.get(kind, [(".txt", "")])
    if assembly and kind in ASSEMBLY:
        formats = [*formats, ASSEMBLY[kind]]
    for suffix, fmt in formats:
        try:
            text = runtime.inspect_source(fmt)
        except Exception:  # noqa: BLE001 - a format this module cannot give
            continue
        if text:
            out[stem + suffix] = text
    return out


@dataclass
class Verdict:
    tool: str
    ok: bool
    error: str | None  # the first error line
    output: str


def verify_cuda(source: str, arch: str | None) -> Verdict | None:
    """Compile CUDA C with nvcc down to a cubin (ptxas runs); None without nvcc."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    arch = arch or "sm_80"
    with tempfile.TemporaryDirectory(prefix="tk-verify-") as tmp:
        cu = Path(tmp) / "kernels.cu"
        cu.write_text(source)
        command = [nvcc, "-cubin", f"-arch={arch}", "-o", str(Path(tmp) / "kernels.cubin"),
                   str(cu)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = (proc.stdout + proc.stderr).replace(str(cu), "kernels.cu")
    tool = f"nvcc -cubin -arch={arch}"
    if proc.returncode == 0:
        return Verdict(tool, True, None, output)
    return Verdict(tool, False, _first_error(output), output)


def _first_error(output: str) -> str:
    cause = first_cause(output)
    return cause.text if cause.line else "nvcc failed without output"


@dataclass
class RuleApplication:
    """dlight's rules tried on one function: which one scheduled it (None: none did)."""

    function: Any  # the PrimFunc as ApplyDefaultSchedule received it
    rule: str | None
    start: float  # on dlight_rules' clock
    seconds: float


@contextlib.contextmanager
def dlight_rules(structural_hash: Callable[[Any], int] | None,
                 applied: list[RuleApplication] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> Iterator[dict[int, str]]:
    """Which dlight rule scheduled each function: structural hash of the function as
    ``ApplyDefaultSchedule`` received it -> rule class name (empty on TVMs without dlight,
    and without ``structural_hash``); each function's rules, timed on ``clock``, go to
    ``applied``.

    ``_apply_rules(func, target, rules, tunable)`` tries the rules in order; it is called here
    with one rule at a time, so TVM's own code still decides and the first rule that gives a
    schedule is the one named. The recorder knows each function's hash before the pass.
    """
    chosen: dict[int, str] = {}
    module = compat.first_module("tvm.s_tir.dlight.base.transform", "tvm.dlight.base.transform")
    original = getattr(module, "_apply_rules", None) if module is not None else None
    if original is None:
        yield chosen
        return

    def apply_rules(func: Any, target: Any, rules: Any, tunable: bool) -> Any:
        start = clock()
        space, rule = None, None
        for candidate in rules:
            space = original(func, target, [candidate], tunable)
            if space is not None:
                rule = type(candidate).__name__
                break
        if applied is not None:
            applied.append(RuleApplication(func, rule, start, clock() - start))
        if rule is not None and structural_hash is not None:
            chosen[structural_hash(func)] = rule
        return space

    module._apply_rules = apply_rules
    try:
        yield chosen
    finally:
        module._apply_rules = original
