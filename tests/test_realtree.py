"""``tk build`` on the real apache/tvm trees (release-tarball form: no .git, submodule contents
included), from ``$TK_FIXTURES`` (tvm-main.tar.xz: apache/tvm main at 5d4dc8721307; tvm-v0.26.0.tar.xz:
tag v0.26.0; each with 3rdparty/tvm-ffi at 12dbf053b3d9). Without it these tests skip, saying so.

The runtime build of TVM main takes about 6 minutes on 2 cores (ccache makes a second one of
the same sources quick); the container build needs a Docker engine and the CPU toolchain image.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

FIXTURES = os.environ.get("TK_FIXTURES")
pytestmark = [
    pytest.mark.skipif(not FIXTURES, reason="TK_FIXTURES is not set (the directory holding "
                       "tvm-main.tar.xz and tvm-v0.26.0.tar.xz; .ci/run sets it)"),
    pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja")),
                       reason="needs cmake and ninja"),
]
LIBRARY = re.compile(r"^lib[\w.+-]*\.so(\.[\d.]+)?$")


def unpack(name: str, into: Path) -> Path:
    tarball = Path(FIXTURES or "") / name
    if not tarball.is_file():
        pytest.skip(f"{tarball} is missing")
    with tarfile.open(tarball) as tf:
        top = tf.getnames()[0].split("/")[0]
        tf.extractall(into, filter="tar") if hasattr(tarfile, "data_filter") else tf.extractall(into)
    return into / top


@pytest.fixture(scope="module")
def main_tree(tmp_path_factory) -> Path:
    return unpack("tvm-main.tar.xz", tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> dict[str, str]:
    return {"TK_CACHE": str(tmp_path_factory.mktemp("store"))}


def copy_tree(src: Path, dst: Path) -> Path:
    """A copy of a source tree without its top-level build directories."""
    shutil.copytree(src, dst, ignore=lambda d, names: [
        n for n in names if Path(d) == src and (n == "build" or n.startswith("build-"))])
    return dst


def dry_run(tk, tree: Path, *args: str) -> dict:
    r = tk("build", "-C", str(tree), *args, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", ["tvm-main.tar.xz", "tvm-v0.26.0.tar.xz"])
def test_dry_run_plans_of_both_fixture_trees(tk, tmp_path, name):
    tree = unpack(name, tmp_path)
    info = dry_run(tk, tree, "--cuda", "--cuda-arch", "80", "--debug")
    src, plan = info["source"], info["plan"]
    assert src["commit"] is None and re.fullmatch(r"[0-9a-f]{16}", src["content_hash"])
    assert src["tree_key"] == src["content_hash"]
    # tvm-ffi is there (populated, judged by content); the submodules only some options need
    # are empty and do not stop the build.
    subs = src["submodules"]
    assert subs["3rdparty/tvm-ffi"]["state"] == "populated" and subs["3rdparty/tvm-ffi"]["content"]
    assert subs["3rdparty/cutlass"]["state"] == "uninitialised"
    rows = {c["name"]: c for c in info["preflight"]}
    assert rows["submodule 3rdparty/tvm-ffi"]["ok"]
    assert rows["submodule 3rdparty/cutlass"]["ok"] and "USE_CUTLASS=ON" in rows[
        "submodule 3rdparty/cutlass"]["detail"]
    # CUDA brings LLVM, and says why; the Debug note is true for these trees (both link with
    # -Wl,--exclude-libs,ALL in every build type, cmake/utils/Library.cmake).
    assert plan["recipes"] == ["base", "llvm", "cuda", "debug"]
    assert any(n.startswith("--cuda brings LLVM") for n in plan["notes"])
    assert any("hidden in every build type" in n for n in plan["notes"])
    assert not any("inert" in n for n in plan["notes"])
    assert info["python"] == f"apache-tvm-ffi built from {tree / '3rdparty/tvm-ffi'}"
    assert not list(tree.glob("build-*"))  # a dry run builds nothing
    # The layout each tree has: main splits libtvm_compiler out.
    assert src["layout"] == ("main" if "main" in name else src["layout"])


def test_runtime_only_cuda_plan_builds_the_separate_cuda_runtime(tk, main_tree):
    """Main builds the CUDA runtime as libtvm_runtime_cuda.so, which its 'runtime' target does
    not depend on: a runtime-only CUDA build that built 'runtime' alone had no CUDA (a GPU
    machine's check caught it)."""
    plan = dry_run(tk, main_tree, "--cuda", "--runtime-only", "--cuda-arch", "80")["plan"]
    assert plan["targets"] == ["runtime", "tvm_runtime_cuda"]
    assert any("leaves out libtvm_runtime_cuda.so" in n for n in plan["notes"])
    assert dry_run(tk, main_tree, "--runtime-only")["plan"]["targets"] == ["runtime"]


def test_cuda_without_libcuda_is_refused_before_cmake(tk, tmp_path, main_tree):
    """TVM main links libcuda.so (the driver API) and stops configuring without it. A USE_CUDA
    that names a toolkit confines CMake's search to it, and tk's check to the same places."""
    toolkit = tmp_path / "cuda"
    (toolkit / "lib64").mkdir(parents=True)
    args = ("--cuda", "--runtime-only", "--no-llvm", "--set", f"USE_CUDA={toolkit}")
    rows = {c["name"]: c for c in dry_run(tk, main_tree, *args)["preflight"]}
    assert not rows["libcuda"]["ok"] and str(toolkit) in rows["libcuda"]["detail"]
    assert "stub" in rows["libcuda"]["fix"]
    r = tk("build", "-C", str(main_tree), *args, env={"TK_CACHE": str(tmp_path / "store")})
    # The first failed check is named (without nvcc on PATH, that one comes first).
    assert r.returncode != 0 and "pre-flight: " in r.stderr, r.stderr
    assert "libcuda" in r.stderr or not shutil.which("nvcc"), r.stderr
    assert not list(main_tree.glob("build-*/CMakeCache.txt"))  # refused before CMake ran
    stub = toolkit / "lib64" / "stubs" / "libcuda.so"
    stub.parent.mkdir()
    stub.write_bytes(b"")
    rows = {c["name"]: c for c in dry_run(tk, main_tree, *args)["preflight"]}
    assert rows["libcuda"]["ok"] and str(stub) in rows["libcuda"]["detail"]


def test_tarball_is_found_again_by_content(tk, tmp_path, main_tree):
    first = dry_run(tk, main_tree, "--runtime-only")
    copy = copy_tree(main_tree, tmp_path / "elsewhere")
    assert dry_run(tk, copy, "--runtime-only")["build_id"] == first["build_id"]
    src = copy / "src/runtime/file_utils.cc"
    src.write_text(src.read_text() + "\n// one more line\n")
    assert dry_run(tk, copy, "--runtime-only")["build_id"] != first["build_id"]


@pytest.mark.slow
def test_runtime_build_of_the_real_tree(tk, tmp_path, main_tree, cache):
    r = tk("build", "-C", str(main_tree), "--runtime-only", "--json", env=cache, timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads(r.stdout)
    bdir = Path(m["build_dir"])
    # Every shared library the build wrote is in the store, byte for byte, as a hard link to
    # a content-addressed object.
    written = {p.name: p for p in bdir.rglob("lib*.so*")
               if LIBRARY.match(p.name) and "CMakeFiles" not in p.parts}
    stored = {a["name"]: a for a in m["artifacts"]}
    assert set(written) == set(stored), (sorted(written), sorted(stored))
    assert {"libtvm_runtime.so", "libtvm_ffi.so"} <= set(stored)
    objects = Path(cache["TK_CACHE"]) / "objects"
    for name, art in stored.items():
        if art["link"]:
            continue
        path = Path(art["path"])
        assert path.read_bytes() == written[name].read_bytes()
        assert path.stat().st_nlink >= 2
        assert (objects / art["sha256"][:2] / art["sha256"]).samefile(path)
    # The record: no git (a tarball), found by content; submodules as they are; the tools
    # that ran, as this machine reports them.
    src = m["source"]
    assert src["commit"] is None and src["content_hash"] == src["tree_key"]
    assert src["submodules"]["3rdparty/tvm-ffi"]["state"] == "populated"
    cmake = subprocess.run(["cmake", "--version"], capture_output=True, text=True).stdout
    assert m["toolchain"]["cmake"] == cmake.splitlines()[0]
    ninja = subprocess.run(["ninja", "--version"], capture_output=True, text=True).stdout
    assert m["toolchain"]["ninja"] == ninja.strip()
    assert m["toolchain"]["cxx"] and m["cmake_values"]["CMAKE_BUILD_TYPE"] == "RelWithDebInfo"
    assert m["check"]["ok"], m["check"]
    # The tree's tvm-ffi Python package, built from the tree, kept with the build; its
    # libtvm_ffi.so is the build's own (one tvm-ffi library per process).
    py = m["python"]
    assert py["name"] == "apache-tvm-ffi" and py["source"] == str(main_tree / "3rdparty/tvm-ffi")
    site = Path(py["site"])
    assert (site / "tvm_ffi/lib/libtvm_ffi.so").samefile(stored["libtvm_ffi.so"]["path"])
    # Nothing written in the tree: no build directory, no setuptools-scm version file.
    assert not (main_tree / "3rdparty/tvm-ffi/build").exists()
    assert not (main_tree / "3rdparty/tvm-ffi/python/tvm_ffi/_version.py").exists()
    # eval "$(tk env ID)": import tvm from the tree's python/, with that tvm-ffi.
    exports = tk("env", m["id"], env=cache)
    assert exports.returncode == 0, exports.stderr
    code = ("import tvm, tvm_ffi; print(tvm.__file__); print(tvm_ffi.__file__); "
            "print(tvm_ffi.libinfo.find_libtvm_ffi())")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH", "LD_LIBRARY_PATH")}
    proc = subprocess.run(["bash", "-c", f'{exports.stdout}\nexec {sys.executable} -c "$0"', code],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tvm_file, ffi_file, ffi_lib = proc.stdout.split()[-3:]
    assert tvm_file == str(main_tree / "python/tvm/__init__.py")
    assert Path(ffi_file).is_relative_to(site)
    assert Path(ffi_lib).samefile(stored["libtvm_ffi.so"]["path"])
    # tk doctor in that shell: nothing failed, nothing to warn about (tk env's own variables,
    # the tvm-ffi it shadows, a runtime-only build's missing LLVM are all as asked).
    proc = subprocess.run(["bash", "-c", f'{exports.stdout}\nexport PYTHONPATH="$PYTHONPATH:'
                           f'{Path(__file__).parent.parent}"\nexec {sys.executable} -m toolkit '
                           "doctor --json"], capture_output=True, text=True,
                          env={**env, **cache}, cwd=tmp_path)
    rows = json.loads(proc.stdout)["checks"]
    assert [(c["name"], c["detail"]) for c in rows if c["status"] != "pass"] == []
    # Again: served from the store; ls shows sizes; rm frees the build's own files.
    again = tk("build", "-C", str(main_tree), "--runtime-only", "--json", env=cache)
    assert again.returncode == 0 and json.loads(again.stdout)["from_store"] is True
    ls = json.loads(tk("build", "ls", "--json", env=cache).stdout)
    row = next(b for b in ls["builds"] if b["id"] == m["id"])
    assert row["bytes"] >= sum(a["size"] for a in m["artifacts"])


@pytest.mark.slow
def test_container_build_of_the_real_tree(tk, tmp_path, main_tree, cache):
    from toolkit.builds import image
    from toolkit.errors import TkError, UserError

    try:
        engine = image.connect()
    except UserError as e:
        pytest.skip(f"no Docker engine: {e}")
    try:  # tk/debian:bookworm, made once (kept when it is there: .ci/run makes it)
        image.bootstrap(client=engine)
    except TkError as e:  # not root, no debootstrap, no mirror reachable
        pytest.skip(f"no base image can be made here: {e}")
    tree = copy_tree(main_tree, tmp_path / "tvm")
    r = tk("build", "-C", str(tree), "--runtime-only", "--backend", "docker", "--json",
           env=cache, timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads(r.stdout)
    assert m["backend"] == "docker" and m["image_id"]
    names = {a["name"] for a in m["artifacts"]}
    assert {"libtvm_runtime.so", "libtvm_ffi.so"} <= names
    written = {p.name for p in Path(m["build_dir"]).rglob("lib*.so*")
               if LIBRARY.match(p.name) and "CMakeFiles" not in p.parts}
    assert written == names
    assert m["check"]["ok"], m["check"]
