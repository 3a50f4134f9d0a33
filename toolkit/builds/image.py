"""Container images for builds: the Docker engine, offline base images, Dockerfile templates.

Sites without an image registry still have a Debian mirror (apt needs one), so a base image is
made the way distributions make theirs: ``debootstrap`` a minimal root file system and
``docker import`` it. The build images are then rendered from ``dockerfiles/Dockerfile.*``
templates whose ``ARG`` defaults are replaced by the plan's values, so the rendered text alone
says what the image is and its hash names it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Stage, ignore

if TYPE_CHECKING:
    import docker

DEFAULT_SUITE = "bookworm"
# The repository's dockerfiles/, through a symlink that also puts it in the wheel.
DOCKERFILES = Path(__file__).resolve().parent.parent / "data" / "dockerfiles"
# Certificates of TLS-intercepting proxies live here on Debian-like hosts; a build image needs
# them too, or pip inside it cannot reach PyPI through the same proxy the host uses.
LOCAL_CA_DIR = Path("/usr/local/share/ca-certificates")
APT_SOURCES = [Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d")]


def connect(timeout: int = 60) -> docker.DockerClient:
    """A client of the engine that answers (``DOCKER_HOST`` or the local socket)."""
    import docker

    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as e:  # noqa: BLE001 - docker raises several unrelated types here
        if "Permission denied" in str(e):
            raise UserError("the Docker engine refuses this user: run as root or join the "
                            "'docker' group (usermod -aG docker $USER, then log in again)") from None
        raise UserError(
            f"no Docker engine answers ({type(e).__name__}); start one (as root: "
            "'dockerd >/tmp/dockerd.log 2>&1 &') or point DOCKER_HOST at one"
        ) from None
    return client


def shares_files() -> bool:
    """Whether the engine sees this machine's files. One reached through a local socket does
    (builds mount the tree); one behind ``DOCKER_HOST=tcp://`` or ``ssh://`` is taken to be
    another machine's, whose containers get the tree copied in and give the libraries back."""
    host = os.environ.get("DOCKER_HOST", "")
    return not host or host.startswith(("unix://", "npipe://"))


def default_tag(suite: str) -> str:
    return f"tk/debian:{suite}"


def _sources_entries(paths: list[Path]) -> list[tuple[str, list[str]]]:
    """(URI, suites) of every ``deb`` entry in apt's one-line and deb822 source files."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.suffix in (".list", ".sources"))
        elif p.is_file():
            files.append(p)
    entries: list[tuple[str, list[str]]] = []
    for f in files:
        text = f.read_text(errors="replace")
        if f.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                    if m:
                        fields[m.group(1).lower()] = m.group(2)
                if "deb" in fields.get("types", "").split() and fields.get("enabled") != "no":
                    for uri in fields.get("uris", "").split():
                        entries.append((uri, fields.get("suites", "").split()))
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
                if len(words) >= 3 and words[0] == "deb":
                    entries.append((words[1], [words[2]]))
    return entries


def apt_mirror(suite: str = DEFAULT_SUITE, sources: list[Path] | None = None) -> str:
    """The Debian mirror this machine's apt already uses, preferring one that serves ``suite``."""
    entries = _sources_entries(sources if sources is not None else APT_SOURCES)
    for uri, suites in entries:
        if suite in suites:
            return uri
    for uri, _ in entries:
        if uri.rstrip("/").endswith("/debian"):
            return uri
    raise UserError(
        f"no Debian mirror for '{suite}' in apt's sources (/etc/apt/sources.list*); "
        "pass --mirror URL"
    )


