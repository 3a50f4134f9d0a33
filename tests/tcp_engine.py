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
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"


def _relay(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(1 << 16):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def tcp_engine() -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` relayed to the local engine, while the context lasts."""
    listener = socket.create_server(("127.0.0.1", 0))
    path = engine_socket()

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed: the context is over
            engine = socket.socket(socket.AF_UNIX)
            engine.connect(path)
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=_relay, args=(a, b), daemon=True).start()

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
