"""A TIR workload for the manual's examples: C = A + B on 64x64 floats, with no reference.

``mod`` holds only a PrimFunc, so tk calls it directly: the buffer it writes (C) is the
output, the others are inputs. Without a ``reference``, ``tk run --check`` compares with the
same kernel compiled unoptimised by another code generator.
"""

from tvm import te

A = te.placeholder((64, 64), "float32", name="A")
B = te.placeholder((64, 64), "float32", name="B")
C = te.compute((64, 64), lambda i, j: A[i, j] + B[i, j], name="C")
mod = te.create_prim_func([A, B, C])
