"""builtin:mlp40 ten times over: ten stacks of 40 Linear + LayerNorm + SiLU blocks side by
side on one input, their outputs concatenated; batch 4.

Stack j's widths are mlp40's plus j (64 + 16 * i + j), so every one of the 400 layers keeps
kernels of its own (TVM folds structurally equal ones into one) and the compile - its passes,
its kernels, what dump-ir records and profile times - is ten times mlp40's. Side by side, not
400 deep: each output goes through 40 layers, as mlp40's does, so float32 rounding stays within
the check's tolerance (400 LayerNorms in a row amplify it past any). ``benchmarks/scale.py``
compares the two.
"""

import numpy as np
from tvm.relax.frontend import nn

from toolkit.stack.workloads.mlp40 import WIDTHS as MLP40_WIDTHS
from toolkit.stack.workloads.mlp40 import Stack
from toolkit.stack.workloads.mlp40 import reference as mlp40_reference

STACKS = 10
WIDTHS = [[w + j for w in MLP40_WIDTHS] for j in range(STACKS)]  # per stack


class Stacks(nn.Module):
    def __init__(self):
        self.stacks = nn.ModuleList([Stack(widths, MLP40_WIDTHS[0]) for widths in WIDTHS])

    def forward(self, x):
        return nn.concat([stack(x) for stack in self.stacks], dim=1)


model = Stacks()
spec = {"forward": {"x": nn.spec.Tensor((4, MLP40_WIDTHS[0]), "float32")}}


def reference(x, *params):
    per_stack = len(params) // STACKS
    return np.concatenate([mlp40_reference(x, *params[j * per_stack:(j + 1) * per_stack])
                           for j in range(STACKS)], axis=1)
