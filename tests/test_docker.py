"""The docker backend and ``tk image`` against the real engine (skipped, with the reason, without).

Container work is slow on a small machine (the toolchain image installs LLVM with apt), so the
base image and the toolchain image are made once per session and every test shares them; both
are content-addressed, so a second session (or CI after ``tk image bootstrap``) reuses them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import socket
import subprocess
import tarfile
from pathlib import Path

import pytest
from bisect_helpers import CHECK, make_history
from minifork import break_build_commit, git, make_minifork
from tcp_engine import hidden_from_engine, mount_namespaces_or_reason, tcp_engine

from toolkit.builds import image
from toolkit.builds.backends import BuildJob
from toolkit.builds.backends import docker as docker_backend
from toolkit.builds.recipes import Request, resolve
from toolkit.errors import TkError, UserError

REPO = Path(__file__).resolve().parent.parent


def engine_or_reason():
    try:
        return image.connect(), None
    except UserError as e:
        return None, str(e)


@pytest.fixture(scope="session")
def engine():
    client, reason = engine_or_reason()
    if client is None:
        pytest.skip(f"no Docker engine: {reason}")
    return client


@pytest.fixture(scope="session")
def base_image(engine) -> image.BootstrapResult:
    """tk/debian:bookworm, made once (bootstrap keeps an existing one)."""
    try:
        return image.bootstrap(client=engine)
    except TkError as e:  # not root, no debootstrap, no mirror reachable
        pytest.skip(f"no base image can be made here: {e}")


def docker_plan(tmp_path_factory, fragments=None, **req):
    fork = make_minifork(tmp_path_factory.mktemp("plan") / "tvm")
    return resolve(Request(fragments=fragments or {}, backend="docker", **req), fork)


@pytest.fixture(scope="session")
def toolchain_image(engine, base_image, tmp_path_factory) -> docker_backend.BuiltImage:
    """The CPU toolchain image every container build here uses (built once, minutes when cold)."""
    plan = docker_plan(tmp_path_factory, {"llvm": ""})
    log = tmp_path_factory.mktemp("image") / "image.log"
    return docker_backend.ensure_image(plan, engine, log)


@pytest.fixture(scope="session")
def cuda_base(engine, toolchain_image, tmp_path_factory) -> tuple[str, str]:
    """A base image holding this host's CUDA toolkit (no NVIDIA registry here): (tag, version).

    Made on the CPU toolchain image, so the CUDA template's apt steps have nothing to fetch.
    """
    nvcc = Path("/usr/local/cuda/bin/nvcc")
    if not nvcc.exists():
        pytest.skip("no CUDA toolkit in /usr/local/cuda to make a CUDA base image from")
    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True).stdout
    version = re.search(r"release (\d+\.\d+)", out).group(1)
    root = Path("/usr/local/cuda").resolve()
    tag = f"tk/test-cuda-base:{version}-{toolchain_image.image_id.split(':')[-1][:12]}"
    with image.exclusive(tag):
        if image.find_image(engine, tag) is None:
            link = "" if root.name == "cuda" else f"RUN ln -sfn {root.name} /usr/local/cuda\n"
            dockerfile = (f"FROM {toolchain_image.tag}\nCOPY {root.name} /usr/local/{root.name}\n"
                          + link).encode()
            context = tmp_path_factory.mktemp("cuda") / "context.tar"
            with tarfile.open(context, "w") as tar:
                info = tarfile.TarInfo("Dockerfile")
                info.size = len(dockerfile)
                tar.addfile(info, io.BytesIO(dockerfile))
                tar.add(root, arcname=root.name)
            with context.open("rb") as f:
                for chunk in engine.api.build(fileobj=f, custom_context=True, tag=tag, rm=True,
                                              decode=True, network_mode="host"):
                    assert "error" not in chunk, chunk["error"]
    return tag, version


# --- without an engine ----------------------------------------------------------------------

def test_apt_mirror_is_read_from_apt_sources(tmp_path):
    (tmp_path / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb [arch=amd64] http://other.example/ubuntu jammy main\n")
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n")
    (d / "old.list.disabled").write_text("deb http://disabled.example/debian bookworm main\n")
    sources = [tmp_path / "sources.list", d]
    assert image.apt_mirror("bookworm", sources) == "http://mirror.example/debian"
    assert image.apt_mirror("jammy", sources) == "http://other.example/ubuntu"
    # A suite no entry names: any Debian archive will do (debootstrap picks the suite).
    assert image.apt_mirror("trixie", sources) == "http://mirror.example/debian"
    with pytest.raises(UserError, match="--mirror"):
        image.apt_mirror("bookworm", [tmp_path / "sources.list"])


def test_dockerfiles_render_from_the_plan(tmp_path_factory):
    cpu = docker_backend.render_dockerfile(docker_plan(tmp_path_factory, {"llvm": "16"}))
    assert "ARG BASE=tk/debian:bookworm\nFROM ${BASE}" in cpu
    assert "ARG LLVM_VERSION=16\n" in cpu and "llvm-${LLVM_VERSION}-dev" in cpu
    assert "ARG CMAKE_VERSION=>=3.26,<4\n" in cpu
    # The base recipe's packages are all installed by the template: no extra layer.
    assert "ARG PACKAGES=\n" in cpu

    cuda = docker_backend.render_dockerfile(docker_plan(tmp_path_factory, {"llvm": "", "cuda": ""}))
    assert "ARG BASE=nvidia/cuda:12.4.0-devel-ubuntu22.04\n" in cuda
    assert "ARG CUDA_VERSION=12.4\n" in cuda and "ARG LLVM_VERSION=15\n" in cuda
    assert 'grep -q "release ${CUDA_VERSION}"' in cuda

    recipe = tmp_path_factory.mktemp("recipe") / "site.toml"
    recipe.write_text('[container]\nbase = "registry.site/cuda:12.2"\ncuda = "12.2"\n'
                      'packages = ["git", "libopenblas-dev"]\n')
    site = docker_backend.render_dockerfile(
        docker_plan(tmp_path_factory, {"cuda": ""}, recipe_files=[recipe]))
    assert "ARG BASE=registry.site/cuda:12.2\n" in site and "ARG CUDA_VERSION=12.2\n" in site
    assert "ARG PACKAGES=libopenblas-dev\n" in site


def test_render_refuses_unknown_args_and_unsafe_values():
    with pytest.raises(UserError, match="no ARG LLVM"):
        image.render_dockerfile("cpu", {"LLVM": "16"})
    with pytest.raises(UserError, match="only letters"):
        image.render_dockerfile("cpu", {"PACKAGES": "git; rm -rf /"})
    with pytest.raises(UserError, match="known: cpu, cuda"):
        image.template_path("rocm")


def test_dry_run_shows_the_rendered_dockerfile(tk, tmp_path):
    fork = make_minifork(tmp_path / "tvm")
    r = tk("build", "-C", str(fork), "--backend", "docker", "--llvm", "16", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert "ARG LLVM_VERSION=16\n" in info["dockerfile"]


def test_no_engine_is_one_line_with_the_fix(tk):
    r = tk("image", "bootstrap", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert r.returncode == 2
    assert r.stderr.startswith("tk: error: no Docker engine answers") and "dockerd" in r.stderr
    assert "Traceback" not in r.stderr


# --- with an engine -------------------------------------------------------------------------

@pytest.mark.docker
def test_bootstrap_is_idempotent(tk, base_image):
    again = image.bootstrap()
    assert (again.tag, again.image_id, again.created) == (base_image.tag, base_image.image_id,
                                                          False)
    r = tk("image", "bootstrap", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"tag": "tk/debian:bookworm", "image_id": base_image.image_id,
                                    "created": False, "mirror": None}


@pytest.mark.docker
@pytest.mark.skipif(os.geteuid() != 0, reason="the debootstrap check comes after the root check")
def test_bootstrap_without_debootstrap_says_how_to_get_it(tk, engine):
    r = tk("image", "bootstrap", "--tag", "tk/test-never-made:1",
           env={"PATH": "/nonexistent"})
    assert r.returncode == 2
    assert "apt-get install -y debootstrap" in r.stderr
    assert image.find_image(engine, "tk/test-never-made:1") is None


@pytest.mark.docker
def test_cuda_dockerfile_stops_early_on_a_base_without_cuda(engine, base_image, tmp_path):
    # No CUDA image can be had here; what can be checked is that the template parses and its
    # first step refuses a base without nvcc, saying why, before any apt work.
    text = image.render_dockerfile("cuda", {"BASE": base_image.tag})
    log = tmp_path / "image.log"
    with pytest.raises(TkError, match="image build failed: BASE has no nvcc: use a CUDA devel"):
        docker_backend.stream_build(engine, "tk/test-cuda-refused:1",
                                    image.build_context(text, {}), {}, log, lambda line: None)
    output = log.read_text()
    assert "BASE has no nvcc: use a CUDA devel image" in output
    assert "apt-get" not in output.split("BASE has no nvcc")[0].split("Step")[-1]
    assert image.find_image(engine, "tk/test-cuda-refused:1") is None


def test_a_worktree_mounts_its_repository_read_only(tmp_path):
    fork = make_minifork(tmp_path / "tvm")
    wt = tmp_path / "wt"
    git(fork, "worktree", "add", "-q", str(wt))
    plan = resolve(Request(backend="docker"), wt)
    job = BuildJob(plan=plan, source_dir=wt, build_dir=tmp_path / "elsewhere",
                   log=tmp_path / "log")
    assert docker_backend.mounts(job) == {
        str(wt.resolve()): "rw", str((tmp_path / "elsewhere").resolve()): "rw",
        str((fork / ".git").resolve()): "ro"}


@pytest.mark.docker
@pytest.mark.slow
def test_unchanged_plan_reuses_its_image_and_a_changed_one_reuses_layers(
        engine, toolchain_image, tmp_path_factory):
    plan = docker_plan(tmp_path_factory, {"llvm": ""})
    log = tmp_path_factory.mktemp("again") / "image.log"
    again = docker_backend.ensure_image(plan, engine, log)
    assert again.cached and again.image_id == toolchain_image.image_id
    assert again.tag == toolchain_image.tag

    # One more apt package: a new image, but every layer before PACKAGES comes from the cache.
    recipe = tmp_path_factory.mktemp("recipe") / "more.toml"
    recipe.write_text('[container]\npackages = ["less"]\n')
    plan = docker_plan(tmp_path_factory, {"llvm": ""}, recipe_files=[recipe])
    more = docker_backend.ensure_image(plan, engine, log)
    assert not more.cached and more.image_id != toolchain_image.image_id
    steps = [ln for ln in log.read_text().splitlines() if ln.startswith("Step ")]
    first_changed = next(i for i, ln in enumerate(steps) if "ARG PACKAGES=less" in ln)
    assert more.cached_steps >= first_changed - 2  # ARG and FROM steps print no cache line
    engine.images.remove(more.tag)


@pytest.mark.docker
@pytest.mark.slow
def test_container_build_of_the_fork_is_owned_by_the_caller(tk, tmp_path, engine, base_image,
                                                            toolchain_image):
    fork = make_minifork(tmp_path / "tvm")
    uid, gid = (1000, 1000) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    env = {"TK_CACHE": str(tmp_path / "cache")}
    if os.geteuid() == 0:
        # As under sudo: the tree belongs to a user and the build must too.
        subprocess.run(["chown", "-R", f"{uid}:{gid}", str(fork)], check=True)
        env.update(SUDO_UID=str(uid), SUDO_GID=str(gid))

    r = tk("build", "-C", str(fork), "--backend", "docker", "--llvm", "--ccache", "--json",
           env=env)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["image_id"] == toolchain_image.image_id
    assert m["toolchain"]["os"].startswith("Debian GNU/Linux 12")
    assert m["toolchain"]["llvm"].startswith("15.")
    assert m["toolchain"]["cmake"].startswith("cmake version 3.")
    assert m["cmake_values"]["CMAKE_COMMAND"].startswith("/usr/local/lib/python3")  # pip's
    assert m["check"]["ok"], m["check"]
    assert m["commands"][0].startswith(f"docker run --rm --network host -u {uid}:{gid} ")

    bdir = Path(m["build_dir"])
    made = [p for p in [bdir, *bdir.rglob("*")] if p.name != ".tk-plan"]
    assert (bdir / "libtvm.so").exists() and len(made) > 20
    strangers = [str(p) for p in made if (p.lstat().st_uid, p.lstat().st_gid) != (uid, gid)]
    assert strangers == []
    # The container's LLVM is inside the library, as the library itself reports.
    assert m["check"]["libinfo"]["LLVM_VERSION"] == m["toolchain"]["llvm"]

    # Again, forced past the store: same image, no image build, configure skipped, Ninja no-op.
    # The compiler cache is a volume of the caller's, written as the caller.
    count = engine.containers.run(
        base_image.tag, ["sh", "-c", f"find /ccache -type f -user {uid} | wc -l"],
        volumes={f"tk-ccache-{uid}": {"bind": "/ccache", "mode": "ro"}}, network_mode="host",
        remove=True)
    assert int(count) > 0

    r = tk("build", "-C", str(fork), "--backend", "docker", "--llvm", "--ccache", "--force",
           "--json", env=env)
    assert r.returncode == 0, r.stderr
    m2 = json.loads(r.stdout)
    assert m2["image_id"] == m["image_id"]
    assert m2["timings"]["configure"] == 0.0
    assert m2["artifacts"] == m["artifacts"]


@pytest.mark.docker
def test_image_build_finds_the_image_a_build_would_use(tk, toolchain_image):
    r = tk("image", "build", "--llvm", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["tag"], out["image_id"], out["cached"]) == (toolchain_image.tag,
                                                            toolchain_image.image_id, True)


@pytest.mark.docker
@pytest.mark.slow
def test_a_failing_container_build_says_what_reproduces_it(tk, tmp_path, toolchain_image):
    fork = make_minifork(tmp_path / "tvm")
    break_build_commit(fork)
    r = tk("build", "-C", str(fork), "--backend", "docker", env={"TK_CACHE": str(tmp_path / "c")})
    assert r.returncode == 1
    assert "compile failed" in r.stderr and "module.cc" in r.stderr
    reproduce = r.stderr.split("reproduce: ", 1)[1].strip()
    assert reproduce.startswith("docker run --rm --network host -u ")
    assert f" {toolchain_image.tag} cmake --build " in reproduce
    assert "Traceback" not in r.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_cuda_build_in_a_container_without_a_gpu(tk, tmp_path, cuda_base):
    tag, version = cuda_base
    fork = make_minifork(tmp_path / "tvm")
    recipe = tmp_path / "site-cuda.toml"
    recipe.write_text(f'[container]\nbase = "{tag}"\ncuda = "{version}"\n')
    r = tk("build", "-C", str(fork), "--backend", "docker", "--cuda", "--recipe", str(recipe),
           "--json", env={"TK_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["toolchain"]["image"].startswith("tk/build-cuda:")
    assert f"release {version}" in m["toolchain"]["nvcc"]
    assert m["cmake_values"]["CMAKE_CUDA_ARCHITECTURES"] == "75"
    # The library itself says it was built with that CUDA (found by CMake in the container).
    assert m["check"]["cuda"] is True
    assert m["check"]["libinfo"]["USE_CUDA"] == "ON"


def test_what_an_engine_sends_back_stays_in_the_build_directory(tmp_path):
    def archive(*members: tuple[str, bytes, str]) -> tarfile.TarFile:
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w") as tar:
            for name, kind, link in members:
                info = tarfile.TarInfo(name)
                info.type, info.linkname = kind, link
                tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
        data.seek(0)
        return tarfile.open(fileobj=data)

    libs = archive(("./libtvm.so.1", tarfile.REGTYPE, ""),
                   ("./libtvm.so", tarfile.SYMTYPE, "libtvm.so.1"))
    docker_backend.extract_into(libs, tmp_path)
    docker_backend.extract_into(archive(("./libtvm.so", tarfile.SYMTYPE, "libtvm.so.1")),
                                tmp_path)  # again, over the link an earlier build left
    assert os.readlink(tmp_path / "libtvm.so") == "libtvm.so.1"
    for bad in [("../escaped", tarfile.REGTYPE, ""), ("./abs", tarfile.SYMTYPE, "/etc/passwd"),
                ("./up", tarfile.SYMTYPE, "../../x")]:
        with pytest.raises(TkError, match="would land outside"):
            docker_backend.extract_into(archive(bad), tmp_path)
    assert not (tmp_path.parent / "escaped").exists() and not (tmp_path / "abs").exists()


@pytest.fixture
def remote_engine(engine, toolchain_image) -> str:
    """``DOCKER_HOST`` of the local engine reached over TCP: an engine tk takes to be elsewhere."""
    reason = mount_namespaces_or_reason()
    if reason:
        pytest.skip(reason)
    with tcp_engine() as url:
        yield url


def remove_build_volumes(engine, under: Path) -> None:
    """The remote build volumes of build directories under ``under``, whatever the test did."""
    import docker

    for vol in engine.volumes.list(filters={"label": "org.tk.build-dir"}):
        if vol.attrs["Labels"]["org.tk.build-dir"].startswith(f"{under}/"):
            with contextlib.suppress(docker.errors.NotFound):
                vol.remove(force=True)


def asked_options(record: dict) -> dict[str, str]:
    return {k: v for k, v in record["cmake_values"].items() if k.startswith(("USE_", "HIDE_"))}


@pytest.mark.docker
@pytest.mark.slow
def test_a_remote_engine_builds_a_tree_it_cannot_see(tk, tmp_path, engine, remote_engine):
    fork = make_minifork(tmp_path / "tvm")
    # The same plan on the local engine, which mounts the tree: what the remote one must use.
    r = tk("build", "-C", str(fork), "--backend", "docker", "--llvm", "--json",
           env={"TK_CACHE": str(tmp_path / "local-cache")})
    assert r.returncode == 0, r.stderr
    local = json.loads(r.stdout)
    hidden, out = tmp_path / "hidden", tmp_path / "out"
    hidden.mkdir(), out.mkdir()
    tree = hidden / "tvm"
    script = f"""
