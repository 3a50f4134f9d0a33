"""`tk ext build --build ID`: an extension built against a stored tk build (its tree's
headers, its libraries). The real tvm-main tree's runtime-only build hosts the runtime kind
and refuses the pass kind before compiling (its libraries lack the compiler); a stored build of
the miniature fork, whose tree has no TVM headers, is refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, run_tk
from minifork import make_minifork

pytestmark = pytest.mark.slow

FIXTURES = os.environ.get("TK_FIXTURES")


def stored_build(tree: Path, cache: dict[str, str]) -> str:
    r = run_tk("build", "-C", str(tree), "--runtime-only", "--json", env=cache, timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)["id"]


@pytest.fixture(scope="module")
def main_build() -> Iterator[tuple[str, dict[str, str], Path]]:
    """A runtime-only tk build of the real tvm-main tree in a store of this module's own
    (about 6 minutes on 2 idle cores: the runtime, then the tree's tvm-ffi package)."""
    tarball = Path(FIXTURES or "") / "tvm-main.tar.xz"
    if not FIXTURES or not tarball.is_file():
        pytest.skip("TK_FIXTURES does not name a directory holding tvm-main.tar.xz")
    if not (shutil.which("cmake") and shutil.which("ninja")):
        pytest.skip("needs cmake and ninja")
    # Not tmp_path_factory: pytest sessions running beside this one prune its base dirs.
    root = Path(tempfile.mkdtemp(prefix="tk-ext-stored-"))
    with tarfile.open(tarball) as tf:
        kw = {"filter": "tar"} if hasattr(tarfile, "data_filter") else {}
        tf.extractall(root, **kw)
    cache = {"TK_CACHE": str(root / "cache")}
    yield stored_build(root / "tvm-main", cache), cache, root
    shutil.rmtree(root, ignore_errors=True)


def test_runtime_extension_builds_against_a_stored_build(main_build) -> None:
    build_id, cache, root = main_build
    assert run_tk("ext", "new", "stored_ext", "--dir", str(root)).returncode == 0
    r = run_tk("ext", "build", str(root / "stored_ext"), "--build", build_id[:8], env=cache)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"tk: checking the headers of --build {build_id} against its libraries" in r.stderr
    assert "registers: stored_ext.add_inplace, stored_ext.add_one" in r.stdout
    library = root / "stored_ext" / "python" / "stored_ext" / "lib" / "libstored_ext.so"
    data = json.loads(library.with_name(library.name + ".tk.json").read_text())
    lib_dir = Path(cache["TK_CACHE"]) / "builds" / build_id / "lib"
    # Linked to the stored build's own libtvm_runtime and libtvm_ffi, not the Python's wheels.
    assert {Path(link["path"]).parent for link in data["links"]} == {lib_dir}
    assert {link["needed"] for link in data["links"]} == {"libtvm_runtime.so", "libtvm_ffi.so"}
    assert data["tvm"]["source_dir"] == str(root / "tvm-main")
    assert data["tvm"]["against"] == f"--build {build_id}"
    # A header edited since: no longer the headers those libraries were built from.
    base = root / "tvm-main" / "include" / "tvm" / "runtime" / "base.h"
    text = base.read_text()
    base.write_text(text + "// edited\n")
    try:
        r = run_tk("ext", "build", str(root / "stored_ext"), "--build", build_id, env=cache)
    finally:
        base.write_text(text)
    assert r.returncode == 2, r.stdout + r.stderr
    line = r.stderr[r.stderr.index("tk: error: "):].splitlines()
    assert len(line) == 1 and line[0].startswith(
        f"tk: error: headers and libraries of --build {build_id} do not match: headers: "
        f"{root / 'tvm-main'} changed since build {build_id} was made from it (tree key "), line


def test_an_extension_built_against_a_stored_build_loads_in_that_builds_shell(main_build) -> None:
    """The tvm-ffi the extension links is the build's own, of the tree's c_api.h version (0.1
    here), and the build's tvm-ffi package says the same version: tk ext check in the shell of
    `eval "$(tk env ID)"` finds one ABI, not 0.1 against tk's placeholder 0.0.0+tree (0.0)."""
    build_id, cache, root = main_build
    header = "0.1.14"  # tvm-main's 3rdparty/tvm-ffi/include/tvm/ffi/c_api.h
    record = json.loads(run_tk("build", "show", build_id, "--json", env=cache).stdout)
    assert record["python"]["version"].startswith(f"{header}+tree.")
    assert run_tk("ext", "new", "abi_ext", "--dir", str(root)).returncode == 0
    r = run_tk("ext", "build", str(root / "abi_ext"), "--build", build_id, env=cache)
    assert r.returncode == 0, r.stdout + r.stderr
    library = root / "abi_ext" / "python" / "abi_ext" / "lib" / "libabi_ext.so"
    data = json.loads(library.with_name(library.name + ".tk.json").read_text())
    ffi = next(link for link in data["links"] if link["needed"] == "libtvm_ffi.so")
    assert ffi["version"] == data["tvm_ffi"]["version"] == header
    exports = run_tk("env", build_id, env=cache)
    assert exports.returncode == 0, exports.stderr
    script = (f'{exports.stdout}\nexport PYTHONPATH="$PYTHONPATH:{REPO}"\n'
              f'exec {sys.executable} -m toolkit ext check "$0" --json')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    env.update(cache)
    proc = subprocess.run(["bash", "-c", script, str(library)], capture_output=True, text=True,
                          env=env, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] and report["process"]["tvm_ffi_version"].startswith(f"{header}+tree.")


def test_passes_against_a_runtime_only_build_are_refused_before_compiling(main_build) -> None:
    build_id, cache, root = main_build
    assert run_tk("ext", "new", "stored_pass", "--kind", "pass", "--dir",
                  str(root)).returncode == 0
    r = run_tk("ext", "build", str(root / "stored_pass"), "--build", build_id, env=cache,
               timeout=1200)
    assert r.returncode == 2, r.stdout + r.stderr
    line = r.stderr[r.stderr.index("tk: error: "):].splitlines()
    assert len(line) == 1, r.stderr
    lib_dir = Path(cache["TK_CACHE"]) / "builds" / build_id / "lib"
    assert line[0].startswith(f"tk: error: headers and libraries of --build {build_id} do not "
                              "match: symbols: the headers declare tvm::"), line[0]
    assert "CreatePrimFuncPass(" in line[0] and "CreateFunctionPass(" in line[0]
    assert line[0].endswith(f"which libtvm_runtime.so, libtvm_ffi.so in {lib_dir} do not "
                            f"export (no libtvm_compiler in {lib_dir}: a runtime-only build)"
                            ), line[0]
    assert not list((root / "stored_pass" / "build").rglob("*.o"))


def test_a_stored_build_without_tvm_headers_is_refused(tmp_path: Path) -> None:
    if not shutil.which("cmake"):
        pytest.skip("needs cmake")
    fork = make_minifork(tmp_path / "tvm")
    cache = {"TK_CACHE": str(tmp_path / "cache")}
    build_id = stored_build(fork, cache)
    assert run_tk("ext", "new", "mini_ext", "--dir", str(tmp_path)).returncode == 0
    r = run_tk("ext", "build", str(tmp_path / "mini_ext"), "--build", build_id, env=cache)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        f"tk: error: --build {build_id}: no include/tvm/runtime/base.h in {fork} (not a TVM "
        "source tree)")
    r = run_tk("ext", "build", str(tmp_path / "mini_ext"), "--build", "0000dead", env=cache)
    assert r.returncode == 2 and "no stored build '0000dead'" in r.stderr


def test_one_source_of_tvm_at_a_time(tmp_path: Path) -> None:
    assert run_tk("ext", "new", "two", "--dir", str(tmp_path)).returncode == 0
    r = run_tk("ext", "build", str(tmp_path / "two"), "--build", "x", "--tvm-source", "y")
    assert r.returncode == 2
    assert "pass one of --tvm-prebuild, --tvm-source, --build" in r.stderr
