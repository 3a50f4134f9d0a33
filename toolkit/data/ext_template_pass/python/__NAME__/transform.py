"""Python wrappers of the C++ passes (in-tree: ``python/tvm/tirx/transform/transform.py``,
``python/tvm/relax/transform/transform.py``)."""

import tvm

from . import _ffi_api


def CountStores() -> tvm.transform.Pass:  # noqa: N802  (TVM's pass-constructor style)
    """TIR: attribute ``__NAME__.num_stores`` on every PrimFunc (src/tir_pass.cc)."""
    return _ffi_api.CountStores()


def CountCalls() -> tvm.transform.Pass:  # noqa: N802
    """Relax: attribute ``__NAME__.num_calls`` on every Relax function (src/relax_pass.cc)."""
    return _ffi_api.CountCalls()
