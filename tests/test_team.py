"""Builds a team shares, for real: Debian's docker-registry and redis-server on 127.0.0.1,
and two "machines" on this one - each its own TK_CACHE, its own (empty) ccache directory, and
the miniature fork at its own path.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from minifork import add_source_commit, make_minifork
from team_helpers import blob_data, dying_relay, redis, registry, token_service

from toolkit.builds import oci
from toolkit.builds.team import TeamSettings, redact

pytestmark = pytest.mark.skipif(
    not (shutil.which("cmake") and shutil.which("ninja") and shutil.which("ccache")),
    reason="needs cmake, ninja and ccache")

REPO = "team/tvm"


def machine(tmp_path: Path, name: str, **more: str) -> dict[str, str]:
    """The environment of one machine of the team: its store, its ccache, no config of the
    person running the tests."""
    home = tmp_path / name
    home.mkdir(parents=True, exist_ok=True)
    return {"TK_CACHE": str(home / "cache"), "CCACHE_DIR": str(home / "ccache"),
            "TK_CONFIG": str(home / "config.toml"), "DOCKER_CONFIG": str(home / "docker"),
            "TK_REGISTRY": "", "TK_CCACHE_REMOTE": "", **more}


def ok_json(tk, *args: str, env: dict[str, str]) -> dict:
    r = tk(*args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tk: error:")]


def stored_files(cache: str | Path) -> list[Path]:
    """Everything a store holds but its lock files, and what no command may leave behind."""
    root = Path(cache)
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")
                  and p.name not in ("last-failure.log", "tools.json", "built.json"))


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def servers(tmp_path):
    with registry(tmp_path / "registry") as reg, redis(tmp_path / "redis") as red:
        yield reg, red


@pytest.fixture
def pushed(tk, tmp_path, servers):
    """Machine one built the fork through the team's ccache and pushed the build."""
    reg, red = servers
    one = machine(tmp_path, "one")
    fork = make_minifork(tmp_path / "one" / "tvm")
    built = ok_json(tk, "build", "-C", str(fork), "--ccache-remote", f"redis://{red.address}",
                    env=one)
    sent = ok_json(tk, "build", "push", built["id"], f"{reg.address}/{REPO}", env=one)
    return built, sent, one


def test_a_second_machine_gets_the_build_from_the_registry_without_compiling(
        tk, tmp_path, servers, pushed):
    reg, red = servers
    built, sent, _ = pushed
    assert built["from"] == "built"
    assert built["ccache"]["compiles"] == 4 and built["ccache"]["remote_hits"] == 0
    assert sent["reference"].startswith(f"{reg.address}/{REPO}:{built['id']}-")
    assert sent["uploaded"] == sent["blobs"] == 4  # two libraries, the record, the config

    # The second machine: the same sources at another path, an empty ccache, its own store.
    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}")
    fork = make_minifork(tmp_path / "two" / "src" / "elsewhere" / "tvm")
    got = ok_json(tk, "build", "-C", str(fork), env=two)
    assert got["from"] == "registry" and got["id"] == built["id"]
    assert got["pulled"]["reference"] == sent["reference"]
    # Nothing compiled here: no build directory in the tree, nothing in its ccache.
    assert not list(fork.glob("build-*"))
    assert not Path(two["CCACHE_DIR"]).exists() or not any(Path(two["CCACHE_DIR"]).rglob("*.o"))
    # The libraries are the first machine's bytes, in this machine's store.
    theirs = {a["name"]: a["sha256"] for a in built["artifacts"]}
    for art in got["artifacts"]:
        assert art["path"].startswith(two["TK_CACHE"])
        assert sha256(art["path"]) == theirs[art["name"]]
    # Checked here, against this tree: import tvm found this machine's tree.
    assert got["check"]["ok"]
    assert got["check"]["tvm_file"] == str(fork / "python" / "tvm" / "__init__.py")
    assert got["source"]["dir"] == str(fork)
    assert got["check"]["provenance"]["note"] == "as checked where it was built"
    # What the user reads says where it came from, and the build is in use with tk env.
    text = tk("build", "show", got["id"], env=two).stdout
    assert f"pulled: from {sent['reference']}" in text
    env = tk("env", got["id"], env=two)
    assert env.returncode == 0 and f"{two['TK_CACHE']}/builds/{got['id']}/lib" in env.stdout
    # Asked again: the local store serves it.
    assert ok_json(tk, "build", "-C", str(fork), env=two)["from"] == "store"

    # A forced rebuild there compiles, and the team's ccache answers (almost) every compile.
    rebuilt = ok_json(tk, "build", "-C", str(fork), "--force", "--ccache-remote",
                      f"redis://{red.address}", env=two)
    stats = rebuilt["ccache"]
    assert rebuilt["from"] == "built" and stats["compiles"] == 4
    assert stats["remote_hits"] / stats["compiles"] >= 0.95, stats
    # Its own check, of its own build directory: its tree's sources.
    assert rebuilt["pulled"] is None
    assert rebuilt["check"]["provenance"] == {"objects": 4, "outside": [], "outside_count": 0,
                                              "note": ""}
    assert rebuilt["check"]["ok"]


