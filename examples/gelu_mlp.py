"""An example workload file: the shape every model-level tk command accepts.

    tk run examples/gelu_mlp.py --check
    tk dump-ir examples/gelu_mlp.py -o dump
    tk profile examples/gelu_mlp.py

It defines ``model`` + ``spec`` (a relax.frontend.nn Module and its export spec); it may also
define ``inputs`` and ``params`` (by name) and a ``reference`` taking the entry function's
arguments - inputs, then params - as numpy arrays.
"""

from tvm.relax.frontend import nn

from toolkit.stack.reference import gelu, linear


class GeluMLP(nn.Module):
    def __init__(self):
        self.up = nn.Linear(32, 128)
        self.down = nn.Linear(128, 32)

    def forward(self, x):
        return self.down(nn.gelu(self.up(x)))


model = GeluMLP()
spec = {"forward": {"x": nn.spec.Tensor((8, 32), "float32")}}


def reference(x, up_w, up_b, down_w, down_b):
    return linear(gelu(linear(x, up_w, up_b)), down_w, down_b)
