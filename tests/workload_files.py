"""Workload files written by tests, in TVMScript that works across TVM generations."""

from __future__ import annotations

from pathlib import Path

# Relax builders take TensorType on the unified IR (0.27) and TensorStructInfo before.
PRELUDE = """\
import numpy as np
from tvm import relax, te
TensorType = getattr(relax, "TensorStructInfo", None) or relax.TensorType
"""

# tvm.script.tirx from v0.24 on, tvm.script.tir before: TVMScript TIR modules start with it.
TIR_PRELUDE = """\
try:
    from tvm.script import tirx as T
except ImportError:
    from tvm.script import tir as T
from tvm.script import ir as I
"""

ADD_SQUARE = PRELUDE + """
bb = relax.BlockBuilder()
x = relax.Var("x", TensorType((2, 3), "float32"))
y = relax.Var("y", TensorType((2, 3), "float32"))
with bb.function("main", [x, y]):
    with bb.dataflow():
        z = bb.emit(relax.op.add(x, y))
        w = bb.emit_output(relax.op.multiply(z, z))
    bb.emit_func_output(w)
mod = bb.get()

def reference(x, y):
    return {reference}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def add_square(tmp_path: Path, reference: str = "(x + y) ** 2") -> Path:
    return write(tmp_path, "add_square.py", ADD_SQUARE.format(reference=reference))


# A TIR-only workload the way kernel writers make one: te.create_prim_func, with a reference.
TE_MATMUL = PRELUDE + """
A = te.placeholder((16, 8), name="A")
B = te.placeholder((8, 12), name="B")
k = te.reduce_axis((0, 8), name="k")
C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
mod = te.create_prim_func([A, B, C])

def reference(a, b):
    return {reference}
"""

# Hand-written TIR (TVMScript) with the output in the middle of the arguments, no reference.
TIR_SCALE = TIR_PRELUDE + """

@I.ir_module
class Module:
    @T.prim_func
    def scale(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (32,), "float32")
        B = T.match_buffer(b, (32,), "float32")
        C = T.match_buffer(c, (32,), "float32")
        for i in range(32):
            B[i] = A[i] * C[i] + 1.0

mod = Module
"""


def te_matmul(tmp_path: Path, reference: str = "a @ b") -> Path:
    return write(tmp_path, "te_matmul.py", TE_MATMUL.format(reference=reference))


def tir_scale(tmp_path: Path) -> Path:
    return write(tmp_path, "tir_scale.py", TIR_SCALE)


# TIR whose loops are bound to GPU threads by hand: 2 blocks of 32 threads.
TIR_BOUND = TIR_PRELUDE + """

@I.ir_module
class Module:
    @T.prim_func
    def triple(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                B[bx * 32 + tx] = A[bx * 32 + tx] * 3.0

mod = Module
"""

# A block whose binding is not affine (i*i % 64): no dlight rule can schedule it.
TIR_GATHER = TIR_PRELUDE + """

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def squares(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.sblock("gather"):
                vi = T.axis.spatial(64, i * i % 64)
                B[vi] = A[vi]

mod = Module
"""