def test_a_build_the_registry_does_not_have_is_built_here(tk, tmp_path, servers, pushed):
    reg, _ = servers
    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}")
    fork = make_minifork(tmp_path / "two" / "tvm")
    add_source_commit(fork, "v2")  # another key
    r = tk("build", "-C", str(fork), "--json", env=two)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["from"] == "built"
    assert f"{reg.address}/{REPO} has no build " in r.stderr and "building here" in r.stderr


def test_a_tampered_layer_is_refused_and_nothing_is_stored(tk, tmp_path, servers, pushed):
    reg, _ = servers
    built, sent, _ = pushed
    runtime = next(a for a in built["artifacts"] if a["name"] == "libtvm_runtime.so")
    data = blob_data(reg.root, runtime["sha256"])
    damaged = bytearray(data.read_bytes())
    damaged[1000] ^= 0xFF
    data.write_bytes(bytes(damaged))

    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}")
    fork = make_minifork(tmp_path / "two" / "tvm")
    r = tk("build", "-C", str(fork), env=two)
    assert r.returncode == 1
    [line] = error_lines(r.stderr)
    assert "libtvm_runtime.so" in line and "is not what its digest says" in line
    assert "tk build --force builds it here" in line
    assert "Traceback" not in r.stderr
    assert stored_files(two["TK_CACHE"]) == []
    assert not list(fork.glob("build-*"))  # refused, not built over

    r = tk("build", "pull", sent["reference"], "-C", str(fork), env=two)
    assert r.returncode == 1 and len(error_lines(r.stderr)) == 1
    assert stored_files(two["TK_CACHE"]) == []


def republish(reg_address: str, tag: str, edit) -> None:
    """Push the manifest under ``tag`` again with ``edit`` applied to it (and the blobs it
    then names): another publisher of the same repository, with consistent digests."""
    client = oci.Registry(oci.Reference.parse(f"{reg_address}/{REPO}"))
    body, _ = client.get_manifest(oci.Reference.parse(f"{reg_address}/{REPO}:{tag}"))
    manifest = edit(client, json.loads(body))
    client.put_manifest(tag, json.dumps(manifest).encode())


def put_blob(client: oci.Registry, data: bytes) -> dict:
    digest = oci.sha256_digest(data)
    client.push_blob(digest, len(data), lambda: data)
    return {"digest": digest, "size": len(data)}


def test_an_edited_record_and_a_foreign_artifact_are_refused(tk, tmp_path, servers, pushed):
    reg, _ = servers
    built, sent, _ = pushed
    tag = sent["reference"].split(":", 2)[2].split("@")[0]
    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}")
    fork = make_minifork(tmp_path / "two" / "tvm")

    def edit_record(client, manifest):
        layer = next(d for d in manifest["layers"] if d["mediaType"].endswith("record.v1+json"))
        record = json.loads(Path(built["log"]).parent.joinpath("manifest.json").read_text())
        record["plan"]["options"]["USE_LLVM"] = "ON"  # the same id, another plan
        layer.update(put_blob(client, json.dumps(record).encode()))
        return manifest

    republish(reg.address, tag, edit_record)
    r = tk("build", "-C", str(fork), env=two)
    assert r.returncode == 1, r.stderr
    [line] = error_lines(r.stderr)
    assert "its record's id is not the key of its plan and tree" in line
    assert stored_files(two["TK_CACHE"]) == []

    def foreign(client, manifest):
        config = put_blob(client, b'{"architecture": "amd64", "os": "linux"}')
        return {"schemaVersion": 2, "mediaType": oci.MANIFEST_TYPE,
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
                "layers": []}

    republish(reg.address, tag, foreign)
    r = tk("build", "pull", f"{reg.address}/{REPO}:{tag}", "-C", str(fork), env=two)
    assert r.returncode == 1
    [line] = error_lines(r.stderr)
    assert "is not a tk build (application/vnd.oci.image.config.v1+json)" in line


