"""Function bisection: a wrong legalization inside a required pass, found by swapping kernels."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tvm026 import python_026

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "bisect"




@pytest.fixture(autouse=True)
def _tvm() -> None:
    pytest.importorskip("tvm")


def test_a_wrong_legalization_is_named_by_kernel_and_pass(tk):
    r = tk("bisect", "functions", str(FIXTURES / "wrong_gelu.py"), "--target", "llvm", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["kernel"] == "gelu"  # relu differs too, but is right: the halving drops it
    assert data["differing"] == ["gelu", "relu"]
    assert data["unswappable"] == ["add"]  # the fork's add takes the constant as an argument
    assert [p["good_kernels"] for p in data["probes"] if p["phase"] == "search"] == \
        [["gelu", "relu"], ["gelu"]]
    assert data["confirmed"] is True
    assert data["pass_name"] == "LegalizeOps" and "gelu" in data["pass_kernels"]
    assert "+            compute_1[v_i0, v_i1] = T.sigmoid(y[v_i0, v_i1])" in data["diff"]
    assert "T.erf(" in data["diff"]  # TVM's gelu, on the good side
    assert data["reproduce"].startswith("tk bisect functions ")
    assert "--passes LegalizeOps" in data["reproduce"]
    assert "lowering" in r.stderr  # progress, never on stdout


# The fork's wrong legalization, then TVM's zero pipeline, which fuses: the kernels are fused.
FUSED_PIPELINE = """
pipeline = tvm.transform.Sequential([
    relax.transform.LegalizeOps({"relax.nn.gelu": _wrong_gelu}),
    relax.get_pipeline("zero"), relax.get_pipeline("default"),
])
"""


def test_the_function_bisection_pass_bisection_suggests_finds_a_fused_kernel(tk, tmp_path):
    """Pass bisection suggested --good-pipeline default, which on CPU does not fuse: no kernel
    was swappable and nothing was found. What it suggests now is run here, and finds it."""
    text = (FIXTURES / "wrong_gelu.py").read_text()
    fused = tmp_path / "fused.py"
    fused.write_text(text[:text.index("# The fork's pipeline")] + FUSED_PIPELINE)
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("bisect", "passes", str(fused), "--target", "llvm", "--json", env=env)
    assert r.returncode == 1, r.stderr
    reason = json.loads(r.stdout)["stop_reason"]
    assert "the check fails even with no optional pass" in reason
    suggested = shlex.split(reason.split("`")[1])
    assert suggested[:3] == ["tk", "bisect", "functions"]
    r = tk(*suggested[1:], "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["kernel"] == "fused_matmul_gelu_add_relu_multiply"
    assert data["good_pipeline"] == "zero" and data["unswappable"] == []
    assert data["good_choice"].startswith("zero, the pipeline whose kernels are called most "
                                          "like the workload's own (of its 1, alike: zero 1, ")
    assert data["pass_name"] == "LegalizeOps"
    assert "--good-pipeline zero" in data["reproduce"]
    # Named, the pipeline that does not fuse is still what it was: nothing to swap.
    r = tk(*suggested[1:], "--good-pipeline", "default", "--json", env=env)
    assert r.returncode == 1 and json.loads(r.stdout)["unswappable"] == [data["kernel"]]


OWN_KERNELS = """
import numpy as np
import tvm
from tvm import relax, te
from tvm.script import relax as R


@tvm.script.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            out = R.nn.relu(x)
            R.output(out)
        return out


mod = Module


def reference(x):
    return np.maximum(x, 0)


def _leaky(bb, call):  # wrong, in a kernel of the fork's own name
    return bb.call_te(lambda t: te.compute(t.shape, lambda *i: te.max(t(*i), t(*i) * 0.1)),
                      call.args[0], primfunc_name_hint="fork_relu")


