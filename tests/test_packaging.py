"""What ``pip install .`` installs is enough for the commands that read shipped files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from minifork import make_minifork

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_an_installed_tk_has_its_recipes_and_dockerfiles(tmp_path):
    wheel_dir = tmp_path / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(REPO),
                           "-w", str(wheel_dir)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "site"
    with zipfile.ZipFile(next(wheel_dir.glob("*.whl"))) as whl:
        whl.extractall(site)
    fork = make_minifork(tmp_path / "tvm")
    env = {**os.environ, "PYTHONPATH": str(site), "TK_CACHE": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-m", "toolkit", "build", "-C", str(fork), "--llvm",
                        "--backend", "docker", "--dry-run", "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["plan"]["recipes"] == ["base", "llvm"]
    assert info["dockerfile"].startswith("# The toolchain for a CPU build")
    # The ready-made bisect checks ship too (tk bisect start --check numerics ...).
    r = subprocess.run([sys.executable, "-c", "from toolkit.bisect.checks import CHECK_DIR, "
                        "ready_made; print(CHECK_DIR); print(' '.join(sorted(ready_made())))"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where, names = r.stdout.splitlines()
    assert where.startswith(str(site))
    assert {"build-only", "numerics", "pytest"} <= set(names.split())
