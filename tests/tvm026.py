"""The other TVM generation the suite meets: a venv holding the apache-tvm 0.26.0 wheel
(.ci/run makes it at /tmp/tk-tvm026; ``TK_TVM026_PYTHON`` names another), for cross-generation
dump-ir diffs, function bisection with another TVM as the good side, and extensions built
against the v0.26.0 tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

PYTHON = Path(os.environ.get("TK_TVM026_PYTHON", "/tmp/tk-tvm026/bin/python"))


def python_026() -> Path:
    """That venv's interpreter; skips the test, saying how to make it, where there is none."""
    if not PYTHON.exists():
        pytest.skip(f"no apache-tvm 0.26.0 venv at {PYTHON} (python3 -m venv /tmp/tk-tvm026 && "
                    "/tmp/tk-tvm026/bin/pip install apache-tvm==0.26.0 click numpy pytest)")
    proc = subprocess.run([str(PYTHON), "-c", "import tvm; print(tvm.__version__)"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not proc.stdout.startswith("0.26"):
        pytest.skip(f"{PYTHON} does not import apache-tvm 0.26: {proc.stderr[-300:]}")
    return PYTHON
