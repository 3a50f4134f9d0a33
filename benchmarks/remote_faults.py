"""How long tk takes to give up on an RPC server or tracker that dies or stops answering, this
checkout against a baseline revision, side by side: each fault injected into a real TVM RPC
server or tracker on 127.0.0.1 (the faults tests/test_remote_faults.py checks), each tree's
``tk`` timed from the fault to its exit.

    python benchmarks/remote_faults.py [--baseline e6747a2] [--cap 150] [--only NAME ...]

Both trees run with ``TK_RPC_TIMEOUT=20 TK_RPC_PROBE=2`` (a baseline without the bounds
ignores them). A tk still running at ``--cap`` seconds (``--cap`` + 90 for tuning) is
stopped with SIGTERM and shown as "still waiting". Per fault and tree: exit status, seconds
from the fault to the end, tk's CPU seconds (the client, its workers included), and its
first "tk:" lines. The machine's load (``os.getloadavg``) is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from rpc_helpers import children, free_port, silent_server, tvm_process, wait_for_key  # noqa: E402
from workload_files import te_matmul  # noqa: E402

BOUNDS = {"TK_RPC_TIMEOUT": "20", "TK_RPC_PROBE": "2"}


class Tree:
    def __init__(self, name: str, path: Path, work: Path) -> None:
        self.name, self.path, self.work = name, path, work
        work.mkdir(parents=True, exist_ok=True)

    def start(self, *args: str) -> subprocess.Popen:
        env = {**os.environ, **BOUNDS, "PYTHONPATH": str(self.path)}
        env.pop("TK_DEBUG", None)
        return subprocess.Popen([sys.executable, "-m", "toolkit", *args], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.work)


def finish(tree: Tree, proc: subprocess.Popen, cap: float, fault: str) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=cap)
        code = str(proc.returncode)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)  # tk's guard ends its worker's session
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        code = "still waiting"
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in err.splitlines() if ln.startswith(("tk:", "  reproduce:"))][:2]
    print(f"{fault:58} {tree.name:22} {code:>13} {seconds:8.1f} {cpu:6.1f}  "
          f"{' | '.join(lines)}", flush=True)


def uploaded(server: subprocess.Popen) -> tuple[int, int, int]:
    """Once tk has uploaded the kernels it times alone: the server's command, listener and
    the worker serving tk's session."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        for listener in children(server.pid):
            for worker in children(listener):
                try:
                    if (Path(f"/proc/{worker}/cwd") / "tk_kernels.so").exists():
                        return server.pid, listener, worker
                except OSError:
                    continue
        time.sleep(0.2)
    sys.exit("tk never uploaded its kernels")


def silent_rpc(tree: Tree, cap: float) -> None:
    with silent_server() as port:
        finish(tree, tree.start("run", "builtin:mlp", "--rpc", f"127.0.0.1:{port}"), cap,
               "server accepts, never answers: run --rpc")


def silent_tracker(tree: Tree, cap: float) -> None:
    with silent_server() as port:
        finish(tree, tree.start("run", "builtin:mlp", "--tracker", f"127.0.0.1:{port}",
                                "--key", "tk-cpu"), cap,
               "tracker accepts, never answers: run --tracker")


def server_killed(tree: Tree, cap: float) -> None:
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        tk = tree.start("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n", "5000")
        uploaded(server)
        os.killpg(server.pid, signal.SIGKILL)
        finish(tree, tk, cap, "server killed (all its processes) mid-profile -n 5000")


def worker_orphaned(tree: Tree, cap: float) -> None:
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port) as server:
        tk = tree.start("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n", "5000")
        command, listener, worker = uploaded(server)
        os.kill(worker, signal.SIGSTOP)
        os.kill(listener, signal.SIGKILL)
        os.kill(command, signal.SIGKILL)
        try:
            finish(tree, tk, cap, "server killed, its session worker stopped: profile")
        finally:
            os.kill(worker, signal.SIGKILL)


def tracker_killed(tree: Tree, cap: float) -> None:
    tracker_port = free_port()
    tracker = f"127.0.0.1:{tracker_port}"
    db = tree.work / "db"
    subprocess.run(["rm", "-rf", str(db)], check=True)
    with tvm_process("tvm.exec.rpc_tracker", port=tracker_port) as tracker_proc, \
            tvm_process("tvm.exec.rpc_server", "--tracker", tracker, "--key", "tk-cpu",
                        port=free_port()):
        wait_for_key(tracker_port, "tk-cpu")
        tk = tree.start("tune", str(te_matmul(tree.work)), "--tracker", tracker, "--key",
                        "tk-cpu", "--trials", "8", "-o", str(db))
        while not db.exists():
            time.sleep(0.2)
        os.killpg(tracker_proc.pid, signal.SIGKILL)
        finish(tree, tk, cap + 90, "tracker killed during tune --tracker --trials 8")


def remote_failure(tree: Tree, cap: float) -> None:
    inputs = tree.work / "f64.npz"
    np.savez(inputs, x=np.ones((1, 784), dtype="float64"))
    port = free_port()
    with tvm_process("tvm.exec.rpc_server", port=port):
        finish(tree, tree.start("profile", "builtin:mlp", "--rpc", f"127.0.0.1:{port}", "-n",
                                "3", "--warmup", "1", "--inputs", str(inputs)), cap,
               "the server's VM refuses the inputs: reproduce line")


FAULTS: dict[str, Callable[[Tree, float], None]] = {
    "silent_rpc": silent_rpc, "silent_tracker": silent_tracker, "server_killed": server_killed,
    "worker_orphaned": worker_orphaned, "tracker_killed": tracker_killed,
    "remote_failure": remote_failure,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="e6747a2", help="git revision to compare with")
    parser.add_argument("--cap", type=float, default=150, help="seconds a tk may take")
    parser.add_argument("--only", nargs="*", choices=sorted(FAULTS), default=sorted(FAULTS))
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="tk-faults-") as tmp:
        baseline = Path(tmp) / "baseline"
        baseline.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.baseline],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        trees = [Tree(f"baseline {args.baseline}", baseline, Path(tmp) / "work-baseline"),
                 Tree("this checkout", REPO, Path(tmp) / "work-this")]
        print(f"{'fault':58} {'tree':22} {'exit':>13} {'seconds':>8} {'cpu s':>6}  first lines")
        for name in (n for n in FAULTS if n in args.only):
            for tree in trees:
                FAULTS[name](tree, args.cap)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
