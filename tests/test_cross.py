"""Cross-compiling: aarch64 code linked by Debian's cross toolchain (gcc-aarch64-linux-gnu).

Running the result needs a TVM runtime built for aarch64 (a wheel for aarch64 Python, under
qemu-user or on the device): not installable here, so these tests check what was produced
and that tk refuses to load it on this machine, pointing at --rpc; remote.py runs it once an
aarch64 RPC server exists.
"""

from __future__ import annotations

import json
import platform
import shutil

import pytest
from workload_files import te_matmul

from toolkit.tvm_side import stack

CROSS_CC = "aarch64-linux-gnu-gcc"
pytestmark = [
    pytest.mark.skipif(shutil.which(CROSS_CC) is None,
                       reason=f"no {CROSS_CC}: apt-get install gcc-aarch64-linux-gnu "
                              f"libc6-dev-arm64-cross"),
    pytest.mark.skipif(platform.machine() == "aarch64", reason="this machine is aarch64"),
]
AARCH64 = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon"


@pytest.mark.parametrize("make", ["builtin", "tir"])
def test_aarch64_library_is_linked_by_the_cross_compiler(tk, tmp_path, make):
    source = "builtin:mlp" if make == "builtin" else str(te_matmul(tmp_path))
    lib = tmp_path / "arm.so"
    result = tk("compile", source, "--target", AARCH64, "-o", str(lib), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cross_compiler"] == CROSS_CC  # picked from the mtriple
    assert stack.elf_machine(lib) == "aarch64"
    assert (tmp_path / "arm.params.npz").exists()
    ran = tk("run", str(lib))
    assert ran.returncode == 2
    assert "holds aarch64 code and this machine is x86_64" in ran.stderr


def test_named_host_target_and_compiler(tk, tmp_path):
    # A device target whose host is aarch64: the host code is what gets cross-linked.
    lib = tmp_path / "c.so"
    result = tk("compile", str(te_matmul(tmp_path)), "--target", "c",
                "--host", "llvm -mtriple=aarch64-linux-gnu", "--cc", CROSS_CC,
                "-o", str(lib), "--json")
    assert result.returncode == 0, result.stderr
    assert stack.elf_machine(lib) == "aarch64"


def test_foreign_triple_without_a_cross_compiler_names_the_flag(tk, tmp_path):
    result = tk("compile", "builtin:mlp", "--target", "llvm -mtriple=riscv64-linux-gnu",
                "-o", str(tmp_path / "rv.so"))
    if shutil.which("riscv64-linux-gnu-gcc"):
        pytest.skip("a riscv64 cross compiler is installed")
    assert result.returncode == 2
    assert "code for riscv64-linux-gnu needs a cross compiler to link: name it with --cc" \
        in result.stderr


def test_unknown_cc_is_refused(tk, tmp_path):
    result = tk("compile", "builtin:mlp", "--cc", "no-such-gcc", "-o", str(tmp_path / "m.so"))
    assert result.returncode == 2 and "--cc no-such-gcc: no such compiler on PATH" in result.stderr
