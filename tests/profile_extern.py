"""Test workload: a packed-function extern that returns its result (not destination-passing),
between two compiled kernels."""
import inspect

import tvm
from tvm import relax, te

N = 1024


@tvm.register_global_func("tk_test.times_three", override=True)
def times_three(x):
    make = tvm.runtime.tensor if hasattr(tvm.runtime, "tensor") else tvm.nd.array
    return make(x.numpy() * 3)


tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType
x = relax.Var("x", tensor((N,), "float32"))
bb = relax.BlockBuilder()
with bb.function("main", [x]):
    with bb.dataflow():
        a = bb.emit(bb.call_te(lambda t: te.compute((N,), lambda i: t[i] + 1.0), x,
                               primfunc_name_hint="add_one"))
        # ty_args on the unified IR (0.27), sinfo_args before.
        kw = "ty_args" if "ty_args" in inspect.signature(relax.call_pure_packed).parameters \
            else "sinfo_args"
        b = bb.emit(relax.call_pure_packed("tk_test.times_three", a, **{kw: tensor((N,), "float32")}))
        c = bb.emit_output(bb.call_te(lambda t: te.compute((N,), lambda i: t[i] - 1.0), b,
                                      primfunc_name_hint="sub_one"))
    bb.emit_func_output(c)
mod = bb.get()


def reference(x):
    return (x + 1) * 3 - 1
