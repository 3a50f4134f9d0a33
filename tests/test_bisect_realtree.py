"""Commit bisection's build keys and submodules on a history made from the real apache/tvm
tree ($TK_FIXTURES/tvm-main.tar.xz): tvm-ffi as a real submodule (a name with a slash, as
TVM's), commits that touch Python, C++ and the submodule. No build: only what decides which
commits share a build and which can be checked out without a network."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from toolkit.bisect.worktree import Untestable, Worktree, open_repo, uninitialised
from toolkit.builds import source

FIXTURES = os.environ.get("TK_FIXTURES")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not FIXTURES, reason="TK_FIXTURES is not set (the directory holding "
                       "tvm-main.tar.xz; .ci/run sets it)"),
]
FFI = "3rdparty/tvm-ffi"
OPTIONAL = ["3rdparty/OpenCL-Headers", "3rdparty/cutlass", "3rdparty/cutlass_fpA_intB_gemm",
            "3rdparty/libflash_attn"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "user.name=tk",
                           "-c", "user.email=t@tk.invalid", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str], str]:
    tarball = Path(FIXTURES or "") / "tvm-main.tar.xz"
    if not tarball.is_file():
        pytest.skip(f"{tarball} is missing")
    tmp = tmp_path_factory.mktemp("realhist")
    with tarfile.open(tarball) as tf:
        tf.extractall(tmp, filter="tar") if hasattr(tarfile, "data_filter") else tf.extractall(tmp)
    repo = tmp / "tvm-main"
    ffi = tmp / "tvm-ffi"
    shutil.move(str(repo / FFI), ffi)
    git(ffi, "init", "-q", "-b", "main")
    # tvm-ffi's .gitmodules names dlpack and libbacktrace, whose content the tarball holds as
    # plain files: committed so, they are no submodules.
    commit(ffi, "tvm-ffi")
    git(repo, "init", "-q", "-b", "main")
    # apache/tvm's .gitmodules as it is; the optional submodules (empty directories in the
    # tarball) recorded as gitlinks nobody initialised, as in a clone without --recursive.
    for i, path in enumerate(OPTIONAL, 1):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{str(i) * 40},{path}")
    git(repo, "submodule", "add", "-q", "--force", str(ffi), FFI)
    shas = [commit(repo, "base: apache/tvm main")]
    init = repo / "python" / "tvm" / "__init__.py"
    init.write_text(init.read_text() + "\n# a Python-only change\n")
    shas.append(commit(repo, "python only"))
    cc = next((repo / "src" / "runtime").glob("*.cc"))
    cc.write_text(cc.read_text() + "\n// a C++ change\n")
    shas.append(commit(repo, "C++"))
    # tvm-ffi moves upstream; the user's clone of it never fetched that commit.
    (ffi / "NEWS").write_text("later\n")
    later = commit(ffi, "later")
    git(repo, "update-index", "--cacheinfo", f"160000,{later},{FFI}")
    git(repo, "commit", "-q", "-m", "bump tvm-ffi")
    shas.append(git(repo, "rev-parse", "HEAD"))
    return repo, shas, later


def test_build_keys_follow_what_builds(history):
    repo, shas, _ = history
    keys = [source.tree_key(repo / ".git", sha) for sha in shas]
    assert keys[0] == keys[1]  # Python only: the same build serves both
    assert keys[2] != keys[1]  # C++
    assert keys[3] != keys[2]  # the submodule's recorded commit is part of the key
    assert source.tree_keys(repo / ".git", shas) == dict(zip(shas, keys, strict=True))


def test_submodules_come_from_the_local_clone_and_are_never_fetched(history, tmp_path):
    repo, shas, later = history
    assert uninitialised(open_repo(repo), shas) == OPTIONAL  # tvm-ffi's: initialised
    wt = Worktree(open_repo(repo), tmp_path / "worktree")
    try:
        wt.checkout(shas[2])
        assert (wt.path / FFI / "include" / "tvm" / "ffi" / "c_api.h").is_file()
        assert (wt.path / FFI / "3rdparty" / "dlpack" / "include" / "dlpack" / "dlpack.h").is_file()
        for path in OPTIONAL:  # left as the user's checkout has them: empty
            assert not any((wt.path / path).iterdir())
        with pytest.raises(Untestable, match="never fetches"):
            wt.checkout(shas[3])  # its tvm-ffi commit is upstream only, reachable by file://
        clone = repo / ".git" / "modules" / FFI
        assert subprocess.run(["git", "-C", str(clone), "cat-file", "-e", later]).returncode
    finally:
        wt.remove()
