"""`tk ext new --kind pass`: a Relax pass and a TIR pass in Python, run inside a tk compile
through the workload's pipeline, their effect seen in `tk dump-ir`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NAME = "my_passes"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import run_tk

    work = tmp_path_factory.mktemp("ext-pass")
    r = run_tk("ext", "new", NAME, "--kind", "pass", "--dir", str(work))
    assert r.returncode == 0, r.stderr
    assert "tk dump-ir workload.py -o dump" in r.stdout
    return work / NAME


def test_pass_scaffold_passes_its_own_tests_without_tk(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "3 passed" in p.stdout


def test_the_passes_run_in_a_tk_compile_and_show_in_the_dump(project: Path, tk) -> None:
    r = tk("run", "workload.py", "--check", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "check against reference: OK" in r.stdout
    r = tk("dump-ir", "workload.py", "-o", "dump", cwd=project)
    assert r.returncode == 0, r.stderr
    shown = tk("dump-ir", "show", "dump", cwd=project)
    rows = [line for line in shown.stdout.splitlines() if f"{NAME}.Tag" in line]
    assert len(rows) == 2 and all("changed (" in row for row in rows), shown.stdout
    found = tk("dump-ir", "find", "dump", f"{NAME}.num_params", cwd=project)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines and all("appears after #" in line and f"{NAME}.TagPrimFuncs" in line
                         for line in lines), found.stdout
    tagged = tk("dump-ir", "find", "dump", f"{NAME}.tagged", cwd=project)
    assert f"{NAME}.TagRelaxFunctions" in tagged.stdout, tagged.stdout


def test_kinds_not_scaffolded_are_refused(tk, tmp_path: Path) -> None:
    r = tk("ext", "new", "dpu", "--kind", "target", "--dir", str(tmp_path))
    assert r.returncode == 2 and "'target' is not one of 'runtime', 'pass'" in r.stderr
