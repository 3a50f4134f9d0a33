"""Workload files written by tests, in TVMScript that works across TVM generations."""

from __future__ import annotations

from pathlib import Path

# tvm.script.tirx from v0.24 on, tvm.script.tir before; Relax builders take TensorType on
# the unified IR (0.27) and TensorStructInfo before.
PRELUDE = """\
import numpy as np
from tvm import relax, te
TensorType = getattr(relax, "TensorStructInfo", None) or relax.TensorType
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
