"""The checks TVM's own CMake modules make (toolkit/explain/cmake_checks.py): which releases
make one, and whether the value it rejects is the option's own default.

Samples are under tests/fixtures/explain/ (SOURCES.md); the table is regenerated from a real
git repository with release tags.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolkit.explain import best

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent


def _said(text: str) -> tuple[str, str]:
    top = best(text)
    assert top is not None
    return top.id, f"{top.title} {top.cause} {top.fix}"


def test_tvm_cmake_check_names_its_releases_and_a_rejected_default() -> None:
    rule, said = _said((FIXTURES / "tvm-cmake-check.log").read_text())
    assert rule == "tvm-cmake-check"
    assert "Logging.cmake" in said and "v0.12.0 to v0.20.0" in said and "past v0.20.0" in said
    # the value rejected is the option's own default: the tree's check is at fault
    default = ("CMake Error at /src/t/cmake/modules/Hexagon.cmake:212 (message):\n"
               "  Invalid use of USE_HEXAGON_EXTERNAL_LIBS=OFF; USE_HEXAGON_EXTERNAL_LIBS\n"
               "  only supports absolute paths and git repository urls\n")
    rule, said = _said(default)
    assert rule == "tvm-cmake-check" and "own default" in said and "update TVM" in said
    assert "v0.11.0" in said
    # a message no TVM module has stays CMake's generic error
    other = "CMake Error at cmake/modules/Foo.cmake:3 (message):\n  something else broke here\n"
    assert _said(other)[0] == "cmake-error"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_check_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "cmake" / "modules").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "CMakeLists.txt").write_text("project(t)\n")
    module = repo / "cmake" / "modules" / "Foo.cmake"
    module.write_text('if(NOT EXISTS ${USE_FOO})\n  message(FATAL_ERROR "Cannot use "\n'
                      '    "USE_FOO=${USE_FOO}: no such folder")\nendif()\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v0.6.0")
    module.write_text("# no check\n")
    _git(repo, "commit", "-qam", "two")
    _git(repo, "tag", "v0.7.0")
    _git(repo, "branch", "-M", "main")
    out = tmp_path / "checks.json"
    subprocess.run([sys.executable, str(REPO / "scripts" / "cmake_checks.py"), str(repo),
                    "--out", str(out)], check=True)
    assert json.loads(out.read_text())["checks"] == [
        {"file": "cmake/modules/Foo.cmake", "text": "Cannot use USE_FOO=${USE_FOO}: no such folder",
         "first": "v0.6.0", "last": "v0.6.0"}]
