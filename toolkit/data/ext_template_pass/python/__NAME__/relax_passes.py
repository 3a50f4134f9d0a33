"""A Relax pass: mark every Relax function with the attribute ``__NAME__.tagged``.

Replace its body with your rewrite (a ``relax.PyExprMutator`` for
expression-level rewrites). In-tree, this would be a C++ pass in ``src/relax/transform/``
with its Python wrapper in ``python/tvm/relax/transform/transform.py``.
"""

import tvm
from tvm import relax


@relax.transform.function_pass(opt_level=0, name="__NAME__.TagRelaxFunctions")
def TagRelaxFunctions(func: relax.Function, _mod: tvm.IRModule,  # noqa: N802
                      _ctx: tvm.transform.PassContext) -> relax.Function:
    """Runs on each Relax function of the module."""
    return func.with_attr("__NAME__.tagged", True)
