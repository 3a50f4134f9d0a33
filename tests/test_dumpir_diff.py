"""`tk dump-ir compare` / `diff`: two dumps side by side, normalisers on and off."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_tk
from test_dumpir import CUSTOM_PASS, dump_ir
from tvm026 import python_026

from toolkit.dumpir.normalise import NORMALISERS, normalise


def dump_with(python: Path, out: Path, workload: str, target: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([str(python), "-m", "toolkit", "dump-ir", workload, "--target", target,
                           "-o", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # Its texts are rendered by the TVM that recorded it; tk with another TVM refuses to.
    proc = subprocess.run([str(python), "-m", "toolkit", "dump-ir", "page", str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr




@pytest.mark.slow
def test_printer_renames_across_generations_are_normalised_away(tmp_path: Path):
    old, new = tmp_path / "026", tmp_path / "027"
    dump_with(python_026(), old, "builtin:mlp", "llvm")
    assert dump_ir(new).returncode == 0
    assert json.loads((old / "index.json").read_text())["summary"]["tvm_version"] == "0.26.0"

    # Raw, the printer's type-key rename looks like MakePackedAPI changing its output.
    r = run_tk("dump-ir", "compare", str(old), str(new), "--raw", "type-keys")
    assert r.returncode == 0 and "first divergence: tirx.MakePackedAPI" in r.stdout
    r = run_tk("dump-ir", "diff", str(old), str(new), "--raw", "type-keys", "--func", "add")
    removed = [ln for ln in r.stdout.splitlines() if ln.startswith("-    assert num_args")]
    added = [ln for ln in r.stdout.splitlines() if ln.startswith("+    assert num_args")]
    assert 'metadata["tirx.StringImm"]' in removed[0] and 'metadata["ir.StringImm"]' in added[0]
    # Normalised, nothing is left: the two generations lower this model the same way.
    r = run_tk("dump-ir", "compare", str(old), str(new))
    assert "no aligned pass turns the same input into different output" in r.stdout
    r = run_tk("dump-ir", "diff", str(old), str(new), "--pass", "tirx.MakePackedAPI")
    assert r.returncode == 0 and "# no difference after normalising" in r.stdout


@pytest.mark.slow
def test_real_differences_across_generations_remain(tmp_path: Path):
    old, new = tmp_path / "026", tmp_path / "027"
    dump_with(python_026(), old, "builtin:convnet", "cuda -arch=sm_80")
    assert dump_ir(new, "builtin:convnet", "cuda -arch=sm_80").returncode == 0
    r = run_tk("dump-ir", "compare", str(old), str(new))
    assert "first divergence: tirx.VectorizeLoop" in r.stdout, r.stdout
    r = run_tk("dump-ir", "diff", str(old), str(new), "--json")
    result = json.loads(r.stdout)
    assert result["name_a"] == result["name_b"] == "tirx.VectorizeLoop"
    text = "".join(d["diff"] for d in result["diffs"])
    assert "T.Ramp(" in text and "StringImm" not in text and "T.target({" not in text


def test_target_attributes_are_normalised_unless_asked(tmp_path: Path):
    a, b = tmp_path / "x86-64", tmp_path / "skylake"
    assert dump_ir(a, "builtin:mlp", '{"kind": "llvm", "mcpu": "x86-64"}').returncode == 0
    assert dump_ir(b, "builtin:mlp", '{"kind": "llvm", "mcpu": "skylake"}').returncode == 0
    r = run_tk("dump-ir", "compare", str(a), str(b), "--raw", "target")
    assert "first divergence: tirx.BindTarget" in r.stdout
    r = run_tk("dump-ir", "compare", str(a), str(b))
    assert "no aligned pass" in r.stdout, r.stdout  # the TIR is the same for both CPUs
    # The generated code is not: codegen records are diffed by module.
    index = json.loads((a / "index.json").read_text())
    host = next(p for p in index["passes"] if p["kind"] == "codegen" and p["lane"] == "host")
    r = run_tk("dump-ir", "diff", str(a), str(b), "--pass", str(host["seq"]), "--func", "host.ll")
    assert r.returncode == 0, r.stderr
    assert '"target-cpu"="..."' in r.stdout and "skylake" not in r.stdout
    r = run_tk("dump-ir", "diff", str(a), str(b), "--pass", str(host["seq"]), "--func", "host.ll",
               "--raw", "all")
    assert '"target-cpu"="skylake"' in r.stdout
    r = run_tk("dump-ir", "diff", str(a), str(b), "--raw", "colour")
    assert r.returncode == 2 and "unknown normaliser 'colour'" in r.stderr


def test_compare_exits_1_when_either_dump_failed(tmp_path: Path):
    workload = tmp_path / "custom.py"
    workload.write_text(CUSTOM_PASS)
    failed, good = tmp_path / "failed", tmp_path / "good"
    assert run_tk("dump-ir", str(workload), "-o", str(failed)).returncode == 1
    assert dump_ir(good).returncode == 0
    for args in ((str(failed), str(good)), (str(good), str(failed))):
        r = run_tk("dump-ir", "compare", *args)
        assert r.returncode == 1
        side = "A" if args[0] == str(failed) else "B"
        assert f"{side} FAILED at #2 FuseMyOps: FuseMyOps: cannot fuse matmul yet" in r.stdout
        assert "#0 sequential" not in r.stdout  # the failed wrapper is not a pass


def test_numbering_is_renumbered_in_order_of_first_appearance():
    a = 'lv3 = R.call_tir(cls.add1, (x_2,)); lv4 = lv3 + x_2; metadata["ir.StringImm"][7]'
    b = 'lv5 = R.call_tir(cls.add2, (x_1,)); lv6 = lv5 + x_1; metadata["ir.StringImm"][9]'
    assert normalise(a, NORMALISERS) == normalise(b, NORMALISERS)
    # dtypes, LLVM types and architectures keep their numbers; a real change stays visible.
    c = "T.int64(1) float32 i32 sm_80 x86_64 lv3 + lv4"
    assert normalise(c, ["numbering"]) == "T.int64(1) float32 i32 sm_80 x86_64 lv0 + lv1"
    assert normalise(a, NORMALISERS) != normalise(a.replace("lv3 + x_2", "lv3 * x_2"), NORMALISERS)
