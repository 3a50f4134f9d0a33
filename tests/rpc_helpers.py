"""A real TVM RPC tracker and servers from the wheel on 127.0.0.1, for the remote tests.

Each runs as ``python -m tvm.exec.rpc_*`` in its own process group, is waited for with a
deadline, and is killed (group and all: servers fork per session) when the test ends - unless
a test killed it first. TVM's Python server is three generations of processes: the command,
the listener it starts (a ``tvm.exec.popen_worker``) and, per session, a worker the listener
forks; a tracker is the command and its listener.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil
import pytest
from net_helpers import wait_listening

START_TIMEOUT_S = 90  # importing TVM in a fresh process is slow on a loaded 2-core machine


@contextmanager
def listening(command: list[str], port: int, what: str,
              **popen: object) -> Iterator[subprocess.Popen]:
    """Start ``command`` (a server that listens on ``port``) and wait until it answers."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, text=True, **popen)
    try:
        if not wait_listening(proc, port, what, START_TIMEOUT_S):
            pytest.skip(f"{what} did not start: {proc.stderr.read()[-300:]}")
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):  # a test killed the group already
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@contextmanager
def tvm_process(module: str, *args: str, port: int) -> Iterator[subprocess.Popen]:
    """``python -m module`` listening on 127.0.0.1:``port``; yields the command's process."""
    with listening([sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(port),
                    "--port-end", str(port + 1), *args], port, module) as proc:
        yield proc


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return [c.pid for c in psutil.Process(pid).children()
            if c.status() != psutil.STATUS_ZOMBIE]


@contextmanager
def silent_server() -> Iterator[int]:
    """A port on 127.0.0.1 whose server accepts every connection and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):  # the listener closed: the test is over
            while True:
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for conn in held:
            conn.close()


def wait_for_key(tracker_port: int, key: str) -> None:
    """Until a server has registered ``key`` with the tracker (it retries every few s)."""
    from tvm import rpc

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        queues = rpc.connect_tracker("127.0.0.1", tracker_port).summary()["queue_info"]
        if key in queues:
            return
        time.sleep(0.5)
    pytest.fail(f"no server registered {key!r} with the tracker within {START_TIMEOUT_S} s")


class ThrottledProxy:
    """A TCP proxy on 127.0.0.1 in front of ``port``: what clients send reaches the server at
    ``rate`` bytes a second (a slow link), what it answers comes back at once. ``sent``
    records when each chunk went on, and its size."""

    CHUNK = 1024

    def __init__(self, port: int, rate: float) -> None:
        self.target, self.rate = port, rate
        self.sent: list[tuple[float, int]] = []  # (monotonic time, bytes) per chunk sent on
        self._listener = socket.socket()
        # A small receive buffer: the client's bytes are acknowledged as this proxy reads
        # them, not all at once into a large buffer.
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * self.CHUNK)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        for sock in self._open:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # closed: the test is over
            while True:
                client = self._listener.accept()[0]
                server = socket.create_connection(("127.0.0.1", self.target))
                self._open += [client, server]
                for src, dst, slow in ((client, server, True), (server, client, False)):
                    threading.Thread(target=self._pump, args=(src, dst, slow),
                                     daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, slow: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(self.CHUNK if slow else 1 << 16):
                if slow:
                    time.sleep(len(data) / self.rate)
                    self.sent.append((time.monotonic(), len(data)))
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


@contextmanager
def throttled_proxy(port: int, rate: float) -> Iterator[ThrottledProxy]:
    proxy = ThrottledProxy(port, rate)
    try:
        yield proxy
    finally:
        proxy.close()