def test_the_registry_going_away_mid_pull_is_one_line_and_nothing_is_half_stored(
        tk, tmp_path, servers, pushed):
    reg, _ = servers
    built, sent, _ = pushed
    runtime = next(a for a in built["artifacts"] if a["name"] == "libtvm_runtime.so")
    two = machine(tmp_path, "two")
    fork = make_minifork(tmp_path / "two" / "tvm")
    with dying_relay(reg, runtime["sha256"].encode()) as relay:
        ref = sent["reference"].replace(reg.address, relay)
        r = tk("build", "pull", ref, "-C", str(fork), env=two)
    assert reg.proc.poll() is not None  # the registry is gone
    assert r.returncode == 1, r.stderr
    [line] = error_lines(r.stderr)
    assert "went away mid-pull" in line or "did not answer" in line, line
    assert "Traceback" not in r.stderr
    assert stored_files(two["TK_CACHE"]) == []
    assert ok_json(tk, "build", "ls", env=two)["builds"] == []
    gc = tk("build", "gc", env=two)
    assert gc.returncode == 0, gc.stderr


def test_a_pull_killed_mid_blob_leaves_no_build_and_gc_removes_what_it_wrote(
        tk, tmp_path, servers, pushed):
    reg, _ = servers
    built, sent, _ = pushed
    runtime = next(a for a in built["artifacts"] if a["name"] == "libtvm_runtime.so")
    two = machine(tmp_path, "two")
    fork = make_minifork(tmp_path / "two" / "tvm")
    # TK_NO_FORK: the work in the process the test kills (not in tk's guarded worker).
    env = {**os.environ, **two, "TK_NO_FORK": "1", "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    blob_get = f"GET /v2/{REPO}/blobs/sha256:{runtime['sha256']}".encode()
    with dying_relay(reg, blob_get, stall=True) as relay:
        ref = sent["reference"].replace(reg.address, relay)
        proc = subprocess.Popen([sys.executable, "-m", "toolkit", "build", "pull", ref, "-C",
                                 str(fork)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while not any(Path(two["TK_CACHE"]).rglob("*.tmp")):  # the blob being written
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline
                time.sleep(0.1)
        finally:
            proc.kill()  # as a machine that loses power mid-blob
            proc.wait()
            proc.stderr.close()
    assert stored_files(two["TK_CACHE"]) != []  # the half blob, the entry it was for
    assert ok_json(tk, "build", "ls", env=two)["builds"] == []
    gc = tk("build", "gc", env=two)
    assert gc.returncode == 0, gc.stderr
    assert stored_files(two["TK_CACHE"]) == [], gc.stdout


def test_tk_build_builds_here_when_the_registry_goes_away_mid_pull(
        tk, tmp_path, servers, pushed):
    reg, _ = servers
    built, _, _ = pushed
    runtime = next(a for a in built["artifacts"] if a["name"] == "libtvm_runtime.so")
    fork = make_minifork(tmp_path / "two" / "tvm")
    with dying_relay(reg, runtime["sha256"].encode()) as relay:
        two = machine(tmp_path, "two", TK_REGISTRY=f"{relay}/{REPO}")
        r = tk("build", "-C", str(fork), "--json", env=two)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["from"] == "built"
    assert "mid-pull" in r.stderr and "building here" in r.stderr


def docker_config(home: str, config: dict) -> None:
    Path(home).mkdir(parents=True, exist_ok=True)
    (Path(home) / "config.json").write_text(json.dumps(config))


def test_credentials_come_from_dockers_config_and_helpers_and_are_never_written(
        tk, tmp_path):
    secret = "pa55-w0rd-not-in-any-log"
    fork = make_minifork(tmp_path / "one" / "tvm")
    with registry(tmp_path / "registry", users={"alice": secret}) as reg:
        repo = f"{reg.address}/{REPO}"
        one = machine(tmp_path, "one")
        built = ok_json(tk, "build", "-C", str(fork), env=one)
        # No credentials: refused, saying how to give them.
        r = tk("build", "push", built["id"], repo, env=one)
        assert r.returncode == 1
        [line] = error_lines(r.stderr)
        assert "no credentials found (docker login" in line and "401" in line
        # What docker login writes: auths.
        auth = base64.b64encode(f"alice:{secret}".encode()).decode()
        docker_config(one["DOCKER_CONFIG"], {"auths": {f"http://{reg.address}": {"auth": auth}}})
        sent = ok_json(tk, "build", "push", built["id"], repo, env=one)
        # A wrong password, from the environment (which comes first): refused, not shown.
        r = tk("build", "push", built["id"], repo,
               env={**one, "TK_REGISTRY_USER": "alice", "TK_REGISTRY_PASSWORD": "wrong"})
        assert r.returncode == 1 and "TK_REGISTRY_USER/TK_REGISTRY_PASSWORD" in r.stderr
        assert "wrong" not in r.stderr
        # A credential helper, as credHelpers names it for this registry.
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        helper = bin_dir / "docker-credential-tktest"
        helper.write_text(f"#!{sys.executable}\nimport json, sys\n"
                          f"server = sys.stdin.read().strip()\n"
                          f"if server != {reg.address!r}:\n"
                          f"    print('credentials not found'); sys.exit(1)\n"
                          f"print(json.dumps({{'Username': 'alice', 'Secret': {secret!r}}}))\n")
        helper.chmod(0o755)
        two = machine(tmp_path, "two", TK_REGISTRY=repo,
                      PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        docker_config(two["DOCKER_CONFIG"], {"credHelpers": {reg.address: "tktest"}})
        fork_two = make_minifork(tmp_path / "two" / "tvm")
        got = ok_json(tk, "build", "-C", str(fork_two), env=two)
        assert got["from"] == "registry" and got["pulled"]["reference"] == sent["reference"]
    # The secret is in no file either store wrote.
    for home in (one, two):
        for path in Path(home["TK_CACHE"]).rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path


def test_a_registry_with_bearer_tokens_is_pushed_to_and_pulled_from(tk, tmp_path):
    """The auth GHCR, Harbor and the clouds' registries use: a 401 names a token service,
    which grants a token for the scope asked, to the credentials given."""
    secret = "token-service-password"
    fork = make_minifork(tmp_path / "one" / "tvm")
    with token_service(tmp_path / "token", {"bob": secret}) as tokens, \
            registry(tmp_path / "registry", token=tokens) as reg:
        repo = f"{reg.address}/{REPO}"
        one = machine(tmp_path, "one")
        built = ok_json(tk, "build", "-C", str(fork), env=one)
        r = tk("build", "push", built["id"], repo, env=one)  # no credentials: no token
        assert r.returncode == 1
        [line] = error_lines(r.stderr)
        assert f"the token service of {reg.address} refused" in line and "no credentials" in line
        creds = {"TK_REGISTRY_USER": "bob", "TK_REGISTRY_PASSWORD": secret}
        sent = ok_json(tk, "build", "push", built["id"], repo, env={**one, **creds})
        # The registry names the actions in no fixed order (Go map order): compare them as sets.
        assert {"pull", "push"} in granted_actions(tokens.issued, REPO)
        two = machine(tmp_path, "two", TK_REGISTRY=repo, **creds)
        got = ok_json(tk, "build", "-C", str(make_minifork(tmp_path / "two" / "tvm")), env=two)
        assert got["from"] == "registry" and got["pulled"]["reference"] == sent["reference"]
        assert {"pull"} in granted_actions(tokens.issued, REPO)


def granted_actions(scopes: list[str], repo: str) -> list[set[str]]:
    """The action sets the token service granted on `repo`, one per token issued."""
    prefix = f"repository:{repo}:"
    return [set(s[len(prefix):].split(",")) for s in scopes if s.startswith(prefix)]


def test_the_remote_ccache_password_is_never_shown_or_recorded(tk, tmp_path):
    secret = "redis-secret-in-the-url"
    fork = make_minifork(tmp_path / "one" / "tvm")
    with redis(tmp_path / "redis", password=secret) as red:
        url = f"redis://{secret}@{red.address}"
        one = machine(tmp_path, "one", TK_CCACHE_REMOTE=url)
        r = tk("build", "-C", str(fork), env=one)
        assert r.returncode == 0, r.stderr
        assert f"from redis://***@{red.address}" in r.stdout
        shutil.rmtree(one["CCACHE_DIR"])  # an empty local cache: only the remote can answer
        for built_here in fork.glob("build-*"):
            shutil.rmtree(built_here)  # else Ninja has nothing to compile
        again = ok_json(tk, "build", "-C", str(fork), "--force", env=one)
    assert again["ccache"]["remote_hits"] == again["ccache"]["compiles"] == 4
    assert secret not in r.stdout + r.stderr + json.dumps(again)
    for path in Path(one["TK_CACHE"]).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("url, message", [
    ("ftp://cache.example.com", "--ccache-remote ftp://cache.example.com: not a storage ccache "
     "knows (redis://HOST[:PORT], redis+unix:PATH, http://HOST[:PORT]/PATH or file:DIR)"),
    ("redis://:pw@cache.example.com", "--ccache-remote redis://***@cache.example.com: ccache "
     "reads a redis password as redis://PASSWORD@HOST:PORT or redis://USER:PASSWORD@HOST:PORT"),
])
def test_a_remote_ccache_cannot_use_is_refused_before_building(tk, tmp_path, url, message):
    fork = make_minifork(tmp_path / "tvm")
    env = machine(tmp_path, "one")
    r = tk("build", "-C", str(fork), "--ccache-remote", url, env=env)
    assert r.returncode == 2
    assert error_lines(r.stderr) == [f"tk: error: {message}"]
    assert not list(fork.glob("build-*"))


def test_a_plan_that_does_not_compile_through_ccache_says_the_remote_is_not_used(
        tk, tmp_path):
    fork = make_minifork(tmp_path / "tvm")
    env = machine(tmp_path, "one")
    r = tk("build", "-C", str(fork), "--set", "USE_CCACHE=OFF", "--ccache-remote",
           "redis://127.0.0.1:6379", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert ("warning: this plan does not compile through ccache (USE_CCACHE=OFF, no ccache "
            "here, or another launcher): the remote storage redis://127.0.0.1:6379 is not "
            "used") in r.stderr
    built = json.loads(r.stdout)
    assert built["from"] == "built" and built["ccache"] is None
    assert "ccache" not in built["toolchain"]


@pytest.mark.parametrize("args, message", [
    (["push", "abc", "not-a-registry"], "'not-a-registry' is not a registry reference"),
    (["push", "abc", "127.0.0.1:5000/Team/TVM"], "is not a repository name"),
    (["push", "abc"], "no registry to push to"),
    (["pull", "127.0.0.1:5000/team/tvm"], "name the build"),
    (["pull", "127.0.0.1:5000/team/tvm@sha256:abc"], "is not a sha256 digest"),
])
def test_bad_references_are_the_users_to_fix(tk, tmp_path, args, message):
    fork = make_minifork(tmp_path / "tvm")
    env = machine(tmp_path, "one")
    r = tk("build", *args, *(["-C", str(fork)] if args[0] == "pull" else []), env=env)
    assert r.returncode == 2, r.stderr
    [line] = error_lines(r.stderr)
    assert message in line


def test_a_registry_that_does_not_answer_is_one_line(tk, tmp_path):
    fork = make_minifork(tmp_path / "tvm")
    env = machine(tmp_path, "one")
    with socket_closed_port() as port:
        r = tk("build", "pull", f"127.0.0.1:{port}/team/tvm:abc", "-C", str(fork), env=env)
    assert r.returncode == 1
    assert error_lines(r.stderr) == [
        f"tk: error: registry 127.0.0.1:{port} did not answer: Connection refused"]


def socket_closed_port():
    """A port nothing listens on (taken, then given back)."""
    import contextlib

    from net_helpers import free_port

    return contextlib.nullcontext(free_port())


def test_settings_come_from_the_command_line_the_environment_then_the_config(
        tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[team]\nregistry = "reg.example.com/team/tvm"\n'
                      'ccache-remote = "redis://:pw@cache.example.com:6379"\n')
    monkeypatch.setenv("TK_CONFIG", str(config))
    for name in ("TK_REGISTRY", "TK_CCACHE_REMOTE"):
        monkeypatch.delenv(name, raising=False)
    assert TeamSettings.load() == TeamSettings("reg.example.com/team/tvm",
                                               "redis://:pw@cache.example.com:6379")
    monkeypatch.setenv("TK_REGISTRY", "")  # off, whatever the file says
    assert TeamSettings.load().registry is None
    assert TeamSettings.load(registry="other.example.com/x").registry == "other.example.com/x"
    assert redact("redis://:pw@cache.example.com:6379") == "redis://***@cache.example.com:6379"
    assert redact("redis://user:pw@host") == "redis://user:***@host"
    assert redact("http://cache.example.com/ccache") == "http://cache.example.com/ccache"


def test_a_config_file_with_a_mistake_is_one_line_exit_2(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[team]\nregistery = "reg.example.com/team/tvm"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("TK_REGISTRY", "TK_CCACHE_REMOTE")}
    env.update(TK_CONFIG=str(config), TK_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent.parent),
                                           env.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "toolkit", "build", "push", "abc"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert error_lines(r.stderr) == [
        f"tk: error: {config}: [team] has no setting 'registery' — did you mean registry?"]
    config.write_text('[team\nregistry = "reg.example.com/team/tvm"\n')
    r = subprocess.run([sys.executable, "-m", "toolkit", "build", "push", "abc"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2 and error_lines(r.stderr)[0].startswith(
        f"tk: error: {config}: not a TOML file: ")


def test_a_bisection_on_another_machine_pulls_its_steps_builds(tk, tmp_path, servers):
    """The builds a bisection needs, pushed by one machine, are pulled by another's
    bisection (through tk build's driver) instead of being compiled."""
    reg, _ = servers
    one = machine(tmp_path, "one")
    fork = make_minifork(tmp_path / "one" / "tvm")
    good = subprocess.run(["git", "rev-parse", "HEAD"], cwd=fork, capture_output=True,
                          text=True, check=True).stdout.strip()
    bad = add_source_commit(fork, "v2")
    ids = []
    for commit in (good, bad):
        subprocess.run(["git", "checkout", "-q", commit], cwd=fork, check=True)
        ids.append(ok_json(tk, "build", "-C", str(fork), env=one)["id"])
        ok_json(tk, "build", "push", ids[-1], f"{reg.address}/{REPO}", env=one)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=fork, check=True)

    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}")
    clone = tmp_path / "two" / "tvm"
    subprocess.run(["git", "clone", "-q", str(fork), str(clone)], check=True)
    check = tmp_path / "check.sh"
    check.write_text('#!/bin/sh\nnm -D "$TVM_LIBRARY_PATH/libtvm.so" | grep -q TVMMiniVersionTag '
                     '&& exit 1 || exit 0\n')
    check.chmod(0o755)
    r = tk("bisect", "start", "--source", str(clone), "--good", good, "--bad", bad,
           "--parallel", "1", "--check", str(check), env=two)
    assert r.returncode == 0, r.stderr
    r = tk("bisect", "run", "--source", str(clone), env=two, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "First bad commit: " in r.stdout
    stored = ok_json(tk, "build", "ls", env=two)["builds"]
    assert sorted(b["id"] for b in stored) == sorted(ids)
    for b in stored:
        assert ok_json(tk, "build", "show", b["id"], env=two)["pulled"] is not None
    # Nothing was configured, let alone compiled, on this machine.
    assert not list((tmp_path / "two").rglob("CMakeCache.txt"))


@pytest.mark.docker
@pytest.mark.slow
def test_a_container_build_is_pulled_by_a_machine_whose_engine_is_away(tk, tmp_path, servers):
    """A bisection slot or a developer on another engine: the registry is asked before the
    backend, so a build made in a container comes from there without an engine."""
    from toolkit.builds import image
    from toolkit.errors import UserError

    try:
        image.connect()
    except UserError as e:
        pytest.skip(f"no Docker engine: {e}")
    reg, _ = servers
    one = machine(tmp_path, "one")
    built = ok_json(tk, "build", "-C", str(make_minifork(tmp_path / "one" / "tvm")),
                    "--backend", "docker", env=one)
    assert built["backend"] == "docker"
    sent = ok_json(tk, "build", "push", built["id"], f"{reg.address}/{REPO}", env=one)
    two = machine(tmp_path, "two", TK_REGISTRY=f"{reg.address}/{REPO}",
                  DOCKER_HOST="unix:///nonexistent/docker.sock")
    fork = make_minifork(tmp_path / "two" / "elsewhere" / "tvm")
    got = ok_json(tk, "build", "-C", str(fork), "--backend", "docker", env=two)
    assert got["from"] == "registry" and got["id"] == built["id"]
    assert got["pulled"]["reference"] == sent["reference"] and got["check"]["ok"]
    assert not list(fork.glob("build-*"))
