"""A remote peer that dies or stops answering ends the command in one line, within a bound.

Real TVM RPC servers and trackers from the wheel on 127.0.0.1 (``rpc_helpers``), killed or
stopped mid-run, and a server that accepts connections and never sends a byte. Each case
runs ``tk`` as a user would, in the background, and times it: without the bounds each of
these waited for ever. Small bounds (``--rpc-timeout``, ``--rpc-probe``) keep them short.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from net_helpers import free_port
from rpc_helpers import (
    children,
    silent_server,
    throttled_proxy,
    tvm_process,
    wait_for_key,
)
from workload_files import te_matmul

pytest.importorskip("tornado", reason="TVM's RPC tracker needs tornado (pip install tornado)")
pytest.importorskip("cloudpickle", reason="TVM's RPC server and MetaSchedule's runner need "
                                          "cloudpickle (pip install cloudpickle)")

TK_TIMEOUT_S = 300  # what a test waits for tk at most: well past every bound below
EXPLAIN = "  explain: tk explain --last"


def start_tk(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``tk ARGS`` from this checkout in the background, as a user's shell would start it."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("TK_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen) -> tuple[int, str, float]:
    """Exit status, stderr and seconds from now until ``proc`` ended."""
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=TK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"tk still waited {TK_TIMEOUT_S} s later")
    return proc.returncode, err, time.monotonic() - start


def error_line(stderr: str) -> str:
    """The one line a failure printed; anything else but tk's explain pointer fails."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and ln != EXPLAIN]
    assert len(lines) == 1 and lines[0].startswith("tk: error: "), stderr
    return lines[0]


def wait_until(condition, what: str, timeout: float = TK_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout} s")
        time.sleep(0.2)


def profiling_started(server: subprocess.Popen) -> list[int]:
    """Once tk has uploaded the kernels it times alone (so it is timing), the processes of
    the server: its command, its listener, the worker serving tk's session."""
    found: list[int] = []

    def uploaded() -> bool:
        listeners = children(server.pid)
        workers = [w for pid in listeners for w in children(pid)]
        for worker in workers:
            try:
                if (Path(f"/proc/{worker}/cwd") / "tk_kernels.so").exists():
                    found[:] = [server.pid, *listeners, worker]
                    return True
            except OSError:
                continue
        return False

    wait_until(uploaded, "the upload of tk_kernels.so")
    return found


def test_a_server_killed_mid_profile_ends_it_in_one_line():
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        tk = start_tk("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n", "5000",
                      "--rpc-probe", "0.5")
        profiling_started(server)
        os.killpg(server.pid, signal.SIGKILL)  # the command, its listener, its session
        code, err, seconds = finish(tk)
    assert code == 1, err
    assert error_line(err).startswith(
        f"tk: error: the RPC server at 127.0.0.1:{port} stopped answering (it closed the "
        f"connection; its port refuses connections) while profiling builtin:mlp (")
    assert seconds < 60, seconds


def test_an_orphaned_session_worker_that_never_answers_is_cut_at_the_bound():
    # The server's command and listener are killed; the worker serving tk's session is left
    # holding the session's socket (and the listening one) open, stopped: no reply comes.
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        tk = start_tk("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n", "5000",
                      "--rpc-timeout", "6", "--rpc-probe", "1")
        command, listener, worker = profiling_started(server)
        os.kill(worker, signal.SIGSTOP)
        os.kill(listener, signal.SIGKILL)
        os.kill(command, signal.SIGKILL)
        try:
            code, err, seconds = finish(tk)
        finally:
            os.kill(worker, signal.SIGKILL)
    assert code == 1, err
    line = error_line(err)
    assert line.startswith(f"tk: error: the RPC server at 127.0.0.1:{port} stopped answering "
                           f"(no reply in 6 s, the --rpc-timeout; "), line
    assert ") while profiling builtin:mlp (" in line
    assert seconds < 60, seconds


# A remote tensor's free is a remote call, made from its destructor with the GIL held: no
# thread of the process can run while it waits.
FREE_ON_A_STOPPED_SERVER = """
import os, signal, sys, time
import numpy as np
import tvm
from toolkit.stack import remote
from toolkit.watchdog import Bounds, PeerLost

address, worker_of = sys.argv[1], sys.argv[2]
with remote.connect(remote.Remote(rpc=address, bounds=Bounds(timeout=3, probe=0.5))) as session:
    tensor = tvm.runtime.tensor(np.ones(16, "float32"), session.rpc.cpu(0))
    print("stop", flush=True)
    assert sys.stdin.readline() == "stopped\\n"
    start = time.monotonic()
    try:
        with session.step("freeing a remote tensor"):
            del tensor
    except PeerLost as e:
        print(f"{time.monotonic() - start:.1f} s: {e}", flush=True)
"""