pipeline = tvm.transform.Sequential([
    relax.transform.LegalizeOps({"relax.nn.relu": _leaky}), relax.get_pipeline("default"),
])
"""


def test_auto_says_when_no_pipeline_lowers_to_the_workloads_kernels(tk, tmp_path):
    own = tmp_path / "own.py"
    own.write_text(OWN_KERNELS)
    r = tk("bisect", "functions", str(own), "--target", "llvm", "--json",
           env={"TK_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "stopped" and data["probes"] == []
    assert data["stop_reason"].startswith(
        f"no Relax pipeline of this TVM lowers {own} to kernels called like its own "
        "pipeline's (1 kernels; alike: zero 0, default 0, default_build 0): name a good side")


def test_a_flaky_runtime_makes_a_flaky_function_bisection(tk, tmp_path):
    """The one kernel left is checked again, as is the bad module: a check that says two
    things of one module is flaky (exit 3), never a kernel to blame."""
    workload = tmp_path / "flaky_runtime.py"  # it counts its runs beside itself
    workload.write_text((FIXTURES / "flaky_runtime.py").read_text())
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("bisect", "functions", str(workload), "--target", "llvm", "--json", env=env)
    assert r.returncode == 0, r.stderr  # steady: the kernel, confirmed
    steady = json.loads(r.stdout)
    assert steady["kernel"] == "gelu" and steady["confirmed"] is True
    checks = int((tmp_path / "runs").read_text())
    assert [p["phase"] for p in steady["probes"]] == ["search"] + ["confirm"] * 4
    # Again, with the runtime corrupting the outputs of the kernel's second check.
    (tmp_path / "noisy").write_text(f"{checks - 3}\n")
    (tmp_path / "runs").unlink()
    r = tk("bisect", "functions", str(workload), "--target", "llvm", "--json", env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "flaky" and data["kernel"] is None and data["pass_name"] is None
    assert data["disagreements"] == [{
        "good_kernels": ["gelu"], "verdicts": ["passed", "failed"],
        "details": [p["detail"] for p in data["probes"] if p["good_kernels"] == ["gelu"]]}]
    assert data["stop_reason"].startswith("the check is flaky: with the good gelu swapped in, "
                                          "the module passed, then failed - ")
    (tmp_path / "runs").unlink()
    r = tk("bisect", "functions", str(workload), "--target", "llvm", env=env)
    assert r.returncode == 3
    assert r.stdout.startswith("# Function bisection: the check is flaky - no kernel\n")
    assert "- Runs with gelu swapped in: passed (matches reference" in r.stdout


def test_nothing_to_bisect_when_the_workload_pipeline_is_right(tk, tmp_path):
    right = tmp_path / "right.py"
    right.write_text((FIXTURES / "wrong_gelu.py").read_text().replace(
        '"relax.nn.gelu": _wrong_gelu, ', ""))
    r = tk("bisect", "functions", str(right), "--target", "llvm")
    assert r.returncode == 1, r.stderr
    assert "the check passes with the workload's own pipeline" in r.stdout


def test_an_unknown_good_pipeline_is_one_line(tk):
    r = tk("bisect", "functions", str(FIXTURES / "wrong_gelu.py"), "--good-pipeline", "nope")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("tk: error: --good-pipeline 'nope'")


def test_another_tvm_is_the_good_side(tk):
    """--python: TVM 0.26's lowering is the good side; its kernels are parsed from their
    TVMScript into the TVM under test, swapped in, and its pass-by-pass texts name the pass."""
    python = python_026()
    r = tk("bisect", "functions", str(FIXTURES / "wrong_gelu.py"), "--target", "llvm",
           "--python", str(python), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["good_tvm"] == "0.26.0" and data["good_python"] == str(python)
    assert data["tvm"] != data["good_tvm"]
    assert data["kernel"] == "gelu" and data["differing"] == ["gelu", "relu"]
    assert data["unswappable"] == ["add"]
    assert data["pass_name"] == "LegalizeOps" and "gelu" in data["pass_kernels"]
    assert "T.sigmoid(" in data["diff"] and "T.erf(" in data["diff"]
    assert f"--python {python}" in data["reproduce"]
    assert f"in {python}'s TVM" in r.stderr


def test_a_good_interpreter_that_is_not_there_is_one_line(tk, tmp_path):
    r = tk("bisect", "functions", str(FIXTURES / "wrong_gelu.py"), "--python",
           str(tmp_path / "no-python"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{tmp_path / 'no-python'}: no such interpreter" in lines[0]
