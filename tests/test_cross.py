"""Cross-compiling: aarch64 code linked by Debian's cross toolchain (gcc-aarch64-linux-gnu).

Running the result needs a TVM runtime built for aarch64. The tests check what was produced
and that tk refuses to load it on this machine, pointing at --rpc; and, given an aarch64
``tvm_rpc`` server (TVM's C++ RPC app, ``USE_CPP_RPC``) in ``TK_AARCH64_RUNTIME``, run it
there under qemu-user through ``--rpc``. Building that runtime takes minutes (docs/tk-run.md
says how), so the tests take a built one and skip, saying so, without it.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from pathlib import Path

import pytest
from net_helpers import free_port
from rpc_helpers import listening
from workload_files import te_matmul

from toolkit import stack

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


SYSROOT = Path("/usr/aarch64-linux-gnu")  # Debian's aarch64 libc and libstdc++ (-cross)


@pytest.fixture(scope="module")
def qemu_server(tmp_path_factory):
    """TVM's C++ RPC server built for aarch64, running under qemu-user on 127.0.0.1."""
    runtime = os.environ.get("TK_AARCH64_RUNTIME")
    if not runtime:
        pytest.skip("TK_AARCH64_RUNTIME unset: no aarch64 TVM runtime with tvm_rpc to run "
                    "under qemu (docs/tk-run.md says how to build one)")
    server = Path(runtime) / "tvm_rpc"
    if not server.is_file() or stack.elf_machine(server) != "aarch64":
        pytest.skip(f"TK_AARCH64_RUNTIME={runtime} holds no aarch64 tvm_rpc")
    qemu = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
    if qemu is None:
        pytest.skip("no qemu-aarch64: apt-get install qemu-user")
    if not (SYSROOT / "lib" / "libstdc++.so.6").exists():
        pytest.skip(f"no aarch64 libstdc++ in {SYSROOT}: apt-get install libstdc++6-arm64-cross")
    port = free_port()
    libraries = f"{runtime}:{runtime}/lib"  # a build directory keeps them in lib/
    command = [qemu, "-L", str(SYSROOT), "-E", f"LD_LIBRARY_PATH={libraries}", str(server),
               "server", "--host=127.0.0.1", f"--port={port}", f"--port-end={port + 1}"]
    with listening(command, port, "tvm_rpc under qemu-aarch64",
                   cwd=tmp_path_factory.mktemp("tvm_rpc")):
        yield f"127.0.0.1:{port}"


@pytest.mark.parametrize("make", ["tir", "builtin"])
def test_aarch64_library_runs_under_qemu_over_rpc(tk, tmp_path, qemu_server, make):
    source = "builtin:mlp" if make == "builtin" else str(te_matmul(tmp_path))
    lib = tmp_path / "arm.so"
    result = tk("compile", source, "--target", AARCH64, "-o", str(lib))
    assert result.returncode == 0, result.stderr
    ran = tk("run", str(lib), "--rpc", qemu_server, "--check", "--json", timeout=600)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["device"] == f"cpu:0 at {qemu_server}"
    assert report["check"]["against"] == "reference" and report["check"]["ok"]


def test_profile_of_aarch64_code_under_qemu(tk, qemu_server):
    # tvm_rpc has no Python: the remote profile stands on TVM's time_evaluator alone.
    result = tk("profile", "builtin:mlp", "--target", AARCH64, "--rpc", qemu_server, "-n", "2",
                "--warmup", "1", "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["header"]["device"] == f"cpu:0 at {qemu_server}"
    kernels = [r for r in report["rows"] if r["kind"] == "kernel"]
    assert {r["name"] for r in kernels} >= {"matmul", "matmul1"}
    assert all(r["median_us"] > 0 for r in kernels)
