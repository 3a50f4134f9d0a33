"""builtin:mlp40 ten times over: 400 layers of Linear + LayerNorm + SiLU, batch 4.

Layer i is 64 + 16 * (i % 40) + i // 40 wide: mlp40's widths ten times, each time one wider,
so every layer keeps kernels of its own (TVM folds structurally equal ones into one) and the
compile - its passes, its kernels, what dump-ir records and profile times - is ten times
mlp40's. ``benchmarks/scale.py`` compares the two.
"""

from tvm.relax.frontend import nn

from toolkit.stack.workloads.mlp40 import Stack, reference  # noqa: F401 - mlp40's layers and check

WIDTHS = [64 + 16 * (i % 40) + i // 40 for i in range(400)]

model = Stack(WIDTHS)
spec = {"forward": {"x": nn.spec.Tensor((4, WIDTHS[0]), "float32")}}
