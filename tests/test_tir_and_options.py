"""TIR-only workloads, entry and build options, libraries with their params, and --check
against a path that did not compute the outputs the same way (issue 17, items 1-3 and 7)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from workload_files import PRELUDE, te_matmul, tir_scale, write

from toolkit import stack
from toolkit.errors import UserError
from toolkit.stack import workload


def test_te_prim_func_sizes_inputs_from_buffers_and_checks_reference(tk, tmp_path):
    path = te_matmul(tmp_path)
    wl = workload.load(str(path))
    assert wl.kind == workload.TIR and wl.entry == "main"
    assert [(s.name, s.shape) for s in wl.input_specs] == [("A", (16, 8)), ("B", (8, 12))]
    assert [(s.name, s.shape) for s in wl.output_specs] == [("C", (16, 12))]
    result = tk("run", str(path), "--check", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["outputs"] == [{"shape": [16, 12], "dtype": "float32"}]
    assert report["check"]["against"] == "reference" and report["check"]["ok"]


def test_wrong_tir_reference_is_a_mismatch(tk, tmp_path):
    result = tk("run", str(te_matmul(tmp_path, reference="a @ b + 1")), "--check")
    assert result.returncode == 1 and "MISMATCH" in result.stdout


def test_tvmscript_output_between_inputs_runs_on_given_inputs(tmp_path):
    wl = workload.load(str(tir_scale(tmp_path)))
    assert wl.output_positions == (1,)
    a = np.arange(32, dtype="float32")
    c = np.full(32, 2.0, "float32")
    out = stack.run(stack.compile(wl, "llvm"), [a, c]).outputs
    np.testing.assert_allclose(out[0], a * c + 1.0)


def test_check_without_reference_uses_unoptimised_c_backend(tk, tmp_path):
    result = tk("run", str(tir_scale(tmp_path)), "--check", "--json")
    assert result.returncode == 0, result.stderr
    check = json.loads(result.stdout)["check"]
    assert check["against"] == "unoptimised C backend (target c, opt_level 0)", check
    # On the C backend itself the baseline moves to LLVM: never a target against itself.
    result = tk("run", str(tir_scale(tmp_path)), "--target", "c", "--check", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["check"]["against"] == \
        "unoptimised LLVM (target llvm, opt_level 0)"


def test_tir_workload_dumps_ir(tk, tmp_path):
    result = tk("dump-ir", str(te_matmul(tmp_path)), "-o", str(tmp_path / "dump"))
    assert result.returncode == 0, result.stderr
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    assert any(r["name"].endswith("FlattenBuffer") for r in index["passes"])


def test_entry_picks_another_function(tk, tmp_path):
    path = write(tmp_path, "two.py", PRELUDE + """
bb = relax.BlockBuilder()
x = relax.Var("x", TensorType((4,), "float32"))
with bb.function("prefill", [x]):
    bb.emit_func_output(bb.emit(relax.op.add(x, x)))
y = relax.Var("y", TensorType((4,), "float32"))
with bb.function("decode", [y]):
    bb.emit_func_output(bb.emit(relax.op.multiply(y, y)))