def test_a_wait_that_holds_the_gil_is_cut_all_the_same():
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
        proc = subprocess.Popen([sys.executable, "-c", FREE_ON_A_STOPPED_SERVER,
                                 f"127.0.0.1:{port}", str(server.pid)], env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout.readline() == "stop\n"
        (listener,) = children(server.pid)
        (worker,) = children(listener)
        os.kill(worker, signal.SIGSTOP)
        proc.stdin.write("stopped\n")
        proc.stdin.flush()
        try:
            out, _ = proc.communicate(timeout=120)
        finally:
            proc.kill()
            os.kill(worker, signal.SIGKILL)
    took, _, message = out.strip().partition(" s: ")
    assert message.startswith(f"the RPC server at 127.0.0.1:{port} stopped answering (no reply "
                              f"in 3 s, the --rpc-timeout; its port "), out
    assert message.endswith(") while freeing a remote tensor"), out
    assert float(took) < 30


@pytest.mark.slow
def test_a_long_profile_on_a_live_server_is_not_cut_short():
    # Rounds come a few seconds' worth per call: a run many times the bound goes through.
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port):
        start = time.monotonic()
        tk = start_tk("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n", "500",
                      "--warmup", "1", "--rpc-timeout", "3", "--rpc-probe", "0.5", "--json")
        out, err = tk.communicate(timeout=TK_TIMEOUT_S)
        seconds = time.monotonic() - start
    assert tk.returncode == 0, err
    report = json.loads(out)
    assert report["header"]["repeat"] == 500
    assert len(report["runs_us"]["(end to end)"]) == 500
    assert seconds > 4 * 3, seconds  # 500 rounds of >= 10 ms, per kernel and end to end


BOUNDS = ["--rpc-timeout", "3", "--rpc-probe", "0.5"]
BOUNDS_ENV = {"TK_RPC_TIMEOUT": "3", "TK_RPC_PROBE": "0.5"}  # the same, from the environment


@pytest.mark.parametrize("command", [
    ["run", "builtin:mlp", "--rpc", "{address}", *BOUNDS],
    ["profile", "builtin:mlp", "--rpc", "{address}", *BOUNDS],
    ["run", "builtin:mlp", "--tracker", "{address}", "--key", "tk-cpu"],
    ["tune", "{matmul}", "--tracker", "{address}", "--key", "tk-cpu", "-o", "{db}"],
])
def test_a_peer_that_accepts_and_never_answers(command, tmp_path):
    what = "tracker" if "--tracker" in command else "server"
    with silent_server() as port:
        address = f"127.0.0.1:{port}"
        words = [w.format(address=address, matmul=te_matmul(tmp_path), db=tmp_path / "db")
                 for w in command]
        code, err, seconds = finish(start_tk(*words, env=BOUNDS_ENV if what == "tracker"
                                             else None))
    assert code == 1, err
    assert error_line(err).startswith(
        f"tk: error: the RPC {what} at {address} stopped answering (no reply in 3 s, the "
        f"--rpc-timeout; its port still accepts connections) while "), err
    assert not (tmp_path / "db").exists()  # refused before anything was written
    assert seconds < 120, seconds  # tk's start (importing TVM) and the 3 s bound


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["tracker killed", "server stopped"])
def test_a_peer_lost_during_tuning(fault, tmp_path):
    tracker_port = free_port()
    tracker = f"127.0.0.1:{tracker_port}"
    db = tmp_path / "db"
    with tvm_process("tvm.exec.rpc_tracker", port=tracker_port) as tracker_proc, \
            tvm_process("tvm.exec.rpc_server", "--tracker", tracker, "--key", "tk-cpu",
                        port=free_port()) as server:
        wait_for_key(tracker_port, "tk-cpu")
        tk = start_tk("tune", str(te_matmul(tmp_path)), "--tracker", tracker, "--key",
                      "tk-cpu", "--trials", "8", "-o", str(db), "--rpc-probe", "0.5",
                      "--rpc-timeout", "10")
        wait_until(db.exists, "the tuning's start")  # the tracker was asked and answered
        if fault == "tracker killed":
            os.killpg(tracker_proc.pid, signal.SIGKILL)
        else:  # it stays registered with the tracker, and takes connections it never serves
            os.killpg(server.pid, signal.SIGSTOP)
        code, err, seconds = finish(tk)
    assert code == 1, err
    lines = [ln for ln in err.splitlines() if ln.startswith("tk: ")]
    if fault == "tracker killed":
        assert lines == [f"tk: error: the RPC tracker at {tracker} stopped answering (its port "
                         f"refuses connections) while measuring tuning candidates on 'tk-cpu' "
                         f"servers"], err
    else:
        assert lines == [f"tk: error: a 'tk-cpu' server leased from the RPC tracker at "
                         f"{tracker} stopped answering (no reply in 10 s, the --rpc-timeout; "
                         f"the RPC tracker at {tracker}: its port still accepts connections) "
                         f"while measuring tuning candidates on 'tk-cpu' servers"], err
    assert seconds < 240, seconds  # the batch's builds (minutes when busy), then the bound


