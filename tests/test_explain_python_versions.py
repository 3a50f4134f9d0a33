"""The Python each TVM release requires (toolkit/explain/python_versions.py): TVM's own
import-time check and pip's requires-python refusal name the releases that ask for it.

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



def test_tvm_python_check_names_the_releases_that_ask_for_that_python() -> None:
    rule, said = top_said((FIXTURES / "python-too-old-for-tvm.log").read_text())
    assert rule == "python-too-old-for-tvm"
    assert "v0.21.0" in said and "Python 3.9" in said and "v0.20.0 asked for Python 3.6" in said
    rule, said = top_said("Exception: The minimal Python requirement is Python 3.6\n")
    assert rule == "python-too-old-for-tvm" and "v0.7.0" in said and "3.5" in said
    # a version no TVM release's check asks for is not claimed
    assert "python-too-old-for-tvm" not in {
        f.id for f in explain("Exception: The minimal Python requirement is Python 2.7\n")}


def test_pip_refusal_names_the_releases_whose_metadata_asks_for_it() -> None:
    rule, said = top_said((FIXTURES / "pip-python-too-old-for-tvm.log").read_text())
    assert rule == "pip-python-too-old-for-tvm"
    assert "v0.24.0" in said and "3.10" in said and "v0.23.0 asked for Python 3.9" in said
    other = "ERROR: Package 'numpy' requires a different Python: 3.8.1 not in '>=3.10'\n"
    assert "pip-python-too-old-for-tvm" not in {f.id for f in explain(other)}



def test_python_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "python" / "tvm").mkdir(parents=True)
    git(repo, "init", "-q")
    check = repo / "python" / "tvm" / "base.py"
    check.write_text('PY3STATEMENT = "The minimal Python requirement is Python 3.7"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.9.0")
    (repo / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.11"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    git(repo, "tag", "v0.10.0")
    releases = generate("python_versions.py", repo)["releases"]
    assert releases == [
        {"tag": "v0.9.0", "check": "3.7", "check_file": "python/tvm/base.py"},
        {"tag": "v0.10.0", "check": "3.7", "check_file": "python/tvm/base.py",
         "metadata": "3.11", "metadata_file": "pyproject.toml"}]
    # the shipped table holds what apache/tvm says of v0.7.0
    shipped = json.loads((REPO / "toolkit" / "data" / "explain" / "python_versions.json")
                         .read_text())["releases"]
    assert {"tag": "v0.7.0", "check": "3.6",
            "check_file": "python/tvm/_ffi/_pyversion.py"} in shipped
