"""The OCI distribution API over plain HTTP (urllib): as much of it as storing and fetching an
artifact takes, against any registry that speaks it (the distribution registry, Debian's
``docker-registry``; GHCR, Harbor, the clouds' own).

- blobs: ``HEAD`` (is it there?), ``POST`` then ``PUT ?digest=`` (a monolithic upload),
  ``GET`` streamed into a file and checked against its digest and size as it comes;
- manifests: ``PUT`` by tag, ``GET`` by tag or digest, the body checked against the digest
  asked for and the one the registry names (``Docker-Content-Digest``);
- auth: a ``401`` names its scheme. ``Basic`` gets the credentials; ``Bearer`` gets a token
  from the realm it names, for the scope it names, asked with the credentials when there are
  any (anonymous pulls work without).

Credentials come from where a user already keeps them, first found wins:
``TK_REGISTRY_USER``/``TK_REGISTRY_PASSWORD``; then Docker's config (``$DOCKER_CONFIG/
config.json``, else ``~/.docker/config.json``): the credential helper ``credHelpers`` names for
the registry, else ``credsStore`` (``docker-credential-NAME get``), else the ``auths`` entry
``docker login`` wrote. They live in this process only: no message, record or log of tk holds
them (errors name where they came from, never what they are).

Plain HTTP is used for a registry on the loopback interface (as Docker does: localhost and
127.0.0.0/8 are insecure registries by default) or when the reference says ``http://``.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolkit.errors import TkError, UserError

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
EMPTY_TYPE = "application/vnd.oci.empty.v1+json"  # OCI 1.1's config of an artifact: {}
EMPTY = b"{}"
MAX_MANIFEST = 4 << 20  # what registries accept; more is not a manifest
CHUNK = 1 << 20
TIMEOUT = 30.0  # seconds a registry may leave a connection silent before it counts as gone

HOST = re.compile(r"^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d+)?$")
PATH_COMPONENT = re.compile(r"^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$")
TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SHAPE = "REGISTRY[:PORT]/REPOSITORY[:TAG|@sha256:DIGEST], e.g. registry.example.com:5000/team/tvm"
# Docker Hub's names: what a user writes, where its API is, the key docker login stores under
HUB, HUB_API, HUB_AUTH = "docker.io", "registry-1.docker.io", "https://index.docker.io/v1/"


class RegistryUnavailable(TkError):
    """The registry did not answer, answered with a server error, or went away mid-transfer."""


class RegistryRefused(TkError):
    """The registry answered, and said no (credentials, permissions, a bad request)."""


class Untrusted(TkError):
    """What a registry served is not what was asked for: a digest or size differs, or it is
    not the kind of artifact asked for. Refused, and nothing of it kept."""


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return name in ("localhost", "[::1]") or re.fullmatch(r"127(\.\d{1,3}){3}", name) is not None


@dataclass(frozen=True)
class Reference:
    """``registry/repository[:tag][@digest]``, and how to reach the registry."""

    registry: str  # host[:port], as written
    repository: str
    tag: str | None = None
    digest: str | None = None
    scheme: str = "https"

    @classmethod
    def parse(cls, text: str) -> Reference:
        raw, scheme = text.strip(), None
        for prefix in ("http://", "https://"):
            if raw.startswith(prefix):
                scheme, raw = prefix[:-3], raw[len(prefix):]
        host, _, rest = raw.partition("/")
        if not rest or not HOST.match(host) or not ("." in host or ":" in host
                                                    or host == "localhost"):
            raise UserError(f"{text!r} is not a registry reference: {SHAPE}")
        digest = tag = None
        if "@" in rest:
            rest, digest = rest.split("@", 1)
            if not DIGEST.match(digest):
                raise UserError(f"{text!r}: {digest!r} is not a sha256 digest (sha256:<64 hex>)")
        if ":" in rest.rsplit("/", 1)[-1]:
            rest, tag = rest.rsplit(":", 1)
            if not TAG.match(tag):
                raise UserError(f"{text!r}: {tag!r} is not a tag (letters, digits, . _ -)")
        if not all(PATH_COMPONENT.match(part) for part in rest.split("/")):
            raise UserError(f"{text!r}: {rest!r} is not a repository name (lower-case letters, "
                            "digits and . _ - between them, parts joined by /)")
        if scheme is None:
            scheme = "http" if loopback(host) else "https"
        return cls(registry=host, repository=rest, tag=tag, digest=digest, scheme=scheme)

    def at(self, tag: str | None = None, digest: str | None = None) -> Reference:
        return Reference(self.registry, self.repository, tag, digest, self.scheme)

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        prefix = "http://" if self.scheme == "http" and not loopback(self.registry) else ""
        return (prefix + self.name + (f":{self.tag}" if self.tag else "")
                + (f"@{self.digest}" if self.digest else ""))


@dataclass
class Credentials:
    username: str
    secret: str
    source: str  # where they came from, as an error may say (never the secret)

    @property
    def identity_token(self) -> bool:
        """docker login with an OAuth2 identity: the secret is a refresh token."""
        return self.username == "<token>"


def docker_config_path() -> Path:
    return Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"


def credentials(registry: str) -> Credentials | None:
    """The credentials for ``registry`` (host[:port]), from the environment, then Docker's
    config and credential helpers; None when there are none."""
    user, password = os.environ.get("TK_REGISTRY_USER"), os.environ.get("TK_REGISTRY_PASSWORD")
    if user and password:
        return Credentials(user, password, "TK_REGISTRY_USER/TK_REGISTRY_PASSWORD")
    path = docker_config_path()
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: Docker's config is not readable JSON ({e})") from None
    server = HUB_AUTH if registry in (HUB, HUB_API) else registry
    helper = (config.get("credHelpers") or {}).get(server) or config.get("credsStore")
    if helper:
        found = from_helper(helper, server, path)
        if found is not None:
            return found
    for key, entry in (config.get("auths") or {}).items():
        if key != server and auth_host(key) != server or not isinstance(entry, dict):
            continue
        if entry.get("identitytoken"):
            return Credentials("<token>", entry["identitytoken"], str(path))
        if entry.get("auth"):
            try:
                name, _, secret = base64.b64decode(entry["auth"]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                raise UserError(f"{path}: the auths entry of {key} is not base64 of "
                                "user:password") from None
            return Credentials(name, secret, str(path))
        if entry.get("username") and entry.get("password"):
            return Credentials(entry["username"], entry["password"], str(path))
    return None


def auth_host(key: str) -> str:
    """The registry an ``auths`` key names (``https://host:5000/v1/`` -> ``host:5000``)."""
    return re.sub(r"^[a-z]+://", "", key).split("/", 1)[0]


def from_helper(helper: str, server: str, config: Path) -> Credentials | None:
    """Ask ``docker-credential-<helper> get``, as Docker does; None when it has none."""
    program = f"docker-credential-{helper}"
    try:
        proc = subprocess.run([program, "get"], input=server, capture_output=True, text=True,
                              timeout=60)
    except FileNotFoundError:
        raise UserError(f"{config} names the credential helper {program}, which is not "
                        "installed here") from None
    except subprocess.TimeoutExpired:
        raise TkError(f"{program} get did not answer in 60 s") from None
    if proc.returncode != 0:
        return None  # "credentials not found in native keychain": none for this registry
    try:
        data = json.loads(proc.stdout)
        return Credentials(data["Username"], data["Secret"], program)
    except (ValueError, KeyError, TypeError):
        raise TkError(f"{program} get answered something that is not its JSON") from None


def challenge(header: str) -> tuple[str, dict[str, str]]:
    """``Bearer realm="...",service="...",scope="..."`` -> ("bearer", {realm, service, scope})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {k.lower(): v for k, v in re.findall(r'(\w+)="([^"]*)"', rest)}
    return scheme.lower(), params


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are followed by ``Registry.request``: a blob's redirect to object storage
    must not carry the registry's Authorization."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


Response = http.client.HTTPResponse | urllib.error.HTTPError
Body = Callable[[], "bytes | IO[bytes]"]


class Registry:
    """One repository of one registry, with the authorization its challenges asked for."""

    def __init__(self, ref: Reference, timeout: float = TIMEOUT) -> None:
        self.ref = ref
        api = HUB_API if ref.registry == HUB else ref.registry
        self.base = f"{ref.scheme}://{api}/v2/{ref.repository}"
        self.timeout = timeout
        self._authorization: str | None = None
        self._creds: Credentials | None = None
        self._creds_read = False
        self._opener = urllib.request.build_opener(_NoRedirect)

    # -- transport -------------------------------------------------------------------------

    def _send(self, method: str, url: str, headers: dict[str, str],
              body: bytes | IO[bytes] | None = None) -> Response:
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            return self._opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            return e
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            raise RegistryUnavailable(f"registry {self.ref.registry} did not answer: "
                                      f"{reason(e)}") from None

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None,
                body: Body | None = None, ok: tuple[int, ...] = (200,),
                missing: tuple[int, ...] = ()) -> Response | None:
        """``method`` on ``path`` (under the repository, or a whole URL the registry gave):
        the response when its status is in ``ok``, None when in ``missing``; a 401 is
        answered once with the authorization it asks for."""
        url = path if "://" in path else self.base + path
        for attempt in range(2):
            sent = dict(headers or {})
            if self._authorization:
                sent["Authorization"] = self._authorization
            data = body() if body else None
            try:
                resp = self._send(method, url, sent, data)
            finally:
                if hasattr(data, "close"):
                    data.close()
            if resp.status == 401 and attempt == 0:
                header = resp.headers.get("WWW-Authenticate", "")
                resp.close()
                self._authorization = self._authorize(header)
                continue
            break
        for _ in range(5):  # a blob may live behind a redirect (object storage)
            if resp.status not in (301, 302, 303, 307, 308) or method not in ("GET", "HEAD"):
                break
            target = urllib.parse.urljoin(url, resp.headers.get("Location", ""))
            resp.close()
            same = urllib.parse.urlsplit(target).netloc == urllib.parse.urlsplit(url).netloc
            sent = dict(headers or {})
            if same and self._authorization:
                sent["Authorization"] = self._authorization
            url = target
            resp = self._send(method, url, sent)
        if resp.status in ok:
            return resp
        if resp.status in missing:
            resp.close()
            return None
        self._fail(method, path, resp)
        return None  # not reached: _fail raises

    def _fail(self, method: str, path: str, resp: Response) -> None:
        what = f"{method} {path.split('?')[0]}"
        try:
            detail = resp.read(64 << 10).decode(errors="replace")
            errors = json.loads(detail).get("errors") or []
            detail = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errors) or detail
        except (ValueError, AttributeError, OSError, http.client.HTTPException):
            pass
        resp.close()
        detail = " ".join(str(detail).split())[:200]
        if resp.status >= 500:
            raise RegistryUnavailable(f"registry {self.ref.registry} failed {what}: "
                                      f"{resp.status} {detail}".rstrip())
        if resp.status in (401, 403):
            creds = self.credentials()
            where = f"credentials from {creds.source}" if creds else \
                f"no credentials found (docker login {self.ref.registry}, or set " \
                "TK_REGISTRY_USER and TK_REGISTRY_PASSWORD)"
            raise RegistryRefused(f"registry {self.ref.registry} refused {what} "
                                  f"({resp.status}; {where}): {detail}".rstrip(": "))
        raise RegistryRefused(f"registry {self.ref.registry} refused {what}: {resp.status} "
                              f"{detail}".rstrip())

    # -- authorization ---------------------------------------------------------------------

    def credentials(self) -> Credentials | None:
        if not self._creds_read:
            self._creds, self._creds_read = credentials(self.ref.registry), True
        return self._creds

    def _authorize(self, header: str) -> str | None:
        scheme, params = challenge(header)
        creds = self.credentials()
        if scheme == "basic":
            if creds is None:
                return None  # the retry's 401 says what is missing
            pair = f"{creds.username}:{creds.secret}".encode()
            return "Basic " + base64.b64encode(pair).decode()
        if scheme == "bearer" and params.get("realm"):
            return "Bearer " + self._token(params, creds)
        return None

    def _token(self, params: dict[str, str], creds: Credentials | None) -> str:
        """A token from the realm of a Bearer challenge, for its service and scope."""
        query = {k: params[k] for k in ("service", "scope") if params.get(k)}
        realm = params["realm"]
        headers = {}
        if creds is not None and creds.identity_token:
            form = {**query, "grant_type": "refresh_token", "refresh_token": creds.secret,
                    "client_id": "tk"}
            req = urllib.request.Request(realm, data=urllib.parse.urlencode(form).encode(),
                                         method="POST")
        else:
            if creds is not None:
                pair = f"{creds.username}:{creds.secret}".encode()
                headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
            sep = "&" if "?" in realm else "?"
            req = urllib.request.Request(realm + sep + urllib.parse.urlencode(query),
                                         headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read(1 << 20))
        except urllib.error.HTTPError as e:
            where = f"credentials from {creds.source}" if creds else "no credentials"
            raise RegistryRefused(f"the token service of {self.ref.registry} refused "
                                  f"{query.get('scope', 'access')} ({e.code}; {where})") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as e:
            raise RegistryUnavailable(f"the token service of {self.ref.registry} did not "
                                      f"answer: {reason(e)}") from None
        token = data.get("token") or data.get("access_token")
        if not token:
            raise RegistryRefused(f"the token service of {self.ref.registry} gave no token")
        return token

    # -- blobs and manifests ---------------------------------------------------------------

    def has_blob(self, digest: str) -> bool:
        resp = self.request("HEAD", f"/blobs/{digest}", missing=(404,))
        if resp is None:
            return False
        resp.close()
        return True

    def push_blob(self, digest: str, size: int, body: Body) -> bool:
        """Upload a blob unless the repository has it; True when it was uploaded."""
        if self.has_blob(digest):
            return False
        started = self.request("POST", "/blobs/uploads/", ok=(202,))
        assert started is not None
        location = started.headers.get("Location", "")
        started.close()
        if not location:
            raise RegistryRefused(f"registry {self.ref.registry} started an upload without "
                                  "saying where to send it (no Location)")
        url = urllib.parse.urljoin(self.base + "/", location)
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode({"digest": digest})
        done = self.request("PUT", url, body=body, ok=(201,),
                            headers={"Content-Type": "application/octet-stream",
                                     "Content-Length": str(size)})
        assert done is not None
        done.close()
        return True

    def put_manifest(self, tag: str, body: bytes) -> str:
        """Store a manifest under ``tag``; its digest."""
        digest = sha256_digest(body)
        resp = self.request("PUT", f"/manifests/{tag}", body=lambda: body, ok=(201,),
                            headers={"Content-Type": MANIFEST_TYPE})
        assert resp is not None
        named = resp.headers.get("Docker-Content-Digest")
        resp.close()
        if named and named != digest:
            raise Untrusted(f"registry {self.ref.registry} stored the manifest as {named}, "
                            f"not {digest}")
        return digest

    def get_manifest(self, ref: Reference) -> tuple[bytes, str] | None:
        """The manifest ``ref`` names (by its digest, else its tag) and its digest, checked;
        None when the repository has none."""
        name = ref.digest or ref.tag
        if not name:
            raise UserError(f"{ref}: name a tag or a digest")
        resp = self.request("GET", f"/manifests/{name}", headers={"Accept": MANIFEST_TYPE},
                            missing=(404,))
        if resp is None:
            return None
        with resp:
            try:
                body = resp.read(MAX_MANIFEST + 1)
            except (OSError, http.client.HTTPException) as e:
                raise RegistryUnavailable(f"registry {self.ref.registry} went away while "
                                          f"sending {ref}: {reason(e)}") from None
            named = resp.headers.get("Docker-Content-Digest")
        digest = sha256_digest(body)
        if len(body) > MAX_MANIFEST:
            raise Untrusted(f"{ref}: the manifest is larger than {MAX_MANIFEST >> 20} MiB")
        if ref.digest and digest != ref.digest:
            raise Untrusted(f"{ref}: the registry sent a manifest whose digest is {digest}")
        if named and named != digest:
            raise Untrusted(f"{ref}: the registry names the manifest {named}, its bytes are "
                            f"{digest}")
        return body, digest

    def fetch_blob(self, digest: str, size: int, dest: Path) -> None:
        """Write blob ``digest`` into ``dest``, refusing it unless its bytes have that digest
        and ``size``; nothing is left in ``dest``'s place on any failure but what was read."""
        resp = self.request("GET", f"/blobs/{digest}")
        assert resp is not None
        h, n = hashlib.sha256(), 0
        try:
            with resp, dest.open("wb") as out:
                # read1: what has arrived, written as it comes (read() would wait for a
                # whole chunk), so a blob cut short says how far it got.
                while chunk := resp.read1(CHUNK):
                    n += len(chunk)
                    if n > size:
                        break
                    h.update(chunk)
                    out.write(chunk)
        except (OSError, http.client.HTTPException) as e:
            if isinstance(e, OSError) and e.errno is not None and not isinstance(
                    e, (ConnectionError, socket.timeout)):
                raise  # this side's file system (no room): not the registry's doing
            raise RegistryUnavailable(f"registry {self.ref.registry} went away mid-pull, "
                                      f"{n} of {size} bytes into {digest[:19]}: "
                                      f"{reason(e)}") from None
        announced = resp.headers.get("Content-Length")
        if n < size and (announced is None or announced == str(size)):
            # http.client ends a body cut short without a word: the connection ended early.
            raise RegistryUnavailable(f"registry {self.ref.registry} went away mid-pull, "
                                      f"{n} of {size} bytes into {digest[:19]}")
        if n != size or "sha256:" + h.hexdigest() != digest:
            got = f"{n} bytes, not {size}" if n != size else f"sha256:{h.hexdigest()[:12]}"
            raise Untrusted(f"blob {digest[:19]} is not what its digest says (got {got})")


def reason(e: BaseException) -> str:
    """What went wrong with a connection, in the words of the system."""
    if isinstance(e, urllib.error.URLError) and not isinstance(e, urllib.error.HTTPError):
        e = e.reason if isinstance(e.reason, BaseException) else e
    if isinstance(e, socket.timeout):
        return f"no answer in {TIMEOUT:.0f} s"
    if isinstance(e, http.client.IncompleteRead):
        return "the connection closed before the end of the data"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__
