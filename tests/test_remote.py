"""Remote devices over TVM RPC: a real server and tracker from the wheel on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from net_helpers import free_port
from rpc_helpers import tvm_process, wait_for_key
from workload_files import te_matmul

pytest.importorskip("tornado", reason="TVM's RPC tracker needs tornado (pip install tornado)")


@pytest.fixture(scope="module")
def server():
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port):
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def tracker():
    tracker_port = free_port()
    with tvm_process("tvm.exec.rpc_tracker", port=tracker_port):
        address = f"127.0.0.1:{tracker_port}"
        with tvm_process("tvm.exec.rpc_server", "--tracker", address, "--key", "tk-cpu",
                         port=free_port()):
            wait_for_key(tracker_port, "tk-cpu")
            yield address


def test_run_and_check_on_rpc_server(tk, server):
    result = tk("run", "builtin:mlp", "--rpc", server, "--check", "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["device"] == f"cpu:0 at {server}"
    assert report["check"]["against"] == "reference" and report["check"]["ok"]


def test_tir_workload_and_library_over_tracker(tk, tracker, tmp_path):
    source = str(te_matmul(tmp_path))
    result = tk("run", source, "--tracker", tracker, "--key", "tk-cpu", "--check", "--json",
                timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["device"] == f"cpu:0 at tk-cpu@{tracker}"
    lib = tmp_path / "mm.so"
    assert tk("compile", source, "-o", str(lib)).returncode == 0
    result = tk("run", str(lib), "--tracker", tracker, "--key", "tk-cpu", "--check",
                timeout=300)
    assert result.returncode == 0, result.stderr
    assert "check against reference: OK" in result.stdout


def test_absent_remote_device_is_refused_before_compiling(tk, server):
    result = tk("run", "builtin:mlp", "--rpc", server, "--target", "cuda", timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().endswith(f"the RPC server at {server} has no cuda device 0")


def test_bad_remote_addresses_are_one_line_exit_2(tk, tracker, server):
    silent = f"127.0.0.1:{free_port()}"
    cases = [
        (["--rpc", silent], f"the RPC server at {silent} does not answer"),
        (["--rpc", "localhost"], "--rpc 'localhost': expected HOST:PORT"),
        (["--tracker", silent, "--key", "tk-cpu"], f"the RPC tracker at {silent} does not answer"),
        (["--tracker", tracker, "--key", "tk-gpu"],
         f"the tracker at {tracker} has no server with key 'tk-gpu' (keys: tk-cpu)"),
        (["--tracker", tracker], "--tracker needs --key"),
        (["--rpc", tracker], f"--rpc {tracker}: not a TVM RPC server"),
    ]
    for args, message in cases:
        result = tk("run", "builtin:mlp", *args, timeout=120)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and message in lines[0], (args, lines)


def test_profile_on_rpc_server_times_every_kernel_remotely(tk, server):
    result = tk("profile", "builtin:mlp", "--rpc", server, "-n", "3", "--warmup", "1",
                "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    header, summary = report["header"], report["summary"]
    assert header["device"] == f"cpu:0 at {server}" and header["remote"] == server
    assert header["method"] == "rpc time_evaluator"
    # The same kernels a local profile of the same compile finds, each timed over there.
    local = tk("profile", "builtin:mlp", "-n", "1", "--warmup", "0", "--json", timeout=300)
    assert local.returncode == 0, local.stderr
    local_kernels = {r["name"] for r in json.loads(local.stdout)["rows"] if r["kind"] == "kernel"}
    rows = {r["name"]: r for r in report["rows"]}
    assert set(rows) == local_kernels
    assert all(r["calls"] == 1 and r["median_us"] > 0 for r in rows.values())
    assert summary["e2e_median_us"] > 0 and len(report["runs_us"]["(end to end)"]) == 3


def test_profile_over_tracker_and_refusals(tk, tracker, server):
    result = tk("profile", "builtin:mlp", "--tracker", tracker, "--key", "tk-cpu", "-n", "2",
                "--warmup", "0", timeout=300)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert f"on cpu:0 at tk-cpu@{tracker} (llvm)" in first and "via rpc time_evaluator" in first
    absent = tk("profile", "builtin:mlp", "--rpc", server, "--target", "cuda", timeout=300)
    assert absent.returncode == 2
    assert absent.stderr.strip().endswith(f"the RPC server at {server} has no cuda device 0")
    silent = f"127.0.0.1:{free_port()}"
    refused = tk("profile", "builtin:mlp", "--rpc", silent, timeout=120)
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"tk: error: the RPC server at {silent} does not answer " \
                                     f"(Connection refused)"


def test_tune_measures_on_servers_the_tracker_leases(tk, tracker, tmp_path):
    db = tmp_path / "db"
    result = tk("tune", str(te_matmul(tmp_path)), "--tracker", tracker, "--key", "tk-cpu",
                "--trials", "2", "-o", str(db), "--json", timeout=1800)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["trials"] == 2 and report["tasks"] == 1
    if report["records"] == 0:
        pytest.skip("no candidate built and ran in time on this machine (busy?)")
    assert report["best_us"] > 0
