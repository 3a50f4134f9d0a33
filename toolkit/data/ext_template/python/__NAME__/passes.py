"""A sample Python pass: tag every PrimFunc with how many parameters it takes.

Shows the shape of a pass an extension ships in Python: a module pass registered under the
extension's name, usable in a tvm.transform.Sequential or a PassContext like any other.
"""

import tvm


@tvm.transform.module_pass(opt_level=0, name="__NAME__.TagParamCount")
def tag_param_count(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
    """Add attribute ``__NAME__.num_params`` to each PrimFunc."""
    updates = {
        gv: func.with_attr("__NAME__.num_params", len(func.params))
        for gv, func in mod.functions.items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    for gv, func in updates.items():
        mod[gv] = func
    return mod
