"""__NAME__'s own tests: run with `python -m pytest tests` after `tk ext build`."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import __NAME__  # noqa: E402
import tvm  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm import relax  # noqa: E402
from tvm.relax.frontend import nn  # noqa: E402
from tvm.script import tirx as T  # noqa: E402


@T.prim_func
def scaled_exp(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
    for i in range(64):
        if i < n:
            B[i] = T.exp(A[i]) * T.float32(2)
        else:
            B[i] = T.max(A[i], T.float32(0))


def compile_for_device(mod):
    return tvm.compile(mod, target=__NAME__.target.target(), tir_pipeline="__NAME__")


def test_the_device_is_registered():
    names = set(tvm_ffi.registry.list_global_func_names())
    assert {"device_api.ext_dev", "target.build.ext_dev", "__NAME__.device_stats"} <= names
    assert __NAME__.device.exist
    t = __NAME__.target.target()
    assert t.kind.name == "ext_dev" and "__NAME__" in list(t.keys)


def test_a_tir_kernel_runs_on_the_device_from_generated_c(tmp_path, monkeypatch):
    monkeypatch.setenv("__NAME___DUMP", str(tmp_path))
    before = dict(__NAME__.device_stats())
    f = compile_for_device(tvm.IRModule({"main": scaled_exp})).jit()["main"]
    a = np.linspace(-2, 2, 64).astype("float32")
    x, y = tvm.runtime.tensor(a, __NAME__.device), tvm.runtime.tensor(np.zeros(64, "float32"),
                                                                       __NAME__.device)
    f(x, y, 40)
    expected = np.where(np.arange(64) < 40, np.exp(a) * 2, np.maximum(a, 0))
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)
    after = __NAME__.device_stats()
    assert after["allocations"] >= before["allocations"] + 2
    assert after["copies_to_device"] >= before["copies_to_device"] + 2
    assert after["copies_from_device"] >= before["copies_from_device"] + 1
    code = (tmp_path / "kernels.c").read_text()
    assert "__tvm_ffi_scaled_exp_kernel" in code and "expf(" in code


def test_the_device_module_keeps_its_c_and_survives_export(tmp_path):
    ex = compile_for_device(tvm.IRModule({"main": scaled_exp}))
    (device_module,) = ex.mod.imports
    assert device_module.kind == "__NAME__"
    assert "int32_t __tvm_ffi_scaled_exp_kernel(" in device_module.inspect_source()
    ex.export_library(str(tmp_path / "kernels.so"))  # the kernels saved through SaveToBytes
    f = tvm.runtime.load_module(str(tmp_path / "kernels.so"))["main"]  # ... and loaded again
    a = np.linspace(-2, 2, 64).astype("float32")
    y = tvm.runtime.tensor(np.zeros(64, "float32"), __NAME__.device)
    f(tvm.runtime.tensor(a, __NAME__.device), y, 0)
    np.testing.assert_allclose(y.numpy(), np.maximum(a, 0))


def test_a_relax_model_runs_on_the_device():
    class Layer(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(16, 8)

        def forward(self, x):
            return nn.relu(self.fc(x))

    mod, params = Layer().export_tvm({"forward": {"x": nn.spec.Tensor((2, 16), "float32")}})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16)).astype("float32")
    weights = [rng.standard_normal([int(d) for d in p.shape]).astype("float32")
               for _, p in params]
    vm = relax.VirtualMachine(compile_for_device(mod), __NAME__.device)
    out = vm["forward"](*[tvm.runtime.tensor(v, __NAME__.device) for v in [x, *weights]])
    w, b = weights
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)


def test_what_the_codegen_cannot_print_is_named():
    @T.prim_func
    def half(A: T.Buffer((8,), "float16"), B: T.Buffer((8,), "float16")):
        for i in range(8):
            B[i] = A[i] + A[i]

    with pytest.raises(Exception, match="float16"):
        compile_for_device(tvm.IRModule({"main": half}))
