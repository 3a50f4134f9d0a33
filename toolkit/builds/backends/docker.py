"""The docker backend: the plan's toolchain image, then CMake and Ninja in a container.

The image is rendered from ``dockerfiles/Dockerfile.<flavour>`` with the plan's container spec
and tagged by the hash of what it is built from (Dockerfile, extra CA certificates, the base
image's id): an unchanged plan finds its image and builds nothing, a changed one rebuilds only
the layers after the first changed line. The build then runs in a container of that image that
mounts the source tree at its own path (so CMake's cache, the manifest and the log name the same
paths inside and out), keeps a ccache volume per user across builds, and runs as the calling
user, so every file it writes belongs to them.

An engine on another machine (``DOCKER_HOST=tcp://`` or ``ssh://``) cannot mount the tree: its
containers get the tree copied in, keep the build directory in a volume of that engine between
builds (incremental, as on the host), and copy the build directory back without its objects.
Several bisection slots can build on one such engine at once, sharing its ccache volume.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import os
import re
import shlex
import socket
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from toolkit import git as gitrun
from toolkit import ownership
from toolkit.builds import image
from toolkit.builds.backends import (
    BackendResult,
    BuildFailed,
    BuildJob,
    cmake_error,
    compile_argv,
    configure_argv,
    log_size,
    ninja_progress,
)
from toolkit.builds.backends.native import ccache_args, version_line
from toolkit.builds.recipes import BuildPlan
from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Progress, Stage, ignore

if TYPE_CHECKING:
    import docker

# Compiles can be silent for many minutes (a static LLVM link): never time the stream out.
API_TIMEOUT = 24 * 3600
CCACHE_DIR = "/ccache"
# The host's network: apt and pip need the outside world, and an engine started without
# iptables (nested in a container, as CI may be) gives bridged containers none.
NETWORK = "host"
TOOL_PROBES = {
    "os": "sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '\"'",
    "cmake": "cmake --version",
    "ninja": "ninja --version",
    "cxx": "c++ --version",
    "ccache": "ccache --version",
    "python": "python3 --version",
}


def dockerfile_args(plan: BuildPlan) -> tuple[str, dict[str, str]]:
    """The template (cpu/cuda) and its ARG values, from the plan's container spec."""
    spec = plan.container
    flavour = spec.get("dockerfile") or ("cuda" if plan.wants_cuda else "cpu")
    args: dict[str, str] = {}
    cuda = str(spec.get("cuda") or "")
    if spec.get("base"):
        args["BASE"] = str(spec["base"])
    elif flavour == "cpu":
        args["BASE"] = image.default_tag(spec.get("suite") or image.DEFAULT_SUITE)
    elif re.fullmatch(r"\d+\.\d+", cuda):
        args["BASE"] = f"nvidia/cuda:{cuda}.0-devel-ubuntu22.04"
    if spec.get("llvm"):
        args["LLVM_VERSION"] = str(spec["llvm"])
    if spec.get("python"):
        args["PYTHON"] = str(spec["python"])
    if spec.get("cmake"):
        args["CMAKE_VERSION"] = str(spec["cmake"])
    if flavour == "cuda" and cuda:
        args["CUDA_VERSION"] = cuda
    template = "\n".join(ln for ln in image.template_path(flavour).read_text().splitlines()
                         if not ln.lstrip().startswith("#"))
    # Packages the template installs anyway would only add a layer that does nothing.
    extra = [str(p) for p in spec.get("packages", [])
             if not re.search(rf"(?<![\w.${{}}-]){re.escape(str(p))}(?![\w.-])", template)]
    if extra:
        args["PACKAGES"] = ",".join(extra)
    return flavour, args


def render_dockerfile(plan: BuildPlan) -> str:
    """The Dockerfile this plan's image is built from (what ``--dry-run`` shows)."""
    flavour, args = dockerfile_args(plan)
    return image.render_dockerfile(flavour, args)


@dataclass
class BuiltImage:
    tag: str
    image_id: str
    base: str
    cached: bool  # the tagged image existed: nothing was built
    steps: int = 0  # Dockerfile steps run, and how many of them the layer cache served
    cached_steps: int = 0
    seconds: float = 0.0


