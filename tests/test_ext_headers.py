"""`tk ext build --tvm-source`: the real v0.26.0 tree's headers against the installed wheels'
libraries and tvm-ffi: the mismatch is said before compiling, in one line."""

from __future__ import annotations

import importlib.metadata
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
    """The v0.26.0 tree's headers with this Python's wheels: one line naming each part that
    differs, exit 2, nothing compiled."""
    wheel_tvm = headers.tvm_version(_package("tvm"))
    wheel_ffi = importlib.metadata.version("apache-tvm-ffi")
    if headers.release(wheel_tvm) == "0.26":
        pytest.skip("the installed apache-tvm is a 0.26: its libraries match the v0.26.0 tree")
    assert tk("ext", "new", "src_ext", "--dir", str(tmp_path)).returncode == 0
    r = tk("ext", "build", str(tmp_path / "src_ext"), "--tvm-source", str(source))
    assert r.returncode == 2, r.stdout + r.stderr
    line = r.stderr[r.stderr.index("tk: error: "):].splitlines()
    assert len(line) == 1, r.stderr
    assert line[0] == (f"tk: error: headers and libraries of --tvm-source {source} do not match: "
                       f"TVM: headers 0.26.dev0 ({source}), library {wheel_tvm} "
                       f"({_package('tvm')}/lib)"), line[0]
    assert wheel_ffi  # the tree's tvm-ffi 0.1.14 is served by any later 0.1.x: not a mismatch
    assert not (tmp_path / "src_ext" / "build" / "build.ninja").exists()  # nothing compiled


def _against(source: Path, ffi_version: str) -> headers.Against:
    lib = _package("tvm") / "lib"
    return headers.Against(tvm_root=source, ffi_root=source / headers.TREE_FFI,
                           library_dir=lib, ffi_library=_package("tvm_ffi") / "lib" / "x.so",
                           library_tvm="0.26.0", library_ffi=ffi_version, origin="t")


def test_tvm_ffi_versions_match_by_abi_and_age(source: Path) -> None:
    """Headers of tvm-ffi 0.1.14: a 0.1.15 library serves them; 0.1.13 (older) and 0.2.0
    (another ABI) do not."""
    assert headers.version_mismatches(_against(source, "0.1.15.post2")) == []
    assert headers.version_mismatches(_against(source, "0.1.14")) == []
    for lib in ("0.1.13", "0.2.0"):
        problems = headers.version_mismatches(_against(source, lib))
        assert problems == [f"tvm-ffi: headers 0.1.14 ({source / headers.TREE_FFI}), library "
                            f"{lib} ({_package('tvm_ffi')}/lib/x.so) (needs ABI 0.1, >= 0.1.14)"]


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
