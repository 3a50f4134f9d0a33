"""A TIR-only workload: one 128x128x128 float32 matrix product from ``te.create_prim_func``.

The kernel a schedule (or ``tk tune``) has the most to win on, and the shape of a kernel
writer's own TE/TIR file: ``mod`` holds a PrimFunc, inputs are sized from its buffers.
"""

from tvm import te

N = 128
A = te.placeholder((N, N), "float32", name="A")
B = te.placeholder((N, N), "float32", name="B")
k = te.reduce_axis((0, N), name="k")
C = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
mod = te.create_prim_func([A, B, C])


def reference(a, b):
    return a @ b
