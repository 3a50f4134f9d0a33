"""Test workload: two elementwise kernels on 65536 floats.

The profile tests copy this file with REPS > 1, which makes ``scale`` do the same work
REPS times over (a deliberately slow build of the same model), and with ``add_one``
renamed (same PrimFunc, new name) to exercise matching by structural hash.
"""
from tvm import relax, te

N, REPS = 65536, 1


def scale(x):
    k = te.reduce_axis((0, REPS), name="k")
    return te.compute((N,), lambda i: te.sum(x[i] * (2.0 / REPS), axis=k), name="scale")


def add_one(x):
    return te.compute((N,), lambda i: x[i] + 1.0, name="add_one")


bb = relax.BlockBuilder()
# TensorType on the unified IR (0.27), TensorStructInfo before.
tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType
x = relax.Var("x", tensor((N,), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        a = bb.emit(bb.call_te(scale, x, primfunc_name_hint="scale"))
        b = bb.emit_output(bb.call_te(add_one, a, primfunc_name_hint="add_one"))
    bb.emit_func_output(b)
mod = bb.get()


def reference(x):
    return x * 2 + 1
