"""Real servers on 127.0.0.1 for the team-build tests: Debian's ``docker-registry`` (the
distribution registry) and ``redis-server``, each in a directory of the test's own, started and
killed by the test (never as system services), and a relay that makes the registry go away in
the middle of a blob.

A test that needs a binary that is absent skips, saying which package brings it.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import ctypes.util
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from net_helpers import free_port, wait_listening

START_TIMEOUT_S = 60


def need(binary: str, package: str) -> str:
    path = shutil.which(binary)
    if path is None:
        pytest.skip(f"{binary} is not installed (apt-get install {package})")
    return path


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    root: Path  # where it keeps its data

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def serving(argv: list[str], port: int, root: Path, what: str) -> Iterator[Server]:
    log = (root / "server.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                            start_new_session=True)
    server = Server(proc, port, root)
    try:
        if not wait_listening(proc, port, what, START_TIMEOUT_S):
            pytest.fail(f"{what} exited: {(root / 'server.log').read_text()[-500:]}")
        yield server
    finally:
        server.kill()
        log.close()


def bcrypt(password: str) -> str:
    """The bcrypt hash the registry's htpasswd file wants, from the system's libcrypt."""
    lib = ctypes.CDLL(ctypes.util.find_library("crypt") or "libcrypt.so.1")
    lib.crypt.restype = ctypes.c_char_p
    hashed = lib.crypt(password.encode(), b"$2b$05$" + b"tktesttktesttktesttkte")
    if not hashed or not hashed.startswith(b"$2b$"):
        pytest.skip("this libcrypt has no bcrypt (the registry's htpasswd needs it)")
    return hashed.decode()


@contextlib.contextmanager
def registry(root: Path, users: dict[str, str] | None = None,
             token: TokenService | None = None) -> Iterator[Server]:
    """Debian's docker-registry on a free port, storing under ``root``; ``users``: basic auth
    (htpasswd) with these names and passwords; ``token``: bearer tokens from that service."""
    binary = need("docker-registry", "docker-registry")
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = [
        "version: 0.1", "log:", "  level: warn", "storage:", "  filesystem:",
        f"    rootdirectory: {root / 'data'}", "  delete:", "    enabled: true", "http:",
        f"  addr: 127.0.0.1:{port}", "  secret: tk-test-upload-state",
    ]
    if users:
        (root / "htpasswd").write_text("".join(f"{u}:{bcrypt(p)}\n" for u, p in users.items()))
        config += ["auth:", "  htpasswd:", "    realm: tk-test",
                   f"    path: {root / 'htpasswd'}"]
    elif token:
        config += ["auth:", "  token:", f"    realm: {token.realm}",
                   f"    service: {token.service}", f"    issuer: {token.issuer}",
                   f"    rootcertbundle: {token.cert}"]
    (root / "config.yml").write_text("\n".join(config) + "\n")
    with serving([binary, "serve", str(root / "config.yml")], port, root,
                 "docker-registry") as server:
        yield server


@contextlib.contextmanager
def redis(root: Path, password: str | None = None) -> Iterator[Server]:
    binary = need("redis-server", "redis-server")
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(root)]
    if password:
        argv += ["--requirepass", password]
    with serving(argv, port, root, "redis-server") as server:
        yield server


@dataclass
class TokenService:
    realm: str
    cert: Path
    service: str = "tk-test-registry"
    issuer: str = "tk-test-issuer"
    issued: list[str] = field(default_factory=list)  # the scopes it granted tokens for


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@contextlib.contextmanager
def token_service(root: Path, users: dict[str, str]) -> Iterator[TokenService]:
    """The token service a registry's bearer auth sends clients to, as GHCR's or Harbor's:
    ``GET /token?service=...&scope=...`` with basic credentials of ``users`` answers a JWT
    (RS256, its certificate in the ``x5c`` header, the registry trusting that certificate)
    granting the scope asked for; without them, 401. A thread of the test's process."""
    openssl = need("openssl", "openssl")
    root.mkdir(parents=True, exist_ok=True)
    key, cert = root / "token.key", root / "token.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=tk-test-token"],
                   check=True, capture_output=True)
    der = subprocess.run([openssl, "x509", "-in", str(cert), "-outform", "DER"],
                         check=True, capture_output=True).stdout
    service = TokenService(realm="", cert=cert)

    def sign(claims: dict) -> str:
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        signed = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
        signature = subprocess.run([openssl, "dgst", "-sha256", "-sign", str(key)],
                                   input=signed.encode(), check=True,
                                   capture_output=True).stdout
        return f"{signed}.{b64url(signature)}"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            auth = self.headers.get("Authorization", "")
            user, _, password = (base64.b64decode(auth[6:]).decode().partition(":")
                                 if auth.startswith("Basic ") else ("", "", ""))
            if not user or users.get(user) != password:
                self.send_response(401)
                self.end_headers()
                return
            access = []
            for scope in query.get("scope", []):
                kind, name, actions = scope.split(":")
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
                service.issued.append(scope)
            now = int(time.time())
            token = sign({"iss": service.issuer, "sub": user, "aud": service.service,
                          "exp": now + 300, "nbf": now - 10, "iat": now,
                          "jti": f"{now}-{len(service.issued)}", "access": access})
            body = json.dumps({"token": token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service.realm = f"http://127.0.0.1:{server.server_address[1]}/token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()


def blob_data(registry_root: Path, sha256: str) -> Path:
    """Where the registry keeps a blob's bytes (the filesystem driver's layout)."""
    return (registry_root / "data" / "docker" / "registry" / "v2" / "blobs" / "sha256"
            / sha256[:2] / sha256 / "data")


@contextlib.contextmanager
def dying_relay(server: Server, when: bytes, body_bytes: int = 1000,
                stall: bool = False) -> Iterator[str]:
    """``127.0.0.1:PORT`` relayed to ``server``; once a request holding ``when`` has gone
    through, its response is passed on up to ``body_bytes`` of its body, then the server is
    killed and every connection cut: the registry goes away mid-pull. ``stall``: the rest of
    the body is held back instead, until the relay ends (the puller waits mid-blob)."""
    listener = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []
    fired = threading.Event()
    released = threading.Event()

    def die() -> None:
        server.kill()
        cut()

    def cut() -> None:
        listener.close()
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def pipe(client: socket.socket, upstream: socket.socket, doomed: threading.Event) -> None:
        try:
            while data := client.recv(1 << 16):
                if when in data:
                    doomed.set()
                upstream.sendall(data)
        except OSError:
            pass

    def back(upstream: socket.socket, client: socket.socket, doomed: threading.Event) -> None:
        seen = b""
        try:
            while data := upstream.recv(1 << 16):
                if doomed.is_set():
                    seen += data
                    head = seen.find(b"\r\n\r\n")
                    if head != -1 and len(seen) >= head + 4 + body_bytes:
                        client.sendall(data[:len(data) - (len(seen) - head - 4 - body_bytes)])
                        fired.set()
                        if stall:
                            released.wait()
                            return
                        die()
                        return
                client.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_WR)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", server.port))
            conns.extend([client, upstream])
            doomed = threading.Event()
            threading.Thread(target=pipe, args=(client, upstream, doomed), daemon=True).start()
            threading.Thread(target=back, args=(upstream, client, doomed), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        released.set()
        if not fired.is_set():
            die()
        elif stall:
            cut()
