"""Ports on 127.0.0.1 for the tests' own servers (TVM RPC, a registry, redis)."""

from __future__ import annotations

import socket
import subprocess
import time

import pytest


def free_port() -> int:
    """A port nothing listens on now (the server the test starts takes it next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    """Whether something accepts connections on the port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_listening(proc: subprocess.Popen, port: int, what: str, timeout_s: float) -> bool:
    """Wait until something answers on ``port``: True then, False when ``proc`` exited
    first (the caller says why); a server still silent at the deadline fails the test."""
    deadline = time.monotonic() + timeout_s
    while not answers(port):
        if proc.poll() is not None:
            return False
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not listen on {port} within {timeout_s} s")
        time.sleep(0.1)
    return True
