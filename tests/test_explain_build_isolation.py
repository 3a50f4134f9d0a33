"""A module missing in pip's or uv's isolated build (toolkit/explain/build_isolation.py): the
answer says which TVM releases' build files declare it, from a table generated from TVM's
release tags (scripts/build_requires.py).

Samples are under tests/fixtures/explain/ (SOURCES.md); the table is regenerated from a real
git repository with release tags.
"""

from __future__ import annotations

import json
from pathlib import Path

from explain_tables import generate, git, top_said

from toolkit.explain import explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent


def test_isolated_build_names_the_release_whose_pyproject_declares_the_module() -> None:
    rule, said = top_said((FIXTURES / "isolated-build-missing-module.log").read_text())
    assert rule == "isolated-build-missing-module"
    assert "no-build-isolation" in said and "v0.20.0" in said and "python/pyproject.toml" in said
    # the same module missing outside a build is another failure
    plain = ("Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n"
             "ModuleNotFoundError: No module named 'Cython'\n")
    assert "isolated-build-missing-module" not in {f.id for f in explain(plain)}


def test_a_module_no_tvm_release_imports_gets_the_generic_answer() -> None:
    log = (FIXTURES / "isolated-build-missing-module.log").read_text().replace(
        "'Cython'", "'pybind11'")
    rule, said = top_said(log)
    assert rule == "isolated-build-missing-module" and "pybind11" in said
    assert "TVM's python/setup.py" not in said


def test_build_requires_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "python").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "python" / "setup.py").write_text(
        "import os\nfrom setuptools import setup\n\ndef cy():\n    from Cython.Build import "
        "cythonize\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.9.0")
    (repo / "python" / "pyproject.toml").write_text(
        '[build-system]\nrequires = [\n  "setuptools >= 61.0",\n  "Cython",\n]\n'
        '[tool.black]\nline-length = 100\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    git(repo, "tag", "v0.10.0")
    releases = generate("build_requires.py", repo)["releases"]
    assert releases == [
        {"tag": "v0.9.0", "setup_imports": ["Cython", "setuptools"], "declared": {}},
        {"tag": "v0.10.0", "setup_imports": ["Cython", "setuptools"],
         "declared": {"python/pyproject.toml": ["setuptools", "cython"]}}]
    # the shipped table holds what apache/tvm says of v0.20.0
    shipped = json.loads((REPO / "toolkit/data/explain/build_requires.json").read_text())
    v20 = next(r for r in shipped["releases"] if r["tag"] == "v0.20.0")
    assert v20["declared"]["python/pyproject.toml"] == ["setuptools", "cython"]