def ensure_image(plan: BuildPlan, client: docker.DockerClient, log: Path,
                 events: Handler = ignore) -> BuiltImage:
    """The plan's toolchain image: found by its content tag, else built with streamed output."""
    start = time.monotonic()
    flavour, args = dockerfile_args(plan)
    dockerfile = image.render_dockerfile(flavour, args)
    base = args.get("BASE") or image.template_args(flavour)["BASE"]
    base_image = base_image_for(client, base, events)
    certs = image.local_certificates()
    digest = image.context_hash(dockerfile + "\n# base " + base_image.id, certs)
    tag = f"tk/build-{flavour}:{digest[:16]}"
    with image.exclusive(tag):
        found = image.find_image(client, tag)
        if found is not None:
            with log.open("a") as out:
                out.write(f"# image {tag} ({found.id}) exists: no image build\n")
            return BuiltImage(tag, found.id, base, cached=True,
                              seconds=round(time.monotonic() - start, 3))
        events(Stage(f"building image {tag} from Dockerfile.{flavour} (streamed to {log})"))
        with log.open("a") as out:
            out.write(f"# docker build -t {tag} (Dockerfile.{flavour}, base {base} "
                      f"{base_image.id})\n{dockerfile}# ---\n")
        image_id, steps, cached_steps = stream_build(
            client, tag, image.build_context(dockerfile, certs), {"org.tk.context": digest},
            log, events)
        built = image.find_image(client, tag)
        if built is None:
            raise TkError(f"docker build finished without image {tag} (log: {log})")
        return BuiltImage(tag, image_id or built.id, base, cached=False, steps=steps,
                          cached_steps=cached_steps, seconds=round(time.monotonic() - start, 3))


def stream_build(client: docker.DockerClient, tag: str, context: bytes, labels: dict[str, str],
                 log: Path, events: Handler) -> tuple[str | None, int, int]:
    """``docker build`` with its output appended to the log as it comes, its steps reported as
    ``Progress``; (image id, steps, steps the layer cache served)."""
    steps = cached_steps = 0
    image_id = None
    said = ""  # the last line a step printed: a failing step's own reason
    stream = client.api.build(
        fileobj=io.BytesIO(context), custom_context=True, tag=tag, rm=True, forcerm=True,
        pull=False, decode=True, network_mode=NETWORK, labels=labels,
    )
    with log.open("a") as out:
        for chunk in stream:
            if "error" in chunk:
                out.write(chunk["error"] + "\n")
                error = chunk["error"].strip()
                short = re.search(r"returned a non-zero code: \d+", error)
                if said and short:  # the command itself is in the log; its reason is news
                    error = f"{said} (the step {short.group(0)})"
                raise TkError(f"image build failed: {error[:400]} "
                              f"(log: {log}; rerun: docker build -t {tag} with the Dockerfile "
                              "shown by tk build --backend docker --dry-run)")
            text = chunk.get("stream", "")
            out.write(text)
            out.flush()
            for line in text.splitlines():
                if line.strip() and not re.match(r" ---> |Removing intermediate|Step ", line):
                    said = line.strip()[:200]
                step = re.match(r"Step (\d+)/(\d+) :", line)
                if step:
                    steps += 1
                    events(Progress(f"image {tag}", int(step.group(1)), int(step.group(2))))
                elif "Using cache" in line:
                    cached_steps += 1
            if "aux" in chunk and "ID" in chunk["aux"]:
                image_id = chunk["aux"]["ID"]
    return image_id, steps, cached_steps


def prepare_image(plan: BuildPlan, events: Handler = ignore) -> tuple[BuiltImage, Path]:
    """Make the plan's toolchain image ahead of any build (``tk image build``); its log path."""
    from toolkit import paths

    log = paths.cache_root() / "images" / f"{plan.hash}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"# tk image build: plan {plan.hash}\n")
    client = image.connect(timeout=API_TIMEOUT)
    return ensure_image(plan, client, log, events), log


def base_image_for(client: docker.DockerClient, base: str, events: Handler = ignore):
    """The base image: local, else bootstrapped (tk/debian:*), else pulled from a registry."""
    found = image.find_image(client, base)
    if found is not None:
        return found
    m = re.fullmatch(r"tk/debian:([\w.-]+)", base)
    if m:
        events(Stage(f"base image {base} is missing: making it (tk image bootstrap --suite "
                     f"{m.group(1)})"))
        image.bootstrap(suite=m.group(1), tag=base, events=events, client=client)
        return client.images.get(base)
    try:
        events(Stage(f"pulling base image {base}"))
        return client.images.pull(base)
    except Exception as e:  # noqa: BLE001 - any registry failure means the same to the user
        raise UserError(
            f"base image {base} is not on this engine and cannot be pulled "
            f"({type(e).__name__}); load it (docker load) or name another with "
            "[container] base = \"...\" in a recipe"
        ) from None