cp -a {fork} {tree}
$TK build -C {tree} --backend docker --llvm --json > {out}/first.json
echo 'extern "C" int tk_changed() {{ return 1; }}' >> {tree}/src/runtime/registry.cc
$TK build -C {tree} --backend docker --llvm --json > {out}/second.json
find {tree} -name '*.o' | wc -l > {out}/objects
"""
    r = hidden_from_engine(script, hidden, {"DOCKER_HOST": remote_engine,
                                            "TK_CACHE": str(tmp_path / "cache")})
    first = json.loads((out / "first.json").read_text() or "{}")
    second = json.loads((out / "second.json").read_text() or "{}") if r.returncode == 0 else {}
    try:
        assert r.returncode == 0, r.stderr
        # The tree went in by copy: a mount of it would be empty in the container.
        line = first["commands"][0]
        assert line.startswith(f"tar -C {tree} --exclude=.git -c . | docker run ")
        assert f"-v {tree}:" not in line and " -v tk-build-" in line
        assert first["check"]["ok"] and second["check"]["ok"], (first["check"], second["check"])
        # Built as the plan says (its config.cmake went in with the tree), as on the local
        # engine: same build id, same options, and the library itself says so.
        assert first["id"] == local["id"] and first["mismatches"] == []
        assert asked_options(first) == asked_options(local)
        assert first["cmake_values"]["HIDE_PRIVATE_SYMBOLS"] == "ON"
        info = first["check"]["libinfo"]
        assert info["HIDE_PRIVATE_SYMBOLS"] == "ON" and info["LLVM_VERSION"].startswith("15.")
        # The second build found its configured build directory in the engine's volume and
        # compiled the changed file alone.
        assert second["timings"]["configure"] == 0.0
        log = Path(second["log"]).read_text()
        assert "registry.cc.o" in log and "device_api.cc.o" not in log
        # Libraries came back, new ones where the source changed; objects stayed in the engine.
        libs = {a["name"]: a["sha256"] for a in second["artifacts"]}
        assert {"libtvm.so", "libtvm_runtime.so"} <= set(libs)
        assert libs["libtvm_runtime.so"] != {a["name"]: a["sha256"]
                                            for a in first["artifacts"]}["libtvm_runtime.so"]
        assert (out / "objects").read_text().strip() == "0"
        # The build directory is gone with the namespace's tmpfs: gc removes its volume, and
        # only that one (a volume of another machine's, or of a directory that exists, stays).
        volume = re.search(r"-v (tk-build-\w+):", line).group(1)
        assert engine.volumes.get(volume).attrs["Labels"]["org.tk.build-dir"] == str(
            Path(first["build_dir"]))
        kept = [engine.volumes.create(f"tk-test-{tmp_path.name}-{i}", labels=labels)
                for i, labels in enumerate([
                    {"org.tk.build-host": "another-machine", "org.tk.build-dir": "/gone"},
                    {"org.tk.build-host": socket.gethostname(), "org.tk.build-dir": str(out)}])]
        gc = tk("build", "gc", env={"DOCKER_HOST": remote_engine,
                                    "TK_CACHE": str(tmp_path / "cache")})
        assert gc.returncode == 0, gc.stderr
        # (Volumes an earlier, interrupted run left behind go too: their directories are gone.)
        assert re.search(r"removed [1-9]\d* build volumes on tcp://", gc.stdout), gc.stdout
        names = {v.name for v in engine.volumes.list()}
        assert volume not in names and {v.name for v in kept} <= names
        for v in kept:
            v.remove()
    finally:
        remove_build_volumes(engine, tmp_path)


@pytest.mark.docker
@pytest.mark.slow
def test_bisect_slots_build_at_once_on_a_remote_engine(tmp_path, engine, remote_engine):
    repo = tmp_path / "fork"
    shas = make_history(repo, commits=16, culprit=11)
    hidden, out = tmp_path / "hidden", tmp_path / "out"
    hidden.mkdir(), out.mkdir()
    # The store and the slots' worktrees live where the engine cannot see them either.
    script = f"""