def test_a_remote_failure_repeats_the_remote_and_run_options(tk, tmp_path):
    # Inputs of the wrong dtype: the server's VM refuses them, an error TVM sends back.
    inputs = tmp_path / "f64.npz"
    np.savez(inputs, x=np.ones((1, 784), dtype="float64"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    with tvm_process("tvm.exec.rpc_server", port=port):
        result = tk("profile", "builtin:mlp", "--rpc", address, "-n", "3", "--warmup", "1",
                    "--inputs", str(inputs), "--rpc-timeout", "120", timeout=TK_TIMEOUT_S)
        assert result.returncode == 1, result.stderr
        first, repro = result.stderr.splitlines()[:2]
        assert first.startswith(f"tk: error: profiling builtin:mlp on cpu:0 at {address} "
                                f"failed: "), result.stderr
        words = shlex.split(repro.removeprefix("  reproduce: "))
        assert words[:3] == ["tk", "--debug", "profile"]
        line = " ".join(words)
        for option in (f"--rpc {address}", "-n 3", "--warmup 1", f"--inputs {inputs}",
                       "--rpc-timeout 120", "--entry forward"):
            assert option in line, line
        again = tk(*words[1:], timeout=TK_TIMEOUT_S)  # it reproduces (--debug: a traceback)
        assert again.returncode == 1
        assert first.removeprefix("tk: error: ") in again.stderr, again.stderr[-2000:]
        ran = tk("run", "builtin:mlp", "--rpc", address, "--inputs", str(inputs),
                 timeout=TK_TIMEOUT_S)
    assert ran.returncode == 1, ran.stderr
    assert f"running builtin:mlp on cpu:0 at {address} failed: " in ran.stderr
    repro = ran.stderr.split("reproduce: ", 1)[1].splitlines()[0]
    assert f"--inputs {inputs}" in repro and f"--rpc {address}" in repro, repro


def watchdogs(port: int) -> list[int]:
    """The live outside watchdogs (``python -m toolkit.watchdog``) following port ``port``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if b"toolkit.watchdog" in argv and str(port).encode() in argv and state != b"Z":
            found.append(int(pid))
    return found


@pytest.mark.parametrize("ending", ["finished", "SIGINT", "SIGTERM", "SIGKILL"])
def test_no_watchdog_outlives_tk(ending):
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        tk = start_tk("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}",
                      "-n", "3" if ending == "finished" else "5000")
        if ending != "finished":
            profiling_started(server)
            assert len(watchdogs(port)) == 1  # what the test looks for is there to find
            tk.send_signal(getattr(signal, ending))
        code, err, _ = finish(tk)
        # The sweeper ends what a killed tk left, a moment after it died.
        wait_until(lambda: not watchdogs(port), "the watchdog's exit", timeout=10)
    assert code == {"finished": 0, "SIGINT": 130, "SIGTERM": 143, "SIGKILL": -9}[ending], err
    assert "Traceback" not in err, err


def test_time_a_watchdog_was_stopped_is_not_time_without_a_reply():
    # A watchdog looks every TICK_S; a gap of seconds between two looks is this process
    # stopped (Ctrl-Z stops tk and its watchdog alike), and the peer had no turn to answer.
    from toolkit.watchdog import ACCEPTS, TICK_S, Bounds, Verdicts

    verdicts = Verdicts(Bounds(timeout=2, probe=60), lambda: ACCEPTS)
    since = time.monotonic()
    assert verdicts.check(since) is None
    time.sleep(3)  # stopped: no look at all
    assert verdicts.check(since) is None
    deadline = time.monotonic() + 10
    while (verdict := verdicts.check(since)) is None and time.monotonic() < deadline:
        time.sleep(TICK_S)  # waiting, and looking: the bound runs
    assert verdict == (True, ACCEPTS)
    assert verdicts.why(*verdict) == f"no reply in 2 s, the --rpc-timeout; {ACCEPTS}"


def test_a_slow_upload_is_progress_not_a_stall():
    # Through a slow link (a proxy that passes tk's bytes on at 128 KiB/s), sending the
    # parameters (fc1's weight alone is 784 KiB, one call) takes many times the bound: bytes
    # go through all along, and the run is not cut.
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port), \
            throttled_proxy(port, rate=128 * 1024) as proxy:
        code, err, _ = finish(start_tk("run", "builtin:mlp", "--rpc", f"127.0.0.1:{proxy.port}",
                                       "--rpc-timeout", "2", "--rpc-probe", "0.5"))
    assert code == 0, err
    # What the test claims: one stretch of sending lasted longer than the bound.
    gaps = [b[0] - a[0] for a, b in zip(proxy.sent, proxy.sent[1:])]
    assert max(gaps) < 2, max(gaps)  # it was steady...
    assert proxy.sent[-1][0] - proxy.sent[0][0] > 3 * 2  # ...and long