@contextlib.contextmanager
def exclusive(name: str) -> Iterator[None]:
    """One process at a time makes the image ``name`` (parallel test workers, two shells)."""
    locks = Path(tempfile.gettempdir()) / "tk-image-locks"
    locks.mkdir(mode=0o1777, exist_ok=True)
    with open(locks / re.sub(r"[^\w.-]", "_", name), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def find_image(client: docker.DockerClient, tag: str) -> docker.models.images.Image | None:
    import docker

    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as e:
        if "invalid reference format" in str(e):  # a name from a flag or a recipe
            raise UserError(f"{tag!r} is not a valid image name (docker: invalid reference "
                            "format)") from None
        raise


@dataclass
class BootstrapResult:
    tag: str
    image_id: str
    created: bool  # False when an existing image was kept
    mirror: str | None = None


def bootstrap(suite: str = DEFAULT_SUITE, tag: str | None = None, mirror: str | None = None,
              force: bool = False, events: Handler = ignore,
              client: docker.DockerClient | None = None) -> BootstrapResult:
    """Make (or keep) a minimal Debian base image ``tag`` with debootstrap + docker import."""
    if not re.fullmatch(r"[a-z][a-z0-9.-]*", suite):
        raise UserError(f"--suite {suite!r}: not a Debian suite name (e.g. bookworm)")
    tag = tag or default_tag(suite)
    client = client or connect()
    with exclusive(tag):
        return _bootstrap(client, suite, tag, mirror, force, events)


def _bootstrap(client: docker.DockerClient, suite: str, tag: str, mirror: str | None,
               force: bool, events: Handler) -> BootstrapResult:
    existing = find_image(client, tag)
    if existing is not None and not force:
        return BootstrapResult(tag, existing.id, created=False)
    if os.geteuid() != 0:
        raise UserError(
            f"making base image {tag} runs debootstrap, which needs root: rerun as root "
            f"(sudo tk image bootstrap --suite {suite})"
        )
    if shutil.which("debootstrap") is None:
        raise UserError("debootstrap is not installed: apt-get install -y debootstrap")
    mirror = mirror or apt_mirror(suite)
    with tempfile.TemporaryDirectory(prefix="tk-debootstrap-") as tmp:
        root = Path(tmp) / "root"
        events(Stage(f"debootstrap {suite} from {mirror} (a few minutes)"))
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", suite, str(root), mirror],
            capture_output=True, text=True,
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
            raise TkError(f"debootstrap {suite} {mirror} failed:\n{tail}")
        # Package caches are half the size of a minbase tree and useless in an image.
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for f in (root / junk).glob("*"):
                if f.is_file():
                    f.unlink()
        archive = Path(tmp) / "rootfs.tar"
        events(Stage(f"docker import as {tag}"))
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(archive), "."],
                       check=True)
        repository, _, version = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "")
        client.api.import_image_from_file(
            str(archive), repository=repository, tag=version or "latest",
            changes=[
                'CMD ["/bin/bash"]',
                "ENV LANG=C.UTF-8",
                f"LABEL org.tk.suite={suite} org.tk.mirror={mirror}",
            ],
        )
    image = find_image(client, tag)
    if image is None:
        raise TkError(f"docker import reported success but image {tag} is missing")
    return BootstrapResult(tag, image.id, created=True, mirror=mirror)


# --- Dockerfile templates -------------------------------------------------------------------

_ARG_LINE = re.compile(r"^(\s*ARG\s+)([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?\s*$", re.MULTILINE)
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.:/@+,=<>~-]*$")


def template_path(flavour: str) -> Path:
    path = DOCKERFILES / f"Dockerfile.{flavour}"
    if not path.is_file():
        known = sorted(p.suffix.lstrip(".") for p in DOCKERFILES.glob("Dockerfile.*"))
        raise UserError(f"no Dockerfile template '{flavour}' (known: {', '.join(known)})")
    return path


def template_args(flavour: str) -> dict[str, str]:
    """The ARGs a template takes and their defaults."""
    text = template_path(flavour).read_text()
    return {m.group(2): m.group(3) or "" for m in _ARG_LINE.finditer(text)}


def render_dockerfile(flavour: str, args: dict[str, str] | None = None) -> str:
    """The template with each ``ARG NAME=default`` set to ``args[NAME]``; unknown names refused.

    Baking the values into the text (rather than passing build args) makes the rendered file
    complete on its own: it can be printed, hashed, and rebuilt by hand with ``docker build``.
    """
    args = {k: str(v) for k, v in (args or {}).items()}
    known = template_args(flavour)
    unknown = sorted(set(args) - set(known))
    if unknown:
        raise UserError(f"Dockerfile.{flavour} has no ARG {', '.join(unknown)} "
                        f"(it takes: {', '.join(known)})")
    for name, value in args.items():
        if not _SAFE_VALUE.match(value):
            raise UserError(f"container setting {name}={value!r}: only letters, digits and "
                            "._:/@+,=<>~- are allowed")
    return _ARG_LINE.sub(
        lambda m: f"{m.group(1)}{m.group(2)}={args[m.group(2)]}" if m.group(2) in args
        else m.group(0),
        template_path(flavour).read_text(),
    )


def local_certificates() -> dict[str, bytes]:
    """The host's locally added CA certificates, which the build image should trust too."""
    if not LOCAL_CA_DIR.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(LOCAL_CA_DIR.rglob("*.crt")) if p.is_file()}


def build_context(dockerfile: str, certificates: dict[str, bytes]) -> bytes:
    """The tar the engine builds from: the Dockerfile and ``ca/`` with the certificates."""
    buf = io.BytesIO()
    files = {"Dockerfile": dockerfile.encode(),
             "ca/README": b"CA certificates copied from the host's local store by tk.\n"}
    files.update({f"ca/{name}": data for name, data in certificates.items()})
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def context_hash(dockerfile: str, certificates: dict[str, bytes]) -> str:
    h = hashlib.sha256(dockerfile.encode())
    for name, data in sorted(certificates.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()
