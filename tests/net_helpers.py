"""Ports on 127.0.0.1 for the tests' own servers (TVM RPC, a registry, redis)."""

from __future__ import annotations

import socket


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
