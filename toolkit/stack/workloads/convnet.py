"""A small CNN: two conv2d/relu/max-pool stages and a dense classifier, 1x3x32x32."""

from tvm import relax
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op

from toolkit.stack import reference as ref


def max_pool2d(x, size):
    # nn.op has no pooling; wrap the Relax op the way nn.op does for its own ops.
    return op.wrap_nested(relax.op.nn.max_pool2d(x._expr, size, size), name="max_pool2d")


class ConvNet(nn.Module):
    def __init__(self):
        self.conv1 = nn.Conv2D(3, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2D(16, 32, kernel_size=3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = max_pool2d(nn.relu(self.conv1(x)), 2)
        x = max_pool2d(nn.relu(self.conv2(x)), 2)
        return self.fc(op.reshape(x, (1, 32 * 8 * 8)))


model = ConvNet()
spec = {"forward": {"x": nn.spec.Tensor((1, 3, 32, 32), "float32")}}


def reference(x, w1, b1, w2, b2, fc_w, fc_b):
    x = ref.max_pool2d(ref.relu(ref.conv2d(x, w1, b1, padding=1)), 2)
    x = ref.max_pool2d(ref.relu(ref.conv2d(x, w2, b2, padding=1)), 2)
    return ref.linear(x.reshape(1, -1), fc_w, fc_b)
