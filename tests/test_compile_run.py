"""tk compile and tk run end to end, through the CLI as a user types them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import REPO
from workload_files import TIR_BOUND, TIR_GATHER, add_square, te_matmul, write

from toolkit import stack
from toolkit.stack import workload


@pytest.mark.parametrize("name", ["mlp", "convnet", "attention",
                                  pytest.param("mlp40", marks=pytest.mark.slow),
                                  pytest.param("mlp400", marks=pytest.mark.slow)])
def test_each_builtin_runs_checked_on_llvm(tk, name):
    result = tk("run", f"builtin:{name}", "--target", "llvm", "--check", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["check"]["ok"] is True
    assert report["check"]["against"] == "reference"  # numpy, not TVM checking itself
    assert report["device"].startswith("cpu")


def test_onnx_without_reference_checks_against_another_path(tk, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], axis=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
    )
    path = tmp_path / "softmax.onnx"
    onnx.save(helper.make_model(graph), str(path))
    result = tk("run", str(path), "--check", "--json")
    assert result.returncode == 0, result.stderr
    against = json.loads(result.stdout)["check"]["against"]
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        assert against == "unoptimised C backend (target c, opt_level 0)"
    else:
        assert against == "onnxruntime"


def test_mlp_matches_numpy_reference():
    wl = workload.load("builtin:mlp")
    compiled = stack.compile(wl, "llvm")
    inputs = wl.make_inputs(seed=7)
    out = stack.run(compiled, inputs).outputs
    cmp = stack.check(compiled, inputs, out)
    assert cmp.against == "reference" and cmp.ok and cmp.max_abs < 1e-4


def test_wrong_reference_is_a_mismatch_exit_1(tk, tmp_path):
    path = add_square(tmp_path, reference="(x + y) ** 2 + 0.5")
    result = tk("run", str(path), "--check")
    assert result.returncode == 1
    assert "MISMATCH" in result.stdout and "max abs err 0.5" in result.stdout


def test_inputs_from_npz(tk, tmp_path):
    path = add_square(tmp_path)
    x = np.full((2, 3), 2.0, "float32")
    y = np.full((2, 3), 1.0, "float32")
    np.savez(tmp_path / "in.npz", x=x, y=y)
    result = tk("run", str(path), "--inputs", str(tmp_path / "in.npz"), "--check", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["check"]["max_abs"] == 0.0
    np.savez(tmp_path / "bad.npz", x=x)
    bad = tk("run", str(path), "--inputs", str(tmp_path / "bad.npz"))
    assert bad.returncode == 2 and "expected arrays named x, y" in bad.stderr


def test_cuda_compile_emits_cuda_source_and_exports(tk, tmp_path):
    result = tk("compile", "builtin:mlp", "--target", "cuda -arch=sm_80",
                "--emit-source", str(tmp_path / "src"), "-o", str(tmp_path / "mlp.so"), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    cu = [p for p in report["sources"] if p.endswith(".cu")]
    assert cu, report
    text = open(cu[0]).read()
    assert "__global__" in text and "threadIdx" in text
    host = [p for p in report["sources"] if p.endswith(".ll")]
    assert host and "define" in open(host[0]).read()
    assert (tmp_path / "mlp.so").stat().st_size > 0


def test_tir_workload_for_cuda_gets_gpu_kernels_and_keeps_a_hand_schedule(tk, tmp_path):
    """A TIR module goes straight to TVM's TIR pipeline, which builds an unscheduled function
    for cuda as host code over device memory (it crashed with SIGSEGV on a GPU): tk gives it
    dlight's schedule, and leaves a function that binds its own threads as written."""
    for path, bound in ((te_matmul(tmp_path), None),
                        (write(tmp_path, "bound.py", TIR_BOUND), "__launch_bounds__(32)")):
        src = tmp_path / f"src-{path.stem}"
        result = tk("compile", str(path), "--target", "cuda -arch=sm_80", "--emit-source",
                    str(src), "-o", str(tmp_path / f"{path.stem}.so"))
        assert result.returncode == 0, result.stderr
        cu = (src / "cuda.cu").read_text()
        assert "__global__" in cu and "threadIdx.x" in cu
        assert bound is None or bound in cu


def test_tir_function_no_schedule_can_bind_is_refused_for_a_gpu(tk, tmp_path):
    result = tk("compile", str(write(tmp_path, "gather.py", TIR_GATHER)), "--target",
                "cuda -arch=sm_80", "-o", str(tmp_path / "gather.so"))
    assert result.returncode == 2
    assert "squares bind(s) no GPU thread" in result.stderr and "crashes when run" in result.stderr
    assert not (tmp_path / "gather.so").exists()
    assert tk("compile", str(tmp_path / "gather.py"), "--target", "llvm", "-o",
              str(tmp_path / "gather.so")).returncode == 0


