"""Test workload: a small MLP whose module arrives already fused (FuseOps + FuseTIR), the
way a model tuned elsewhere does; ``tk profile`` must name the ops inside each kernel."""

import numpy as np
import tvm
from tvm import relax
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(nn.relu(self.fc1(x)))


exported, named = MLP().export_tvm(spec={"forward": {"x": nn.spec.Tensor((2, 64), "float32")}})
mod = tvm.transform.Sequential([
    relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
    relax.transform.FuseOps(), relax.transform.FuseTIR(),
])(exported)
params = [np.full([int(d) for d in p.shape], 0.01, "float32") for _, p in named]
