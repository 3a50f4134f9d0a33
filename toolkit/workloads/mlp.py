"""A two-layer perceptron, 784 -> 256 -> 10, batch 1: the smallest real model."""

import numpy as np
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(nn.relu(self.fc1(x)))


model = MLP()
spec = {"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}


def reference(x, w1, b1, w2, b2):
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
