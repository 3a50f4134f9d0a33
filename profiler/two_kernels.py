"""Reference workload for `tk profile compare`: two elementwise kernels on 65536 floats.

Two builds of the same model, one with a kernel made slow on purpose:

    tk profile profiler/two_kernels.py -o fast
    TK_DEMO_SLOW=64 tk profile profiler/two_kernels.py -o slow
    tk profile compare fast/profile.json slow/profile.json

``TK_DEMO_SLOW=N`` makes ``scale`` compute the same result as a sum of N equal parts (N
times the work); ``TK_DEMO_RENAME=1`` gives ``add_one`` another name with the same
PrimFunc, which compare matches by structural hash. ``TK_DEMO_CALLS=N`` calls ``add_one`` N
times in a row (the same kernel, N calls a run), as an unfused model calls one projection
kernel several times where a fused one calls it once.
"""

import os

from tvm import relax, te

N = 65536
REPS = int(os.environ.get("TK_DEMO_SLOW", "1"))
ADD_ONE = "add_one_v2" if os.environ.get("TK_DEMO_RENAME") else "add_one"
CALLS = int(os.environ.get("TK_DEMO_CALLS", "1"))


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
        b = bb.emit(bb.call_te(scale, x, primfunc_name_hint="scale"))
        for _ in range(CALLS):
            b = bb.emit(bb.call_te(add_one, b, primfunc_name_hint=ADD_ONE))
        out = bb.emit_output(b)
    bb.emit_func_output(out)
mod = bb.get()


def reference(x):
    return x * 2 + CALLS
