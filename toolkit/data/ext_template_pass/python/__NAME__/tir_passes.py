"""A TIR pass: record on every PrimFunc how many parameters it takes
(attribute ``__NAME__.num_params``).

In-tree, this would be a C++ pass in ``src/tirx/transform/`` (``tvm::tirx::transform::
CreatePrimFuncPass``) with its Python wrapper in ``python/tvm/tirx/transform/transform.py``.
"""

import tvm

# TVM 0.27 renamed tvm.tir to tvm.tirx.
PrimFunc = (tvm.tirx if hasattr(tvm, "tirx") else tvm.tir).PrimFunc


@tvm.transform.module_pass(opt_level=0, name="__NAME__.TagPrimFuncs")
def TagPrimFuncs(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:  # noqa: N802
    """A module pass over the module's PrimFuncs (those LegalizeOps made from Relax ops)."""
    updates = {gv: func.with_attr("__NAME__.num_params", len(func.params))
               for gv, func in mod.functions.items() if isinstance(func, PrimFunc)}
    for gv, func in updates.items():
        mod[gv] = func
    return mod
