"""A two-layer perceptron, 784 -> 256 -> 10, batch 1: the smallest real model."""

from tvm.relax.frontend import nn

from toolkit.stack.reference import linear, relu


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(nn.relu(self.fc1(x)))


model = MLP()
spec = {"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}


def reference(x, w1, b1, w2, b2):
    return linear(relu(linear(x, w1, b1)), w2, b2)
