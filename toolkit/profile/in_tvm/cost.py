"""What each compiled kernel is: its TIR, estimated FLOPs, structural hash, fused Relax ops.

The executable keeps no TIR, so a PassInstrument watches the compile: the last module that
still holds Relax functions carries every PrimFunc under the symbol the VM calls it by, in
scheduled-but-unlowered TIR where loops and blocks still say what is computed. The module
entering ``FuseTIR`` says which Relax ops each fused function groups.
"""

from __future__ import annotations

from typing import Any

from toolkit.profile.records import KernelInfo, base_op
from toolkit.stack import compat


def _is_relax_function(func: Any) -> bool:
    from tvm import relax

    return isinstance(func, relax.Function)


def _is_prim_func(func: Any) -> bool:
    return isinstance(func, compat.tir().PrimFunc)


class KernelCapture:
    """PassInstrument hooks (wrapped by :func:`instrument`) that keep the modules needed."""

    def __init__(self) -> None:
        self.final: Any = None  # last module with Relax functions: the VM's kernels
        self.before_fuse_tir: Any = None

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if info.name == "FuseTIR":
            self.before_fuse_tir = mod

    def run_after_pass(self, mod: Any, info: Any) -> None:
        if any(_is_relax_function(f) for f in mod.functions.values()):
            self.final = mod


def instrument(capture: KernelCapture) -> Any:
    """``capture`` as a ``tvm.instrument.PassInstrument`` for ``stack.compile``."""
    import tvm

    cls = tvm.instrument.pass_instrument(type("TkKernelCapture", (), {
        "run_before_pass": lambda self, mod, info: capture.run_before_pass(mod, info),
        "run_after_pass": lambda self, mod, info: capture.run_after_pass(mod, info),
    }))
    return cls()


def _fused_groups(mod: Any) -> dict[str, list[str]]:
    """Fused Relax function -> the ops inside it, from the module entering FuseTIR."""
    from tvm import relax

    groups: dict[str, list[str]] = {}
    if mod is None:
        return groups
    for gv, func in mod.functions.items():
        if not _is_relax_function(func) or func.attrs is None or "Primitive" not in func.attrs:
            continue
        ops: list[str] = []

        def visit(expr: Any, ops: list[str] = ops) -> None:
            if not isinstance(expr, relax.Call):
                return
            op_name = getattr(expr.op, "name", None)
            if op_name == "relax.call_tir" and expr.args:
                ops.append(base_op(str(expr.args[0].name_hint)))
            elif isinstance(op_name, str) and op_name.startswith("relax."):
                ops.append(op_name.removeprefix("relax."))

        relax.analysis.post_order_visit(func.body, visit)
        groups[gv.name_hint] = ops
    return groups


def _name_ops(name: str) -> list[str]:
    """Ops spelled in a kernel name: ``fused_matmul_add_relu`` -> matmul, add, relu.

    Only for kernels whose fusion was not seen (pre-fused workloads): greedy longest match
    against the registered Relax op names, so ``layer_norm`` stays one op.
    """
    if not name.startswith("fused_"):
        return [base_op(name)]
    import tvm

    known = {n.rsplit(".", 1)[-1] for n in tvm.ir.Op.list_op_names() if n.startswith("relax.")}
    words = name.removeprefix("fused_").split("_")
    ops, i = [], 0
    while i < len(words):
        for j in range(len(words), i, -1):
            candidate = "_".join(words[i:j])
            if candidate in known or base_op(candidate) in known or j == i + 1:
                ops.append(candidate if candidate in known else base_op(candidate))
                i = j
                break
    return ops


def estimate_flops(func: Any) -> float | None:
    """Arithmetic operations per call, counted over the TIR's loop nests.

    TVM's own estimator multiplies each block's arithmetic by its loop extents, which covers
    matmul and conv (a multiply and an add per reduction step), elementwise ops and
    reductions; data movement (transpose, reshape) counts 0.
    """
    estimator = compat.flops_estimator()
    if estimator is None:
        return None
    try:
        value = float(estimator(func))
    except Exception:  # noqa: BLE001 - symbolic extents or opaque externs: no estimate
        return None
    return value if value >= 0 else None


def struct_hash(func: Any) -> str | None:
    try:
        unnamed = func.without_attr("global_symbol")
        return f"{compat.structural_hash()(unnamed) & 0xFFFFFFFFFFFFFFFF:016x}"
    except Exception:  # noqa: BLE001 - an unhashable attr should not sink the report
        return None


def analyse(capture: KernelCapture) -> dict[str, KernelInfo]:
    """KernelInfo per symbol the VM calls, for every PrimFunc of the compiled module."""
    mod = capture.final
    if mod is None:
        return {}
    groups = _fused_groups(capture.before_fuse_tir)
    out: dict[str, KernelInfo] = {}
    for gv, func in mod.functions.items():
        if not _is_prim_func(func):
            continue
        symbol = str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs \
            else gv.name_hint
        ops = groups.get(gv.name_hint) or _name_ops(gv.name_hint)
        out[symbol] = KernelInfo(symbol, estimate_flops(func), struct_hash(func), ops)
    return out
