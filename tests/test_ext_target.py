"""`tk ext new --kind target` (= codegen): an out-of-tree device - device API in the
extension's C++ library, a code generator emitting C, a target and its pipeline - built
against the installed wheel, running tk's builtin workloads with `tk run --ext --check`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NAME = "accel"


@pytest.fixture(scope="module")
def project():
    """A target scaffold built by `tk ext build` against the installed wheel."""
    from conftest import run_tk

    # Not tmp_path_factory: pytest sessions running beside this one prune its base dirs.
    work = Path(tempfile.mkdtemp(prefix="tk-ext-target-"))
    r = run_tk("ext", "new", NAME, "--kind", "target", "--dir", str(work))
    assert r.returncode == 0, r.stderr
    assert f"--ext {work / NAME} --target {NAME} --check" in r.stdout
    r = run_tk("ext", "build", str(work / NAME))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (f"registers: {NAME}.device_stats, {NAME}.module_create, device_api.ext_dev, "
            f"ffi.Module.load_from_bytes.{NAME}") in r.stdout
    yield work / NAME
    shutil.rmtree(work, ignore_errors=True)


def test_target_scaffold_passes_its_own_tests_without_tk(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "5 passed" in p.stdout


def test_tk_run_checks_a_builtin_on_the_device_with_the_generated_c(project: Path, tk,
                                                                   tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    r = tk("run", "builtin:mlp", "--ext", str(project), "--target", NAME, "--check", "--json",
           env={f"{NAME}_DUMP": str(dump)})
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["device"] == "ext_dev:0"
    assert report["check"]["ok"] and report["check"]["against"] == "reference"
    code = (dump / "kernels.c").read_text()
    # Each of the model's operators became a kernel of the generated C, with its packed entry.
    for kernel in ("matmul_kernel", "relu_kernel", "add_kernel"):
        assert f"int32_t __tvm_ffi_{kernel}(" in code, code[:2000]


def test_the_generated_c_is_what_ran(project: Path, tk, tmp_path: Path) -> None:
    """A codegen that prints max as min (relu becomes min(x, 0)) makes the same run fail its
    check: the numbers came from the C this extension generated, not another code path."""
    broken = tmp_path / NAME
    shutil.copytree(project, broken, ignore=shutil.ignore_patterns("build", "__pycache__"))
    codegen = broken / "python" / NAME / "codegen.py"
    text = codegen.read_text()
    choice = "'<' if isinstance(e, tirx.Min) else '>'"
    assert choice in text
    codegen.write_text(text.replace(choice, "'>' if isinstance(e, tirx.Min) else '<'"))
    r = tk("run", "builtin:mlp", "--ext", str(broken), "--target", NAME, "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "check against reference: MISMATCH" in r.stdout


def test_an_exported_model_keeps_its_kernels_and_runs_with_its_extension(
        project: Path, tk, tmp_path: Path) -> None:
    model = tmp_path / "mlp.so"
    r = tk("compile", "builtin:mlp", "--ext", str(project), "--target", NAME, "-o", str(model),
           "--emit-source", str(tmp_path / "src"))
    assert r.returncode == 0, r.stderr
    source = (tmp_path / "src" / f"{NAME}.txt").read_text()  # the device module's own C
    assert "int32_t __tvm_ffi_relu_kernel(" in source
    r = tk("run", str(model), "--ext", str(project), "--check")
    assert r.returncode == 0, r.stderr
    assert "on ext_dev:0" in r.stdout and "check against reference: OK" in r.stdout
    # Without the extension, neither its target nor its kernels' loader is there: one line,
    # exit 2, saying what to load.
    r = tk("run", str(model))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"Target kind \"{NAME}\" is not defined" in r.stderr and "--ext DIR" in r.stderr


def test_dump_ir_shows_the_generated_c_and_profile_times_its_kernels(project: Path, tk,
                                                                     tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    r = tk("dump-ir", "builtin:mlp", "--ext", str(project), "--target", NAME, "-o", str(dump))
    assert r.returncode == 0, r.stderr
    found = tk("dump-ir", "find", str(dump), "__tvm_ffi_relu_kernel")
    assert found.returncode == 0, found.stderr
    assert "appears after #" in found.stdout and "codegen ext_dev" in found.stdout, found.stdout
    r = tk("profile", "builtin:mlp", "--ext", str(project), "--target", NAME, "-n", "2",
           "--warmup", "1")
    assert r.returncode == 0, r.stderr
    assert "on ext_dev:0" in r.stdout
    rows = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()[2:]
            if len(line.split()) > 1}
    assert rows.get("relu") == "kernel" and rows.get("matmul") == "kernel", r.stdout


def test_the_device_ships_as_a_wheel_and_runs_where_tk_is_not(project: Path, tk,
                                                              tmp_path: Path) -> None:
    from ext_helpers import clean_env, venv_without_tk

    r = tk("ext", "wheel", str(project), "--out", str(tmp_path / "dist"), "--json")
    assert r.returncode == 0, r.stderr
    python = venv_without_tk(tmp_path / "venv")
    env = clean_env()
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", json.loads(r.stdout)["wheel"]], check=True,
                   env=env)
    code = f"""
