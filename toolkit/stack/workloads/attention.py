"""One pre-norm transformer block: LayerNorm, Q/K/V matmuls, softmax attention, GELU MLP."""

import math

from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op

from toolkit.stack import reference as ref

SEQ, HIDDEN, HEADS = 32, 128, 4
HEAD_DIM = HIDDEN // HEADS


class Block(nn.Module):
    def __init__(self):
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.q = nn.Linear(HIDDEN, HIDDEN)
        self.k = nn.Linear(HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.norm2 = nn.LayerNorm(HIDDEN)
        self.up = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.down = nn.Linear(4 * HIDDEN, HIDDEN)

    def _heads(self, x):
        return op.permute_dims(op.reshape(x, (1, SEQ, HEADS, HEAD_DIM)), (0, 2, 1, 3))

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self._heads(self.q(h)), self._heads(self.k(h)), self._heads(self.v(h))
        scores = op.matmul(q, op.permute_dims(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(HEAD_DIM))
        ctx = op.matmul(op.softmax(scores, axis=-1), v)
        ctx = op.reshape(op.permute_dims(ctx, (0, 2, 1, 3)), (1, SEQ, HIDDEN))
        x = x + self.out(ctx)
        return x + self.down(nn.gelu(self.up(self.norm2(x))))


model = Block()
spec = {"forward": {"x": nn.spec.Tensor((1, SEQ, HIDDEN), "float32")}}


def reference(x, n1w, n1b, qw, qb, kw, kb, vw, vb, ow, ob, n2w, n2b, uw, ub, dw, db):
    def heads(t):
        return t.reshape(1, SEQ, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)

    h = ref.layer_norm(x, n1w, n1b)
    q, k, v = heads(ref.linear(h, qw, qb)), heads(ref.linear(h, kw, kb)), heads(ref.linear(h, vw, vb))
    attn = ref.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(HEAD_DIM)) @ v
    x = x + ref.linear(attn.transpose(0, 2, 1, 3).reshape(1, SEQ, HIDDEN), ow, ob)
    return x + ref.linear(ref.gelu(ref.linear(ref.layer_norm(x, n2w, n2b), uw, ub)), dw, db)
