"""40 layers of Linear + LayerNorm + SiLU, widths 64, 80, ..., 688, batch 4.

Deep enough that pass pipelines and per-operator reports have real length.
"""

from tvm.relax.frontend import nn

from toolkit.stack.reference import layer_norm, linear, silu

WIDTHS = [64 + 16 * i for i in range(40)]


class Block(nn.Module):
    def __init__(self, d_in, d_out):
        self.linear = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        return nn.silu(self.norm(self.linear(x)))


class Stack(nn.Module):
    """Blocks from ``widths[0]`` through each width in turn (builtin:mlp400 runs ten)."""

    def __init__(self, widths, d_in=None):
        dims = [d_in or widths[0], *widths]
        self.layers = nn.ModuleList([Block(a, b) for a, b in zip(dims, dims[1:])])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = Stack(WIDTHS)
spec = {"forward": {"x": nn.spec.Tensor((4, WIDTHS[0]), "float32")}}


def reference(x, *params):
    for i in range(0, len(params), 4):
        weight, bias, norm_weight, norm_bias = params[i:i + 4]
        x = silu(layer_norm(linear(x, weight, bias), norm_weight, norm_bias))
    return x