def build_user(source_dir: Path) -> tuple[int, int]:
    """The uid:gid builds run as: the caller's; when root, the tree's owner (under sudo, the
    user who ran it, as a rule), so that every file the build writes there is theirs."""
    return ownership.owner_of(source_dir) or (os.getuid(), os.getgid())


def mounts(job: BuildJob) -> dict[str, str]:
    """Host directories the container needs (path -> mode), each mounted at its own path.

    A git worktree's repository lives outside the tree; it is mounted read-only so that git
    inside the container (CMake asks it for the commit) sees the same history.
    """
    src = job.source_dir.resolve()
    paths = {str(src): "rw"}
    bdir = job.build_dir.resolve()
    if not bdir.is_relative_to(src):
        paths[str(bdir)] = "rw"
    proc = gitrun.run("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=src,
                      check=False)
    common = Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None
    if common and common.is_dir() and not common.resolve().is_relative_to(src):
        paths[str(common.resolve())] = "ro"
    return paths


def build(job: BuildJob) -> BackendResult:
    client = image.connect(timeout=API_TIMEOUT)
    try:
        return _build(client, job)
    except Exception as e:
        if not engine_lost(e):
            raise
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise TkError(f"the Docker engine at {where} stopped answering during the build "
                      f"({type(e).__name__}); nothing was stored (log: {job.log}): rerun tk "
                      f"build once it answers") from None


def engine_lost(e: BaseException) -> bool:
    """Whether ``e`` (or what caused it) says the engine went away: the connection refused,
    reset or cut mid-answer - not an answer the engine gave."""
    import requests
    import urllib3

    lost = (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError,
            requests.exceptions.Timeout, urllib3.exceptions.HTTPError, ConnectionError)
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, lost):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _build(client: docker.DockerClient, job: BuildJob) -> BackendResult:
    uid, gid = build_user(job.source_dir)
    built = ensure_image(job.plan, client, job.log, job.events)
    result = BackendResult(image_id=built.image_id)
    result.timings["image"] = built.seconds
    result.extra["image"] = {"tag": built.tag, "base": built.base, "cached": built.cached,
                             "steps": built.steps, "cached_steps": built.cached_steps}
    # The container writes as the tree's owner into the build directory tk made (as root).
    ownership.hand_over(job.build_dir, ownership.owner_of(job.source_dir))
    env = {**job.plan.env, "CCACHE_DIR": CCACHE_DIR, "HOME": "/home/tk",
           # git (run by CMake for the commit id) refuses trees of other owners otherwise.
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
           "GIT_CONFIG_VALUE_0": "*"}
    local = image.shares_files()
    if local:
        binds = {p: {"bind": p, "mode": mode} for p, mode in mounts(job).items()}
    else:
        binds = {build_volume(client, job): {"bind": str(job.build_dir), "mode": "rw"}}
    binds[f"tk-ccache-{uid}"] = {"bind": CCACHE_DIR, "mode": "rw"}
    run_prefix = (["docker", "run", "--rm", "--network", NETWORK, "-u", f"{uid}:{gid}",
                   "-w", str(job.build_dir)] + ([] if local else ["-i"])
                  + [a for src, b in binds.items()
                     for a in ("-v", f"{src}:{b['bind']}" + (":ro" if b["mode"] == "ro" else ""))]
                  + [a for k, v in env.items() for a in ("-e", f"{k}={v}")] + [built.tag])
    labels = {"org.tk.plan": job.plan.hash}
    with build_container(client, built.image_id, user=f"{uid}:{gid}", binds=binds, env=env,
                         workdir=str(job.build_dir), labels=labels) as container_id:
        configured = job.configured
        if not local:
            start = time.monotonic()
            copy_tree_in(client, container_id, job, uid, gid)
            result.timings["copy in"] = round(time.monotonic() - start, 3)
            kept = remote_build_dir(client, container_id, job)  # first: it may empty it
            copy_config_in(client, container_id, job, uid, gid)
            configured = configured and kept
        # The image always has ccache, and the volume keeps its cache across builds.
        steps = [("configure", configure_argv(job) + ccache_args(job.plan, available=True)),
                 ("compile", compile_argv(job))]
        if configured:
            steps = steps[1:]
            result.timings["configure"] = 0.0
        for step, argv in steps:
            line = shlex.join(run_prefix + argv) if local else remote_line(job, run_prefix, argv)
            result.commands.append(line)
            start = log_size(job.log)
            rc, seconds = exec_logged(client, container_id, argv, job,
                                      events=job.events if step == "compile" else ignore)
            result.timings[step] = round(seconds, 3)
            if rc != 0 or cmake_error(job.log, start):
                raise BuildFailed(step, job, reproduce=line)
        if not local:
            start = time.monotonic()
            copy_outputs_back(client, container_id, job)
            result.timings["copy out"] = round(time.monotonic() - start, 3)
        result.toolchain = toolchain(client, container_id, job.plan)
        result.toolchain["image"] = built.tag
    return result


