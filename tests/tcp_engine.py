"""The local Docker engine reached over TCP, as an engine on another machine would be, and
trees it cannot see.

``DOCKER_HOST=tcp://...`` is what tells tk an engine cannot see this machine's files; a
forwarder from a loopback port to the engine's socket makes one here. Bytes are relayed as they
come, both ways, so the hijacked connections of attach and exec work as they do remotely.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"


def _relay(src: socket.socket, dst: socket.socket, cut: Callable[[bytes], None]) -> None:
    try:
        while data := src.recv(1 << 16):
            dst.sendall(data)
            cut(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def tcp_engine(cut_after: bytes | None = None, delay: float = 1.0) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` relayed to the local engine, while the context lasts.

    ``cut_after``: once a request holding these bytes has gone through (``b"/start"``: a
    container or exec started), wait ``delay`` seconds and sever every connection and stop
    listening - to tk, the engine is gone mid-build."""
    listener = socket.create_server(("127.0.0.1", 0))
    path = engine_socket()
    sockets: list[socket.socket] = []

    def sever() -> None:
        time.sleep(delay)
        listener.close()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def cut(data: bytes) -> None:
        if cut_after is not None and cut_after in data:
            threading.Thread(target=sever, daemon=True).start()

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed: the context is over
            engine = socket.socket(socket.AF_UNIX)
            engine.connect(path)
            sockets.extend((client, engine))
            threading.Thread(target=_relay, args=(client, engine, cut), daemon=True).start()
            threading.Thread(target=_relay, args=(engine, client, lambda _: None),
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def hidden_from_engine(script: str, hidden: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run the shell ``script`` in a mount namespace of its own where ``hidden`` is a fresh
    tmpfs: what it puts there exists for tk and not for the engine, so a container that
    mounted it would find it empty. ``$TK`` in the script runs tk from this checkout."""
    full_env = {**os.environ, **env, "TK": f"{sys.executable} -m toolkit",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    full_env.pop("TK_DEBUG", None)
    return subprocess.run(["unshare", "-m", "sh", "-ec", f"mount -t tmpfs tmpfs {hidden}\n{script}"],
                          env=full_env, capture_output=True, text=True, timeout=1200)


def mount_namespaces_or_reason() -> str | None:
    """Why ``hidden_from_engine`` cannot work here, or None."""
    if os.geteuid() != 0:
        return "a mount namespace with a tmpfs of its own needs root"
    proc = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                          capture_output=True, text=True)
    return None if proc.returncode == 0 else f"unshare -m fails here: {proc.stderr.strip()}"