mod = bb.get()
inputs = [np.full((4,), 3.0, "float32")]
""")
    wl = workload.load(str(path), entry="decode")
    out = stack.run(stack.compile(wl, "llvm"), wl.make_inputs()).outputs
    assert out[0].tolist() == [9.0] * 4
    bad = tk("run", str(path), "--entry", "decod")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        f"tk: error: workload {path} has no entry 'decod' — did you mean decode? "
        "(entries: decode, prefill)"]


def test_pass_config_is_typed_and_applied(tk, tmp_path):
    options = stack.compile_options(pass_config=["tirx.disable_vectorize=true",
                                               "relax.FuseOps.max_depth=2"], opt_level=2)
    assert options.pass_config == {"tirx.disable_vectorize": True, "relax.FuseOps.max_depth": 2}
    result = tk("run", str(te_matmul(tmp_path)), "--pass-config", "tirx.disable_vectorize=1",
                "--opt-level", "1", "--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("args, message", [
    (["--pass-config", "tirx.disable_vectorise=1"],
     "TVM has no config key 'tirx.disable_vectorise' — did you mean tirx.disable_vectorize?"),
    (["--pass-config", "tirx.disable_vectorize=maybe"], "is not a bool"),
    (["--pass-config", "tirx.disable_vectorize"], "expected KEY=VALUE"),
    (["--opt-level", "7"], "--opt-level 7: TVM's levels are 0..3"),
    (["--pipeline", "zer"], "--pipeline 'zer' is not a pipeline this TVM has — did you mean zero?"),
    (["--db", "nowhere"], "--db nowhere: not a tuning database"),
])
def test_bad_compile_options_are_one_line_exit_2(tk, args, message):
    result = tk("compile", "builtin:mlp", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_named_pipeline_runs_before_the_build_pipeline(tk):
    result = tk("run", "builtin:mlp", "--pipeline", "zero", "--check", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["check"]["ok"]


@pytest.mark.parametrize("make", ["builtin", "tir"])
def test_library_and_params_run_as_a_pair(tk, tmp_path, make):
    source = "builtin:mlp" if make == "builtin" else str(te_matmul(tmp_path))
    lib = tmp_path / "out" / "model.so"
    result = tk("compile", source, "-o", str(lib), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["params"] == str(tmp_path / "out" / "model.params.npz")
    ran = tk("run", str(lib), "--check", "--json")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["check"]["against"] == "reference" and report["check"]["ok"]
    assert report["compile_seconds"] < 5  # loaded, not compiled again


def test_library_params_are_the_ones_it_was_compiled_with(tmp_path):
    wl = workload.load("builtin:mlp", seed=5)
    stack.export(stack.compile(wl, "llvm"), tmp_path / "m.so")
    again = workload.load(str(tmp_path / "m.so"))
    for a, b in zip(wl.params, again.params):
        np.testing.assert_array_equal(a, b)
    inputs = wl.make_inputs()
    out = stack.run(stack.compile(again, "llvm"), inputs).outputs
    np.testing.assert_allclose(out[0], wl.reference_outputs(inputs)[0], rtol=1e-4, atol=1e-5)


def test_library_without_params_is_refused(tk, tmp_path):
    lib = tmp_path / "m.so"
    assert tk("compile", "builtin:mlp", "-o", str(lib)).returncode == 0
    (tmp_path / "m.params.npz").unlink()
    result = tk("run", str(lib))
    assert result.returncode == 2 and "no m.params.npz beside it" in result.stderr


def test_scalar_argument_prim_func_is_refused(tmp_path):
    path = write(tmp_path, "scalar.py", """
try:
    from tvm.script import tirx as T
except ImportError:
    from tvm.script import tir as T

@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (4,), "float32")
    for i in range(4):
        A[i] = T.float32(1.0)

mod = f
""")
    with pytest.raises(UserError, match="takes a scalar argument"):
        workload.load(str(path))


def test_builtin_tir_matmul_runs_checked(tk):
    result = tk("run", "builtin:matmul", "--check", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["outputs"] == [{"shape": [128, 128], "dtype": "float32"}]
    assert report["check"]["against"] == "reference" and report["check"]["ok"]


def test_profile_takes_compile_options(tk):
    result = tk("profile", "builtin:mlp", "--opt-level", "2", "--pass-config",
                "tirx.disable_vectorize=1", "-n", "2", "--warmup", "1", "--json")
    assert result.returncode == 0, result.stderr
    bad = tk("profile", "builtin:mlp", "--pass-config", "relax.FuseOps.max_depht=2")
    assert bad.returncode == 2 and "did you mean relax.FuseOps.max_depth?" in bad.stderr
