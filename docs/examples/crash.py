"""A kernel calling a C function that does not exist: LLVM's JIT cannot resolve it and the
process dies of SIGSEGV inside TVM - the manual's example of a crash tk reports."""

from tvm import relax, te

try:
    from tvm import tirx as tir
except ImportError:  # TVM before 0.24
    from tvm import tir

TensorType = getattr(relax, "TensorStructInfo", None) or relax.TensorType
bb = relax.BlockBuilder()
x = relax.Var("x", TensorType((8,), "float32"))
with bb.function("main", [x]):
    y = bb.emit_te(lambda a: te.compute(
        a.shape, lambda i: tir.call_extern("float32", "tk_no_such_symbol", a[i]), name="f"), x)
    bb.emit_func_output(y)
mod = bb.get()
