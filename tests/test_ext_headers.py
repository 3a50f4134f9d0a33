"""`tk ext build --tvm-source`: the real v0.26.0 tree's headers against the installed wheels'
libraries and tvm-ffi: the mismatch is said before compiling, each part on its line."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from toolkit.ext import headers

FIXTURES = os.environ.get("TK_FIXTURES")
TREE = "tvm-v0.26.0"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not FIXTURES or not (Path(FIXTURES) / f"{TREE}.tar.xz").is_file():
        pytest.skip(f"TK_FIXTURES does not name a directory holding {TREE}.tar.xz")
    out = tmp_path_factory.mktemp("src")
    # The two version headers are all the check reads.
    subprocess.run(["tar", "-xJf", str(Path(FIXTURES) / f"{TREE}.tar.xz"), "-C", str(out),
                    f"{TREE}/include/tvm/runtime/base.h",
                    f"{TREE}/3rdparty/tvm-ffi/include/tvm/ffi/c_api.h"], check=True)
    return out / TREE


def _package(name: str) -> Path:
    return Path(importlib.util.find_spec(name).origin).parent


def test_versions_are_read_from_the_real_tree(source: Path) -> None:
    assert headers.tvm_version(source) == "0.26.dev0"
    assert headers.ffi_header_version(source / "3rdparty" / "tvm-ffi") == "0.1.14"


def test_build_says_what_does_not_match_before_compiling(source: Path, tk, tmp_path: Path) -> None:
    wheel_tvm = headers.tvm_version(_package("tvm"))
    wheel_ffi = headers.ffi_header_version(_package("tvm_ffi"))
    if headers.release(wheel_tvm) == "0.26" and wheel_ffi == "0.1.14":
        pytest.skip("the installed wheels match the v0.26.0 tree: nothing to refuse")
    assert tk("ext", "new", "src_ext", "--dir", str(tmp_path)).returncode == 0
    r = tk("ext", "build", str(tmp_path / "src_ext"), "--tvm-source", str(source))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "the TVM headers and the libraries this build would use do not match:" in r.stderr
    if headers.release(wheel_tvm) != "0.26":
        assert (f"TVM: the headers of {source} are TVM 0.26.dev0, the library linked "
                f"({_package('tvm')}/lib) is TVM {wheel_tvm}") in r.stderr
    if wheel_ffi != "0.1.14":
        assert (f"tvm-ffi: {source}/3rdparty/tvm-ffi is 0.1.14, whose API those headers use; "
                f"the build takes tvm-ffi {wheel_ffi} from {_package('tvm_ffi')}") in r.stderr
    assert not (tmp_path / "src_ext" / "build" / "build.ninja").exists()  # nothing compiled


def test_a_built_trees_own_library_matches_its_headers(source: Path) -> None:
    problems = headers.mismatches(source, source, _package("tvm_ffi"))
    assert not [p for p in problems if p.startswith("TVM:")]


@pytest.mark.slow
def test_compiler_errors_show_the_first_one_and_what_a_missing_header_means(tk, tmp_path: Path
                                                                           ) -> None:
    """A real compile whose first error (the tvm-ffi skew of the issue, in miniature) is
    followed by later ones: tk's error is the first; a compiler header the wheel lacks is
    said to need --tvm-source."""
    assert tk("ext", "new", "skew_ext", "--dir", str(tmp_path)).returncode == 0
    src = tmp_path / "skew_ext" / "src" / "skew_ext.cc"
    text = src.read_text()
    src.write_text(text.replace("namespace skew_ext {", """namespace skew_ext {
struct AttachFieldFlag {};
int First() { return AttachFieldFlag::SEqHashDefRecursive(); }
int Second() { return undeclared_later_error; }
""", 1))
    r = tk("ext", "build", str(tmp_path / "skew_ext"))
    assert r.returncode == 1, r.stdout + r.stderr
    head = r.stderr[r.stderr.index("tk: error: "):].splitlines()[0]
    assert head.startswith("tk: error: compile failed: ") and "skew_ext.cc:" in head
    assert "SEqHashDefRecursive" in head and "is not a member of" in head, r.stderr
    assert "undeclared_later_error" not in r.stderr
    src.write_text("#include <tvm/tirx/transform.h>\n" + text)
    r = tk("ext", "build", str(tmp_path / "skew_ext"))
    assert r.returncode == 1
    assert "fatal error: tvm/tirx/transform.h: No such file or directory" in r.stderr
    assert ("tvm/tirx/transform.h is a TVM compiler header: the apache-tvm wheel ships "
            "include/tvm/runtime only; build against a source tree's headers with "
            "--tvm-source DIR") in r.stderr
