"""The checks TVM's own CMake modules make (toolkit/explain/cmake_checks.py): which releases
make one, and whether the value it rejects is the option's own default.

Samples are under tests/fixtures/explain/ (SOURCES.md); the table is regenerated from a real
git repository with release tags.
"""

from __future__ import annotations

from pathlib import Path

from explain_tables import generate, git, top_said

from toolkit.explain import explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent



def test_tvm_cmake_check_names_its_releases_and_a_rejected_default() -> None:
    rule, said = top_said((FIXTURES / "tvm-cmake-check.log").read_text())
    assert rule == "tvm-cmake-check"
    assert "Logging.cmake" in said and "v0.12.0 to v0.20.0" in said and "past v0.20.0" in said
    # the value rejected is the option's own default: the tree's check is at fault
    default = ("CMake Error at /src/t/cmake/modules/Hexagon.cmake:212 (message):\n"
               "  Invalid use of USE_HEXAGON_EXTERNAL_LIBS=OFF; USE_HEXAGON_EXTERNAL_LIBS\n"
               "  only supports absolute paths and git repository urls\n")
    [check] = [f for f in explain(default) if f.id == "tvm-cmake-check"]
    said = f"{check.title} {check.cause} {check.fix}"
    assert "own default" in said and "update TVM" in said and "v0.11.0" in said
    # (the fix that quotes this message stands beside it, not in its place)
    assert {f.id for f in explain(default)} == {"tvm-cmake-check", "fixed-upstream"}
    # a message no TVM module has stays CMake's generic error
    other = "CMake Error at cmake/modules/Foo.cmake:3 (message):\n  something else broke here\n"
    assert top_said(other)[0] == "cmake-error"



def test_check_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "cmake" / "modules").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "CMakeLists.txt").write_text("project(t)\n")
    module = repo / "cmake" / "modules" / "Foo.cmake"
    module.write_text('if(NOT EXISTS ${USE_FOO})\n  message(FATAL_ERROR "Cannot use "\n'
                      '    "USE_FOO=${USE_FOO}: no such folder")\nendif()\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.6.0")
    module.write_text("# no check\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "tag", "v0.7.0")
    git(repo, "branch", "-M", "main")
    assert generate("cmake_checks.py", repo)["checks"] == [
        {"file": "cmake/modules/Foo.cmake", "text": "Cannot use USE_FOO=${USE_FOO}: no such folder",
         "first": "v0.6.0", "last": "v0.6.0"}]
