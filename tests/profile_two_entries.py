"""Test workload: two Relax functions, each with its own kernel; ``--entry`` picks one."""
from tvm import relax, te

N = 4096
tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType
bb = relax.BlockBuilder()
for name, kernel, delta in (("main", "add_one", 1.0), ("second", "sub_one", -1.0)):
    x = relax.Var("x", tensor((N,), "float32"))
    with bb.function(name, [x]):
        with bb.dataflow():
            y = bb.emit_output(bb.call_te(lambda t, d=delta: te.compute((N,), lambda i: t[i] + d),
                                          x, primfunc_name_hint=kernel))
        bb.emit_func_output(y)
mod = bb.get()
