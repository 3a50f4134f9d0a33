"""NumPy implementations of the operators the builtin workloads use.

They make ``tk run --check`` on a builtin compare against something TVM did not compute,
so a miscompile on ``llvm`` itself shows up (comparing llvm with llvm would not).
"""

from __future__ import annotations

import math

import numpy as np


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    y = x @ weight.T
    return y + bias if bias is not None else y


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    x64 = x.astype("float64")
    mean = x64.mean(axis=-1, keepdims=True)
    var = x64.var(axis=-1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + eps) * weight + bias).astype(x.dtype)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=["float64"])
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def conv2d(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, padding: int) -> np.ndarray:
    """NCHW x OIHW, stride 1, as an im2col matrix product."""
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = h + 2 * padding - kh + 1, w + 2 * padding - kw + 1
    cols = np.stack([xp[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
    cols = cols.reshape(n, c * kh * kw, oh * ow)  # (c, kh, kw) order matches OIHW
    out = np.einsum("ok,nkp->nop", weight.reshape(o, -1), cols).reshape(n, o, oh, ow)
    return out + bias.reshape(1, o, 1, 1) if bias is not None else out


def max_pool2d(x: np.ndarray, size: int) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // size, size, w // size, size).max(axis=(3, 5))
