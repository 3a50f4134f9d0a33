"""The ready-made checks in bisect/, run as a bisection step runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.bisect import checks

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "bisect" / "miscompile.py"


def run(name: str, *args: str, tmp: Path, phase: str = "search", **extra: str) -> int:
    argv, _ = checks.resolve([name, *args], REPO)
    env = {**os.environ, "TK_BISECT_DIR": str(tmp), "TK_BISECT_PHASE": phase,
           "PYTHONPATH": str(REPO), **extra}
    return subprocess.run(argv, env=env, cwd=tmp, capture_output=True, text=True).returncode


def test_ready_made_checks_are_found_by_name():
    assert {"build-only", "pytest", "numerics", "speed"} <= set(checks.ready_made())
    argv, text = checks.resolve(["numerics builtin:mlp --target llvm"], REPO)
    assert argv[:2] == [sys.executable, str(checks.CHECK_DIR / "numerics.py")]
    assert argv[2:] == ["builtin:mlp", "--target", "llvm"] and text.startswith("numerics")


def test_pytest_check_maps_exit_codes(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_ok():\n    pass\n\ndef test_no():\n"
                                        "    assert False\n")
    quick = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # this machine's plugins: slow to load
    assert run("pytest", "test_x.py::test_no", tmp=tmp_path, **quick) == 1
    assert run("pytest", "test_x.py::test_gone", tmp=tmp_path, **quick) == 125  # not here
    assert run("build-only", tmp=tmp_path) == 0


@pytest.mark.slow
def test_numerics_check_against_reference_and_good_end(tmp_path):
    assert run("numerics", str(FIXTURE), tmp=tmp_path) == 1  # the miscompiling pipeline
    assert run("numerics", "builtin:mlp", "--against", "good", tmp=tmp_path,
               phase="good-end") == 0
    assert list(tmp_path.glob("numerics-*.npz"))
    assert run("numerics", "builtin:mlp", "--against", "good", tmp=tmp_path) == 0
