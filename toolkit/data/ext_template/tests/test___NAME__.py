"""__NAME__'s own tests: run with `python -m pytest tests` after `tk ext build`."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import __NAME__  # noqa: E402
import tvm  # noqa: E402
import tvm_ffi  # noqa: E402


def test_globals_are_registered():
    names = set(tvm_ffi.registry.list_global_func_names())
    assert {"__NAME__.add_one", "__NAME__.greet", "__NAME__.add_inplace",
            "__NAME__.scratch_sum"} <= names


def test_scalar_and_string_functions():
    assert __NAME__.add_one(41) == 42
    assert __NAME__.greet("tvm") == "hello tvm from __NAME__"


def test_tensor_functions():
    x = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    __NAME__.add_inplace(x, 0.5)
    np.testing.assert_allclose(x.numpy(), [0.5, 1.5, 2.5, 3.5])
    assert __NAME__.scratch_sum(x) == 8.0

