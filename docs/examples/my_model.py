"""A small MLP whose pipeline carries the user's own pass, which raises: the manual's example
of a failing pass (``tk dump-ir`` keeps the dump and writes a reproducer)."""

import tvm
from tvm import relax
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(8, 4)

    def forward(self, x):
        return nn.relu(self.fc1(x))


model = MLP()
spec = {"forward": {"x": nn.spec.Tensor((1, 8), "float32")}}


@tvm.transform.module_pass(opt_level=0, name="FuseMyOps")
def fuse_my_ops(mod, ctx):
    if any("matmul" in gv.name_hint for gv in mod.get_global_vars()):
        raise ValueError("FuseMyOps: cannot fuse matmul yet")
    return mod


pipeline = tvm.transform.Sequential([
    relax.transform.LegalizeOps(), fuse_my_ops, relax.get_pipeline("default_build"),
])