import importlib.util
assert importlib.util.find_spec("toolkit") is None, "tk is importable in the venv"
import numpy as np
import tvm
from tvm import te
import {NAME}
A = te.placeholder((16,), "float32", name="A")
B = te.compute((16,), lambda i: A[i] * 2 + 1, name="B")
f = tvm.compile(te.create_prim_func([A, B]), target={NAME}.target.target(),
                tir_pipeline="{NAME}")
x = tvm.runtime.tensor(np.arange(16, dtype="float32"), {NAME}.device)
y = tvm.runtime.tensor(np.zeros(16, dtype="float32"), {NAME}.device)
f(x, y)
print(y.numpy()[:3].tolist(), {NAME}.device_stats()["copies_to_device"], {NAME}.__file__)
"""
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"[1.0, 3.0, 5.0] 2 {tmp_path / 'venv'}"), done.stdout


def test_a_tir_workload_compiles_for_the_device_through_its_pipeline(project: Path, tk,
                                                                     tmp_path: Path) -> None:
    r = tk("run", "builtin:matmul", "--ext", str(project / "python" / NAME), "--target", NAME,
           "--check")
    assert r.returncode == 0, r.stderr
    assert "on ext_dev:0" in r.stdout and "check against reference: OK" in r.stdout


def test_what_the_codegen_cannot_print_fails_with_a_reproduce_line_that_loads_it(
        project: Path, tk, tmp_path: Path) -> None:
    workload = tmp_path / "half.py"
    workload.write_text("from tvm import te\n"
                        "A = te.placeholder((8,), 'float16', name='A')\n"
                        "B = te.compute((8,), lambda i: A[i] + A[i], name='B')\n"
                        "mod = te.create_prim_func([A, B])\n")
    r = tk("compile", str(workload), "--ext", str(project), "--target", NAME)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith(f"tk: error: compiling {workload} for {NAME} failed: ")
    assert "dtype float16 (this codegen prints float32" in lines[0]
    assert lines[1] == f"  reproduce: tk --debug compile {workload} --target {NAME} " \
                       f"--ext {project}"


def test_bad_targets_and_extensions_are_one_line_exit_2(project: Path, tk,
                                                         tmp_path: Path) -> None:
    unknown = tk("run", "builtin:mlp", "--ext", str(project), "--target", "no_such_kind")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "tk: error: TVM rejects target 'no_such_kind': Target kind \"no_such_kind\" is not "
        "defined. Target creation from string failed: no_such_kind (an extension's device? "
        "load the extension first: --ext DIR)"]
    unloaded = tk("run", "builtin:mlp", "--target", NAME)  # the device's extension not loaded
    assert unloaded.returncode == 2 and len(unloaded.stderr.strip().splitlines()) == 1
    assert f"Target kind \"{NAME}\" is not defined" in unloaded.stderr
    missing = tk("compile", "builtin:mlp", "--ext", str(tmp_path / "nowhere"), "--target", NAME)
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"tk: error: --ext {tmp_path / 'nowhere'}: no such file " \
                                     "or directory"
    (tmp_path / "notext").mkdir()
    r = tk("run", "builtin:mlp", "--ext", str(tmp_path / "notext"), "--target", NAME)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "not an extension" in r.stderr
    broken = tmp_path / "broken" / "python" / "broken_ext"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('no device here')\n")
    r = tk("run", "builtin:mlp", "--ext", str(broken.parents[1]), "--target", NAME)
    assert r.returncode == 2
    assert r.stderr.strip() == f"tk: error: --ext {broken.parents[1]}: importing broken_ext " \
                               "failed: no device here"
    kind = tk("ext", "new", "dpu", "--kind", "dpu", "--dir", str(tmp_path))
    assert kind.returncode == 2 and "'dpu' is not one of" in kind.stderr


def test_codegen_is_the_target_scaffold(tk, tmp_path: Path) -> None:
    for kind in ("target", "codegen"):
        r = tk("ext", "new", "dev", "--kind", kind, "--dir", str(tmp_path / kind))
        assert r.returncode == 0, r.stderr
    files = [sorted(str(p.relative_to(tmp_path / kind / "dev"))
                    for p in (tmp_path / kind / "dev").rglob("*") if p.is_file())
             for kind in ("target", "codegen")]
    assert files[0] == files[1] and "src/device_api.cc" in files[0]