def test_exported_library_loads_and_runs(tmp_path):
    import tvm

    wl = workload.load("builtin:mlp")
    compiled = stack.compile(wl, "llvm")
    lib = stack.export(compiled, tmp_path / "mlp.so").library
    vm = tvm.relax.VirtualMachine(tvm.runtime.load_module(str(lib)), tvm.cpu())
    inputs = wl.make_inputs()
    out = vm["forward"](*stack.to_device([*inputs, *wl.params], tvm.cpu())).numpy()
    np.testing.assert_allclose(out, wl.reference_outputs(inputs)[0], rtol=1e-4, atol=1e-5)


def test_run_on_absent_device_is_refused(tk, absent_gpu):
    result = tk("run", "builtin:mlp", "--target", absent_gpu)
    assert result.returncode == 2
    assert f"no {absent_gpu} device" in result.stderr
    assert "Traceback" not in result.stderr


def test_target_tvm_rejects_is_exit_2(tk):
    result = tk("compile", "builtin:mlp", "--target", "cuda -no_such_option=1")
    assert result.returncode == 2
    assert "no_such_option" in result.stderr and "Traceback" not in result.stderr


def test_syntax_error_workload_is_exit_2(tk, tmp_path):
    path = write(tmp_path, "broken.py", "mod = (\n")
    result = tk("compile", str(path))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_crash_inside_tvm_is_reported_with_reproduce_line(tk, tmp_path):
    # A kernel calling a symbol that does not exist: LLVM's JIT fails to resolve it and the
    # process dies of SIGSEGV inside TVM - the crash tk exists to turn into a report.
    path = write(tmp_path, "extern.py", """
from tvm import relax, te
try:
    from tvm import tirx as tir
except ImportError:
    from tvm import tir
TensorType = getattr(relax, "TensorStructInfo", None) or relax.TensorType
bb = relax.BlockBuilder()
x = relax.Var("x", TensorType((8,), "float32"))
with bb.function("main", [x]):
    y = bb.emit_te(lambda a: te.compute(
        a.shape, lambda i: tir.call_extern("float32", "tk_no_such_symbol", a[i]), name="f"), x)
    bb.emit_func_output(y)
mod = bb.get()
""")
    result = tk("run", str(path))
    assert result.returncode == 1
    assert "killed by SIG" in result.stderr
    assert f"reproduce: TK_NO_FORK=1 python -X faulthandler -m toolkit run {path}" in result.stderr


RAISING_PIPELINE = """
import tvm

@tvm.transform.module_pass(opt_level=0, name="Refuse")
def pipeline(mod, ctx):
    raise ValueError("Refuse: this pass refuses every module")
"""


def test_failed_compile_suggests_a_command_tk_accepts(tk, tmp_path):
    from test_cli import parse_tk_line

    path = add_square(tmp_path)
    path.write_text(path.read_text() + RAISING_PIPELINE)
    result = tk("compile", str(path))
    assert result.returncode == 1
    assert "refuses every module" in result.stderr
    line = result.stderr.split("reproduce: ", 1)[1].splitlines()[0]
    assert parse_tk_line(line) == ["tk", "compile"]
    assert str(path) in line and "--debug" in line


@pytest.mark.parametrize("example", sorted(p.name for p in (REPO / "examples").glob("*.py")))
def test_examples_match_their_reference(tk, example):
    result = tk("run", str(REPO / "examples" / example), "--check", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["check"]["against"] == "reference"


def test_a_library_runs_where_its_workload_no_longer_loads(tk, tmp_path):
    """A runtime-only TVM cannot import the model file a library was compiled from (it needs
    the compiler's functions): running the library must not need it. Here the file raises on
    import, as it would there; the run goes on and says what it could not use."""
    model = tmp_path / "model.py"
    model.write_text((REPO / "examples" / "gelu_mlp.py").read_text())
    lib = tmp_path / "model.so"
    assert tk("compile", str(model), "-o", str(lib)).returncode == 0
    model.write_text("raise AttributeError(\"module 'tvm.ir._ffi_api' has no attribute "
                     "'RegisterOpAttr'\")\n")
    r = tk("run", str(lib))
    assert r.returncode == 0, r.stderr
    assert f"note: {model}, which it was compiled from, does not load here" in r.stderr
    assert "RegisterOpAttr" in r.stderr and "without its reference" in r.stderr
    r = tk("run", str(lib), "--check")
    assert r.returncode == 2 and r.stderr.count("tk: error:") == 1
    assert "no reference, and " in r.stderr and "does not load here" in r.stderr