# What stays in the engine's volume when a build directory is copied back: the objects the
# next incremental build needs and nothing on this side reads (a Debug TVM's run to GBs).
KEPT_REMOTE = ("*.o", "*.o.d", "*.a", ".ninja_deps")


# Labels of a remote build directory's volume: whose machine, which directory there.
VOLUME_HOST, VOLUME_DIR = "org.tk.build-host", "org.tk.build-dir"


def build_volume(client: docker.DockerClient, job: BuildJob) -> str:
    """The remote engine's volume that keeps this machine's build directory between builds,
    labelled with both, so ``remove_stale_volumes`` knows when the directory is gone."""
    where = f"{socket.gethostname()}:{job.build_dir.resolve()}"
    name = f"tk-build-{hashlib.sha256(where.encode()).hexdigest()[:16]}"
    client.volumes.create(name, labels={VOLUME_HOST: socket.gethostname(),
                                        VOLUME_DIR: str(job.build_dir.resolve())})
    return name  # creating an existing volume returns it as it is


def remove_stale_volumes() -> list[str]:
    """Remove this machine's build volumes whose build directory here is gone from the engine
    ``DOCKER_HOST`` names (``tk build gc``); the names removed. A volume in use stays."""
    import docker as docker_sdk

    client = image.connect()
    removed = []
    for vol in client.volumes.list(filters={"label": VOLUME_HOST}):
        labels = vol.attrs.get("Labels") or {}
        if (labels.get(VOLUME_HOST) != socket.gethostname()
                or Path(labels.get(VOLUME_DIR) or ".").exists()):
            continue
        with contextlib.suppress(docker_sdk.errors.APIError):
            vol.remove()
            removed.append(vol.name)
    return removed


def tree_archive(job: BuildJob, uid: int, gid: int) -> IO[bytes]:
    """The source tree as a tar, owned by the build's user. Files keep their mtimes, so Ninja
    in the engine's volume rebuilds what changed since the last copy. Left out: ``.git`` (a
    worktree's names a repository elsewhere) and build directories, any that holds a
    CMakeCache.txt (GBs of objects)."""
    src = job.source_dir.resolve()
    skip = job.build_dir.resolve()

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        return info

    out = tempfile.TemporaryFile()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for top, dirs, files in os.walk(src):
            here = Path(top)
            dirs[:] = sorted(d for d in dirs if d != ".git" and here / d != skip
                             and not (here / d / "CMakeCache.txt").exists())
            for name in [*dirs, *sorted(f for f in files if f != ".git")]:
                path = here / name
                tar.add(path, str(path.relative_to(src)), recursive=False, filter=owned)
    out.seek(0)
    return out


def copy_tree_in(client: docker.DockerClient, container_id: str, job: BuildJob, uid: int,
                 gid: int) -> None:
    src = job.source_dir.resolve()
    dirs = shlex.join([str(src), str(job.build_dir)])
    rc, out = run_quiet(client, container_id,
                        ["sh", "-c", f"mkdir -p {dirs} && chown {uid}:{gid} {dirs}"], user="0")
    if rc != 0:
        raise TkError(f"cannot make {src} in the build container: {out.strip()[-300:]}")
    with tree_archive(job, uid, gid) as tar:
        client.api.put_archive(container_id, str(src), tar)


