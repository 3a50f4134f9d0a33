"""Loading workloads in every accepted form, and refusing bad ones with one clear line."""

from __future__ import annotations

import numpy as np
import pytest
from workload_files import PRELUDE, add_square, write

from toolkit.errors import UserError
from toolkit.stack import workload


@pytest.mark.parametrize("name", ["mlp", "mlp40", "mlp400", "convnet", "attention"])
def test_builtins_load_with_static_inputs_and_seeded_params(name):
    a = workload.load(f"builtin:{name}")
    b = workload.load(f"builtin:{name}")
    assert a.entry == "forward" and a.input_specs and a.params
    assert all(d > 0 for s in a.input_specs for d in s.shape)
    for pa, pb in zip(a.params, b.params):
        np.testing.assert_array_equal(pa, pb)  # same seed, same weights
    inputs = a.make_inputs(seed=3)
    assert [x.shape for x in inputs] == [s.shape for s in a.input_specs]


def test_mlp40_shape_matches_its_definition():
    wl = workload.load("builtin:mlp40")
    assert wl.input_specs[0].shape == (4, 64)
    weights = [p for p in wl.params if p.ndim == 2]
    assert len(weights) == 40
    assert weights[-1].shape == (688, 672)


def test_mlp400_is_mlp40_ten_times_with_a_width_of_its_own_per_layer():
    small, big = workload.load("builtin:mlp40"), workload.load("builtin:mlp400")
    weights = [p.shape for p in big.params if p.ndim == 2]
    widths = [p.shape for p in big.params if p.ndim == 1]
    assert len(weights) == 400 and len(big.params) == 10 * len(small.params)
    # TVM folds structurally equal kernels into one: distinct shapes keep ten times mlp40's.
    assert len(set(weights)) == 400 and len(set(widths)) == 400
    assert weights[:40] == [p.shape for p in small.params if p.ndim == 2]


def test_irmodule_file_with_reference(tmp_path):
    wl = workload.load(str(add_square(tmp_path)))
    assert wl.entry == "main" and [s.name for s in wl.input_specs] == ["x", "y"]
    x, y = wl.make_inputs()
    np.testing.assert_allclose(wl.reference_outputs([x, y])[0], (x + y) ** 2)


def test_nn_model_file_with_given_inputs_and_params(tmp_path):
    path = write(tmp_path, "lin.py", """
import numpy as np
from tvm.relax.frontend import nn
class Lin(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(3, 2, bias=False)
    def forward(self, x):
        return self.fc(x)
model = Lin()
spec = {"forward": {"x": nn.spec.Tensor((1, 3), "float32")}}
inputs = {"x": np.ones((1, 3), "float32")}
params = {"fc.weight": np.arange(6, dtype="float32").reshape(2, 3)}
""")
    wl = workload.load(str(path))
    assert wl.make_inputs()[0].tolist() == [[1.0, 1.0, 1.0]]
    assert wl.params[0].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_onnx_file(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    )
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph), str(path))
    wl = workload.load(str(path))
    assert wl.input_specs[0].shape == (2, 4) and wl.input_specs[0].dtype == "float32"


@pytest.mark.parametrize("source, message", [
    ("builtin:nope", "unknown builtin workload 'nope'; available: attention"),
    ("/no/such/file.py", "does not exist"),
])
def test_bad_sources(source, message):
    with pytest.raises(UserError, match=message):
        workload.load(source)


def test_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "broken.py", "x = 1\ndef f(:\n")
    with pytest.raises(UserError, match="syntax error at line 2"):
        workload.load(str(path))


def test_file_without_mod_or_model(tmp_path):
    path = write(tmp_path, "empty.py", PRELUDE)
    with pytest.raises(UserError, match="defines neither 'mod'"):
        workload.load(str(path))


def test_wrong_file_type(tmp_path):
    path = write(tmp_path, "model.txt", "")
    with pytest.raises(UserError, match="expected a .py, .onnx or .so"):
        workload.load(str(path))
