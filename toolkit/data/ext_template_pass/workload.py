"""A small workload compiled through __NAME__'s pipeline:

    tk run workload.py --check        # compile, run, compare with the numpy reference
    tk dump-ir workload.py -o dump    # every pass, __NAME__'s among them
"""

import sys
from pathlib import Path

from tvm.relax.frontend import nn

sys.path.insert(0, str(Path(__file__).resolve().parent / "python"))

from __NAME__ import pipeline  # noqa: E402,F401  (tk takes `pipeline` from this file)


class Layer(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return nn.relu(self.fc(x))


model = Layer()
spec = {"forward": {"x": nn.spec.Tensor((2, 16), "float32")}}


def reference(x, w, b):
    import numpy as np

    return np.maximum(x @ w.T + b, 0)
