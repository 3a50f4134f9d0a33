"""Test workload: a layer whose kernels are fused or not, by the Relax pipeline.

``TK_TEST_FUSED=1`` compiles through FuseOps + FuseTIR (TVM's "zero" pipeline before the
default build): one kernel ``fused_matmul_add_add1``; without it TVM's llvm default
pipeline keeps ``matmul``, ``add`` and ``add1`` apart. ``tk profile compare`` must match the
fused kernel with the three through its recorded fused ops.
"""

import os

import numpy as np
import tvm
from tvm import relax
from tvm.relax.frontend import nn


class Layer(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(128, 128)

    def forward(self, x, y):
        return self.fc(x) + y


model = Layer()
spec = {"forward": {"x": nn.spec.Tensor((32, 128), "float32"),
                    "y": nn.spec.Tensor((32, 128), "float32")}}
params = [np.full((128, 128), 0.01, "float32"), np.full((128,), 0.5, "float32")]
if os.environ.get("TK_TEST_FUSED"):
    pipeline = tvm.transform.Sequential([relax.pipeline.zero_pipeline(),
                                         relax.pipeline.default_build_pipeline()])