def copy_config_in(client: docker.DockerClient, container_id: str, job: BuildJob, uid: int,
                   gid: int) -> None:
    """The plan's config.cmake (written on this side) into the engine's build directory: the
    tree's copy leaves build directories out, and without it CMake there builds TVM's
    defaults (HIDE_PRIVATE_SYMBOLS OFF, no LLVM) under the plan's build id. Its mtime goes
    with it: unchanged, Ninja does not configure again."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tar.gettarinfo(str(job.config_cmake), job.config_cmake.name)
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        with job.config_cmake.open("rb") as f:
            tar.addfile(info, f)
    client.api.put_archive(container_id, str(job.build_dir), data.getvalue())


def remote_build_dir(client: docker.DockerClient, container_id: str, job: BuildJob) -> bool:
    """Make the engine's copy of the build directory match this side's: emptied when this
    side has none (removing a build directory means a clean build, wherever it ran); whether
    it still holds a configured build (the host's stamp says what was configured)."""
    bdir = str(job.build_dir)
    if not (job.build_dir / "CMakeCache.txt").exists():
        run_quiet(client, container_id, ["find", bdir, "-mindepth", "1", "-delete"])
        return False
    return run_quiet(client, container_id, ["test", "-f", f"{bdir}/build.ninja"])[0] == 0


def copy_outputs_back(client: docker.DockerClient, container_id: str, job: BuildJob) -> None:
    """The build directory, less ``KEPT_REMOTE``, into the host's build directory."""
    bundle = "/tmp/tk-outputs.tar"
    rc, out = run_quiet(client, container_id,
                        ["tar", "-C", str(job.build_dir), "-cf", bundle,
                         *(f"--exclude={p}" for p in KEPT_REMOTE), "."])
    if rc != 0:
        raise TkError(f"cannot pack the build directory in the container: {out.strip()[-300:]}")
    stream, _ = client.api.get_archive(container_id, bundle)
    with tempfile.TemporaryFile() as outer:
        for chunk in stream:
            outer.write(chunk)
        outer.seek(0)
        with tarfile.open(fileobj=outer) as wrapper:  # get_archive wraps the file in a tar
            inner = wrapper.extractfile(os.path.basename(bundle))
            with tarfile.open(fileobj=inner) as tar:
                extract_into(tar, job.build_dir)


def extract_into(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract what an engine sent, refusing anything that would land outside ``dest``
    (checked here on every Python; 3.10.12+/3.11.4+ also apply PEP 706's "data" filter)."""
    base = dest.resolve()
    for m in tar.getmembers():
        # Where the member lands, without following the member itself (an earlier build's
        # symlink of the same name is replaced, not entered).
        name = os.path.normpath(m.name)  # "." is the directory itself
        where = base if name == "." else (base / name).parent.resolve()
        link = m.linkname if m.issym() else ""
        if (os.path.isabs(m.name) or ".." in Path(m.name).parts or m.isdev()
                or not where.is_relative_to(base) or os.path.isabs(link)
                or (link and not (where / link).resolve().is_relative_to(base))):
            raise TkError(f"the engine sent {m.name!r}, which would land outside {dest}")
    tar.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def remote_line(job: BuildJob, run_prefix: list[str], argv: list[str]) -> str:
    """The shell line that does a step on a remote engine by hand: the tree piped in."""
    src = str(job.source_dir.resolve())
    ship = ["tar", "-C", src, "--exclude=.git", "-c", "."]
    inside = f"mkdir -p {shlex.quote(src)} && tar -x -C {shlex.quote(src)} && {shlex.join(argv)}"
    return f"{shlex.join(ship)} | {shlex.join([*run_prefix, 'sh', '-c', inside])}"


def run_quiet(client: docker.DockerClient, container_id: str, argv: list[str],
              user: str = "") -> tuple[int, str]:
    """Run ``argv`` in the container; (exit code, output)."""
    ex = client.api.exec_create(container_id, argv, user=user)
    out = client.api.exec_start(ex["Id"]).decode(errors="replace")
    rc = client.api.exec_inspect(ex["Id"])["ExitCode"]
    return (rc if rc is not None else 1), out


OWNER_PID, OWNER_START, OWNER_HOST = "org.tk.owner-pid", "org.tk.owner-start", "org.tk.owner-host"


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None when there is none: with
    the pid it names one process for good, where a pid alone may be reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, counted after the command name


def owner_labels() -> dict[str, str]:
    return {OWNER_PID: str(os.getpid()), OWNER_START: process_start(os.getpid()) or "",
            OWNER_HOST: socket.gethostname()}


def reap_strays(client: docker.DockerClient) -> list[str]:
    """Remove build containers of this host whose tk process is gone (killed before it could
    remove them: an engine that missed their end); the ids removed."""
    import docker as docker_sdk

    removed = []
    # ignore_removed: a container the engine removes while it is listed (AutoRemove) is gone.
    for ctr in client.containers.list(all=True, filters={"label": OWNER_PID},
                                      ignore_removed=True):
        labels = ctr.labels or {}
        if labels.get(OWNER_HOST) != socket.gethostname():
            continue  # another machine's tk, on a shared engine
        pid = labels.get(OWNER_PID, "")
        if pid.isdigit() and process_start(int(pid)) == labels.get(OWNER_START):
            continue  # its tk is alive
        with contextlib.suppress(docker_sdk.errors.NotFound):
            ctr.remove(force=True)
        removed.append(ctr.id)
    return removed


@contextlib.contextmanager
def build_container(client: docker.DockerClient, image_id: str, *, user: str,
                    binds: dict[str, dict[str, str]], env: dict[str, str], workdir: str,
                    labels: dict[str, str]) -> Iterator[str]:
    """A container that lives exactly as long as this process wants it, however it ends.

    Its main process reads its stdin, which this process holds open through an attached socket
    (StdinOnce): when tk exits, is killed (SIGTERM, SIGKILL) or crashes, the kernel closes the
    socket, the main process sees the end of its input and exits, taking the build's processes
    with it, and the engine removes the container (AutoRemove). Removal on the way out is the
    ordinary path; labels name the owner, so a later build reaps what an engine missed.
    """
    import docker as docker_sdk

    reap_strays(client)
    host_config = client.api.create_host_config(binds=binds, auto_remove=True, init=True,
                                                network_mode=NETWORK)
    created = client.api.create_container(
        image_id, ["sh", "-c", "cat >/dev/null"], user=user, environment=env,
        working_dir=workdir, labels={**labels, **owner_labels()}, host_config=host_config,
        stdin_open=True, detach=False)
    container_id = created["Id"]
    lifeline = None
    try:
        lifeline = client.api.attach_socket(container_id, params={"stdin": 1, "stream": 1})
        client.api.start(container_id)
        yield container_id
    finally:
        # NotFound, or a 409 when the engine is already removing it (AutoRemove).
        with contextlib.suppress(docker_sdk.errors.APIError):
            client.api.remove_container(container_id, force=True)
        if lifeline is not None:
            lifeline.close()


def exec_logged(client: docker.DockerClient, container_id: str, argv: list[str], job: BuildJob,
                events: Handler = ignore) -> tuple[int, float]:
    """Run ``argv`` in the container, appending its output to the log; (rc, seconds)."""
    start = time.monotonic()
    ex = client.api.exec_create(container_id, argv, workdir=str(job.build_dir))
    with job.log.open("a") as out:
        out.write(f"$ {shlex.join(argv)}   # in the container\n")
        out.flush()
        pending = ""
        # Chunks may split a UTF-8 character (GCC quotes with ‘’).
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for chunk in client.api.exec_start(ex["Id"], stream=True):
            text = decoder.decode(chunk)
            out.write(text)
            out.flush()
            pending += text
            *lines, pending = pending.split("\n")
            for line in lines:
                moved = ninja_progress(line)
                if moved is not None:
                    events(moved)
    rc = client.api.exec_inspect(ex["Id"])["ExitCode"]
    return (rc if rc is not None else 1), time.monotonic() - start


def toolchain(client: docker.DockerClient, container_id: str, plan: BuildPlan) -> dict[str, str]:
    """Versions of the tools inside the container, as its own commands report them."""
    probes = dict(TOOL_PROBES)
    if plan.llvm_config:
        probes["llvm"] = f"{shlex.quote(plan.llvm_config)} --version"
    if plan.wants_cuda:
        probes["nvcc"] = "nvcc --version"
    script = "".join(
        f"echo @@{name}; if command -v {cmd.split()[0]} >/dev/null; then {cmd} 2>&1; "
        "else echo absent; fi; " for name, cmd in probes.items())
    _, out = run_quiet(client, container_id, ["sh", "-c", script])
    versions: dict[str, str] = {}
    for block in out.split("@@")[1:]:
        name, _, text = block.partition("\n")
        versions[name.strip()] = version_line(text)
    return versions