cp -a {repo} {hidden}/fork
export TK_CACHE={hidden}/cache
$TK bisect start --source {hidden}/fork --good {shas[0]} --bad HEAD --backend docker \\
    --parallel 3 --check {shlex.quote(CHECK)}
$TK bisect run --source {hidden}/fork
$TK bisect report --json --source {hidden}/fork > {out}/report.json
for m in $TK_CACHE/builds/*/manifest.json; do cp $m {out}/$(basename $(dirname $m)).json; done
"""
    r = hidden_from_engine(script, hidden, {"DOCKER_HOST": remote_engine})
    commands = [json.loads(m.read_text())["commands"][0] for m in out.glob("*.json")
                if m.name != "report.json"]
    try:
        assert r.returncode == 0, r.stderr
        report = json.loads((out / "report.json").read_text())
        assert report["first_bad"]["hash"] == shas[11] and report["confirmed"]
        # Every build ran on the engine, the tree copied in.
        assert commands and all(c.startswith("tar -C ") for c in commands)
        # Spare slots built ahead while slot 0 built: spans of different slots overlap.
        spans = report["build_spans"]
        assert report["built_ahead"] >= 1
        assert any(a["slot"] != b["slot"] and a["started"] < b["started"] + b["seconds"]
                   and b["started"] < a["started"] + a["seconds"]
                   for a in spans for b in spans)
    finally:
        remove_build_volumes(engine, tmp_path)


@pytest.mark.docker
def test_an_engine_lost_mid_build_is_one_line_and_stores_nothing(tk, tmp_path, engine,
                                                                toolchain_image):
    """The engine stops answering while a step runs in the container (its connection severed,
    as a remote machine that goes away): one line naming the engine and the step, exit 1 -
    not an internal ConnectionError - and no build stored."""
    if mount_namespaces_or_reason():
        pytest.skip(mount_namespaces_or_reason())
    fork = make_minifork(tmp_path / "tvm")
    cache = {"TK_CACHE": str(tmp_path / "cache")}
    with tcp_engine(cut_after=b"/exec/", delay=0.5) as url:
        r = tk("build", "-C", str(fork), "--backend", "docker", "--llvm",
               env={**cache, "DOCKER_HOST": url}, timeout=600)
    assert r.returncode == 1, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("tk: error")]
    assert len(errors) == 1 and "internal error" not in r.stderr, r.stderr
    assert f"the Docker engine at {url} stopped answering" in errors[0]
    listed = tk("build", "ls", "--json", env=cache)
    assert json.loads(listed.stdout)["builds"] == []
    remove_build_volumes(engine, tmp_path)
