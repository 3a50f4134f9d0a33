"""`tk ext wheel`: the scaffold's relocatable wheel, installed into a fresh venv that has the
TVM wheels' packages but not tk, imported and called there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from ext_helpers import clean_env, venv_without_tk

pytestmark = pytest.mark.slow

NAME = "wheel_ext"


@pytest.fixture(scope="module")
def work():
    path = Path(tempfile.mkdtemp(prefix="tk-ext-wheel-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def wheel(work: Path) -> Path:
    from conftest import run_tk

    assert run_tk("ext", "new", NAME, "--dir", str(work)).returncode == 0
    r = run_tk("ext", "wheel", str(work / NAME), "--out", str(work / "dist"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RUNPATH $ORIGIN/../../tvm/lib:$ORIGIN/../../tvm_ffi/lib" in r.stdout
    wheels = list((work / "dist").glob(f"{NAME}-0.1.0-py3-none-*.whl"))
    assert len(wheels) == 1, r.stdout
    return wheels[0]


def test_wheel_holds_the_package_and_an_origin_relative_library(wheel: Path, work: Path) -> None:
    from toolkit import libraries

    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(f"{NAME}-0.1.0.dist-info/METADATA").decode()
        z.extract(f"{NAME}/lib/lib{NAME}.so", work / "unzipped")
    assert {f"{NAME}/__init__.py", f"{NAME}/lib/lib{NAME}.so",
            f"{NAME}-0.1.0.dist-info/RECORD"} <= names
    assert not [n for n in names if n.endswith(".tk.json")]  # the build tree's manifest
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines()
                if line.startswith("Requires-Dist: ")]
    assert [r.split(">=")[0] for r in requires] == ["apache-tvm", "apache-tvm-ffi"]
    assert all("," in r and "<" in r for r in requires), requires
    lib = libraries.describe(work / "unzipped" / NAME / "lib" / f"lib{NAME}.so")
    assert lib.runpath == ["$ORIGIN/../../tvm/lib", "$ORIGIN/../../tvm_ffi/lib"]
    assert not lib.rpath


def test_wheel_installs_and_runs_in_avenv_without_tk(wheel: Path, work: Path) -> None:
    python = venv_without_tk(work / "venv")
    env = clean_env()
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, env=env)
    code = f"""
import importlib.util
assert importlib.util.find_spec("toolkit") is None, "tk is importable in the venv"
import numpy as np
import tvm
import {NAME}
x = tvm.runtime.tensor(np.ones(2, dtype="float32"))
{NAME}.add_inplace(x, 1.0)
print({NAME}.add_one(41), {NAME}.greet("venv"), x.numpy().tolist(), {NAME}.__file__)
"""
    r = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                       cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"42 hello venv from {NAME} [2.0, 2.0] {work / 'venv'}")
    # Without `import tvm` first, ld.so finds the TVM libraries through the $ORIGIN RUNPATH.
    code = (f"import ctypes, importlib.util; ctypes.CDLL(importlib.util.find_spec("
            f"'{NAME}').submodule_search_locations[0] + '/lib/lib{NAME}.so'); "
            "import tvm_ffi; print(tvm_ffi.get_global_func('wheel_ext.add_one')(1))")
    r = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.split() == ["2"], r.stderr


def test_wheel_needs_pyproject(work: Path, tk) -> None:
    assert tk("ext", "new", "bare_ext", "--dir", str(work)).returncode == 0
    (work / "bare_ext" / "pyproject.toml").unlink()
    r = tk("ext", "wheel", str(work / "bare_ext"))
    assert r.returncode == 2 and "has no pyproject.toml" in r.stderr
