"""Function bisection: a wrong legalization inside a required pass, found by swapping kernels."""

from __future__ import annotations

import json
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
    assert [p["good_kernels"] for p in data["probes"]] == [["gelu", "relu"], ["gelu"]]
    assert data["pass_name"] == "LegalizeOps" and "gelu" in data["pass_kernels"]
    assert "+            compute_1[v_i0, v_i1] = T.sigmoid(y[v_i0, v_i1])" in data["diff"]
    assert "T.erf(" in data["diff"]  # TVM's gelu, on the good side
    assert data["reproduce"].startswith("tk bisect functions ")
    assert "--passes LegalizeOps" in data["reproduce"]
    assert "lowering" in r.stderr  # progress, never on stdout


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
    assert r.stderr.strip().splitlines()[-1] == \
        f"tk: error: --python {tmp_path / 'no-python'}: no such interpreter"
