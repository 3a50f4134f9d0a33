"""Issue 18: faults found by trying to break tk, one test per fault (each failed before its fix).

Items 1, 2, 6 and 7 of the issue (dump-ir deletions, killed workers, repro.py injection,
explain's matcher) have their tests beside their features; this file holds the rest: leaked
containers, files of the wrong owner, bisect changing the user's repository, and the smaller
faults of item 8.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, "GIT_CONFIG_COUNT": "1",
                                           "GIT_CONFIG_KEY_0": "protocol.file.allow",
                                           "GIT_CONFIG_VALUE_0": "always"})
    return proc.stdout.strip()


def small_repo(root: Path, commits: int = 6, bad_from: int = 3,
               submodule: Path | None = None) -> list[str]:
    """A plain git history whose file ``val`` says ok before ``bad_from`` and bad after;
    with ``submodule``, every commit has that repository at ``lib``."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@tk.invalid")
    git(root, "config", "user.name", "tk test")
    if submodule is not None:
        git(root, "submodule", "add", "-q", str(submodule), "lib")
    shas = []
    for i in range(commits):
        (root / "val").write_text("bad\n" if i >= bad_from else "ok\n")
        (root / "n").write_text(f"{i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"step {i}")
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


CHECK = "grep -q ok val"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"TK_CACHE": str(tmp_path / "cache")}


def start(tk, repo: Path, env: dict[str, str], good: str, bad: str = "HEAD", *extra: str):
    r = tk("bisect", "start", "--source", str(repo), "--good", good, "--bad", bad,
           "--no-build", *extra, "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    return r


# --- item 5: bisect changes the user's repository -------------------------------------------

def test_item5_bisect_keeps_users_worktrees_and_config(tk, tmp_path, env):
    """A worktree of the user's on an unmounted disk stays registered, and submodules checked
    out in tk's worktree write nothing into the user's .git/config, before or after reset."""
    sub = tmp_path / "sub"
    small_repo(sub, commits=1)
    repo = tmp_path / "repo"
    shas = small_repo(repo, submodule=sub)
    # The user's checkout has never run 'submodule init': no [submodule] in its config.
    git(repo, "config", "--remove-section", "submodule.lib")
    config_before = (repo / ".git" / "config").read_bytes()
    # The user's worktree on a disk that is not mounted now: its directory is missing.
    away = tmp_path / "usb" / "feature"
    git(repo, "worktree", "add", "-q", "--detach", str(away), shas[1])
    (tmp_path / "usb").rename(tmp_path / "usb-unmounted")
    assert str(away) in git(repo, "worktree", "list")

    start(tk, repo, env, shas[0])
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert "First bad commit: " + shas[3][:12] in r.stdout
    assert str(away) in git(repo, "worktree", "list")  # not pruned
    wt = next(Path(env["TK_CACHE"], "bisect").glob("*/worktree"))
    assert (wt / "lib" / "val").exists()  # the submodule is there...
    assert (repo / ".git" / "config").read_bytes() == config_before  # ...recorded nowhere
    r = tk("bisect", "reset", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert (repo / ".git" / "config").read_bytes() == config_before
    listed = git(repo, "worktree", "list")
    assert str(away) in listed and "worktree" not in listed.replace(str(away), "")


def test_item5_unclonable_submodule_the_user_never_initialised_is_left_alone(tk, tmp_path, env):
    """The submodule's origin is gone and the user never cloned it here: like git bisect, tk
    leaves it as it is in the user's checkout (it was refused outright), and says so."""
    sub = tmp_path / "sub"
    small_repo(sub, commits=1)
    repo = tmp_path / "repo"
    shas = small_repo(repo, submodule=sub)
    git(repo, "submodule", "deinit", "-q", "--all")
    subprocess.run(["rm", "-rf", str(sub), str(repo / ".git" / "modules")], check=True)
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--no-build", "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    assert "submodules never initialised in your checkout, left so at every commit" in r.stdout
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr and "GitCommandError" not in r.stderr


# --- item 8: the smaller faults ---------------------------------------------------------------

def test_item8_bisect_timeout_with_daemon_holding_output(tmp_path):
    from toolkit.bisect.runner import run_check

    env = {"PATH": os.environ["PATH"]}
    # The check starts a daemon (its own session: out of the check's group) that keeps the
    # output open for 30 s, then hangs itself.
    script = "setsid sleep 30 & echo started; sleep 30"
    t = time.monotonic()
    out = run_check(["sh", "-c", script], env, tmp_path, 1.0)
    assert time.monotonic() - t < 10
    assert out.timed_out and "started" in out.output
    # A check that passes at once while its daemon lives on is a pass, not a timeout.
    t = time.monotonic()
    out = run_check(["sh", "-c", "setsid sleep 30 & echo fine"], env, tmp_path, 20.0)
    assert time.monotonic() - t < 10
    assert out.returncode == 0 and not out.timed_out and "fine" in out.output


def test_item8_corrupt_bisect_state(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = small_repo(repo)
    start(tk, repo, env, shas[0])
    state = next(Path(env["TK_CACHE"], "bisect").glob("*/state.json"))
    for corrupt in ('{"source": ', '[1, 2]', '{"good": 1}'):
        state.write_text(corrupt)
        for args in (["status"], ["run"], ["log"], ["good"], ["report"]):
            r = tk("bisect", *args, "--source", str(repo), env=env)
            assert r.returncode == 2, (args, r.stderr)
            assert "is corrupt" in r.stderr and "tk bisect reset" in r.stderr, r.stderr
            assert "internal error" not in r.stderr
        r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
               "--no-build", "--check", CHECK, env=env)
        assert r.returncode == 2 and "is corrupt" in r.stderr
    r = tk("bisect", "reset", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert not state.parent.exists()
    assert git(repo, "worktree", "list").count("\n") == 0  # tk's worktree is gone too
    start(tk, repo, env, shas[0])  # and a new bisection starts


def test_item8_marking_an_end_against_itself_is_refused(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = small_repo(repo)
    start(tk, repo, env, shas[0])
    for verdict, rev in (("good", "HEAD"), ("skip", "HEAD"), ("bad", shas[0])):
        r = tk("bisect", verdict, rev, "--source", str(repo), env=env)
        assert r.returncode == 2, r.stderr
        assert "end of the range" in r.stderr
    r = tk("bisect", "bad", "HEAD", "--source", str(repo), env=env)  # what it is: fine
    assert r.returncode == 0, r.stderr


def test_item8_workload_exiting_at_import_is_no_pass(tk, tmp_path):
    pytest.importorskip("tvm")
    for code in ("0", "None", "3"):
        wl = tmp_path / f"exit_{code}.py"
        wl.write_text(f"import sys\nsys.exit({code})\n")
        r = tk("run", str(wl), "--check", env={"TK_CACHE": str(tmp_path / "cache")})
        assert r.returncode == 2, r.stderr
        assert "called sys.exit" in r.stderr
    wl = tmp_path / "own_base_exception.py"
    wl.write_text("class Stop(BaseException):\n    pass\n\nraise Stop('here')\n")
    r = tk("run", str(wl), "--check", env={"TK_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 2 and "raised Stop: here" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, code, status", [
    (["run", "--check"], 0, 2), (["compile"], 0, 2), (["profile"], 0, 2),
    (["dump-ir", "-o", "dump"], 0, 2), (["run", "--check"], 3, 3)])
def test_item8_workload_os_exit_at_import_is_no_pass(tk, tmp_path, args, code, status):
    """os._exit skips everything tk does after the workload (checks, reports, its own exit
    status): the worker says it finished, so an early os._exit(0) is a failure, not a pass."""
    pytest.importorskip("tvm")
    wl = tmp_path / "os_exit.py"
    wl.write_text(f"import os\nos._exit({code})\n")
    r = tk(args[0], str(wl), *args[1:], env={"TK_CACHE": str(tmp_path / "cache")}, cwd=tmp_path)
    assert r.returncode == status, r.stderr
    assert r.stderr.strip() == (f"tk: error: the workload ended the process (os._exit({code})) "
                                "before tk finished - or a library it loaded did; there is no "
                                "result"), r.stderr


@pytest.mark.parametrize("args, needle", [
    (["run", "builtin:mlp", "--rtol", "nan"], "--rtol"),
    (["run", "builtin:mlp", "--rtol", "-1"], "--rtol"),
    (["run", "builtin:mlp", "--atol", "inf"], "--atol"),
    (["run", "builtin:mlp", "--seed", "-1"], "--seed"),
    (["profile", "compare", "a.json", "b.json", "--threshold", "nan"], "--threshold"),
    (["profile", "builtin:mlp", "--top", "-1"], "--top"),
    (["profile", "builtin:mlp", "--repeat", "0"], "--repeat"),
    (["bisect", "start", "--good", "a", "--bad", "b", "--timeout", "-1", "--check", "x"],
     "--timeout"),
    (["bisect", "start", "--good", "a", "--bad", "b", "--timeout", "nan", "--check", "x"],
     "--timeout"),
    (["bisect", "passes", "builtin:mlp", "--rtol", "nan"], "--rtol"),
    (["bisect", "passes", "builtin:mlp", "--timeout", "0"], "--timeout"),
    (["build", "--jobs", "0"], "--jobs"),
    (["ext", "build", "--jobs", "-2"], "--jobs"),
])
def test_item8_numbers_from_the_command_line_are_validated(tk, tmp_path, args, needle):
    r = tk(*args, cwd=tmp_path, env={"TK_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert needle in line and "\n" not in line, line


# --- item 3: leaked containers -----------------------------------------------------------------

HOLD_CONTAINER = """
import sys, time
from toolkit.builds import image
from toolkit.builds.backends import docker as d
client = image.connect()
with d.build_container(client, sys.argv[1], user="0:0", binds={}, env={}, workdir="/",
                       labels={"org.tk.test": sys.argv[2]}) as cid:
    print(cid, flush=True)
    if sys.argv[3] == "raise":
        raise RuntimeError("a failing step")
    time.sleep(120)
"""


@pytest.fixture(scope="module")
def docker_image():
    """An image to start containers of: the offline base image tk makes (skip, with the
    reason, without an engine or a way to make it)."""
    from toolkit.builds import image
    from toolkit.errors import TkError, UserError

    try:
        client = image.connect()
    except UserError as e:
        pytest.skip(f"no Docker engine: {e}")
    try:
        return client, image.bootstrap(client=client).tag
    except TkError as e:
        pytest.skip(f"no base image can be made here: {e}")


def containers(client, test: str) -> list:
    return client.containers.list(all=True, filters={"label": f"org.tk.test={test}"},
                                  ignore_removed=True)


def gone_within(client, test: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not containers(client, test):
            return True
        time.sleep(0.5)
    return False


@pytest.mark.docker
def test_item3_build_container_removed_on_every_exit_path(docker_image, tmp_path):
    from toolkit.builds.backends import docker as d

    client, tag = docker_image
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for how in ("raise", "SIGTERM", "SIGKILL"):
        test = f"faults-{os.getpid()}-{how}"
        proc = subprocess.Popen([sys.executable, "-c", HOLD_CONTAINER, tag, test, how],
                                stdout=subprocess.PIPE, text=True, env=env)
        cid = proc.stdout.readline().strip()
        assert cid, how
        if how != "raise":
            assert [c.id for c in containers(client, test)] == [cid]
            proc.send_signal(getattr(signal, how))
        proc.wait(timeout=60)
        assert gone_within(client, test, 30), f"{how}: container {cid[:12]} left running"

    # A stray whose owner is dead (an engine that missed its end) goes at the next build; one
    # whose owner lives (another tk building now) stays.
    dead = subprocess.Popen(["true"])
    dead.wait()
    test = f"faults-{os.getpid()}-stray"
    common = {"org.tk.test": test, d.OWNER_HOST: socket.gethostname()}
    stray = client.containers.run(tag, ["sleep", "infinity"], detach=True, labels={
        **common, d.OWNER_PID: str(dead.pid), d.OWNER_START: "1"})
    alive = client.containers.run(tag, ["sleep", "infinity"], detach=True, labels={
        **common, d.OWNER_PID: str(os.getpid()), d.OWNER_START: d.process_start(os.getpid())})
    try:
        with d.build_container(client, tag, user="0:0", binds={}, env={}, workdir="/",
                               labels={"org.tk.test": test + "-new"}):
            pass
        assert [c.id for c in containers(client, test)] == [alive.id]
    finally:
        for ctr in (stray, alive):
            with contextlib.suppress(Exception):
                ctr.remove(force=True)


@pytest.mark.docker
@pytest.mark.slow
def test_item3_killed_docker_build_leaves_no_container(docker_image, tmp_path):
    """The real thing: tk build --backend docker, killed while its container compiles."""
    from minifork import make_minifork

    from toolkit.builds.backends import docker as d

    client, _ = docker_image
    fork = make_minifork(tmp_path / "tvm")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TK_CACHE": str(tmp_path / "cache")}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen([sys.executable, "-m", "toolkit", "build", "-C", str(fork),
                                 "--backend", "docker", "--force"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mine = {"label": [d.OWNER_PID, "org.tk.plan"]}
        deadline = time.monotonic() + 900  # the toolchain image, when not made yet
        ours: list = []
        while not ours and proc.poll() is None and time.monotonic() < deadline:
            ours = [c for c in client.containers.list(filters=mine, ignore_removed=True)
                    if c.labels.get(d.OWNER_PID) in own_pids(proc.pid)]
            time.sleep(0.3)
        assert ours, "the build ended before its container was seen"
        proc.send_signal(sig)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        ids = {o.id for o in ours}
        while time.monotonic() < deadline and left_of(client, ids):
            time.sleep(0.5)
        assert not left_of(client, ids)


def left_of(client, ids: set[str]) -> list:
    return [c for c in client.containers.list(all=True, ignore_removed=True) if c.id in ids]


def own_pids(pid: int) -> set[str]:
    """``pid`` and its descendants (tk works in a child process)."""
    found, todo = {str(pid)}, [pid]
    while todo:
        try:
            children = Path(f"/proc/{todo.pop()}/task").glob("*/children")
            kids = [int(k) for f in children for k in f.read_text().split()]
        except OSError:
            continue
        found |= {str(k) for k in kids}
        todo += kids
    return found


# --- item 4: root-owned files in the user's tree ----------------------------------------------

def foreign_owned(root: Path, uid: int) -> list[str]:
    return [str(p.relative_to(root)) for p in [root, *root.rglob("*")]
            if p.lstat().st_uid != uid]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (it builds another user's tree)")
@pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja")),
                    reason="needs cmake and ninja")
@pytest.mark.parametrize("sudo", [True, False], ids=["under-sudo", "root-for-another-user"])
def test_item4_files_tk_writes_belong_to_the_trees_owner(tk, tmp_path, sudo):
    from minifork import make_minifork

    uid = gid = 1000  # no such user needs to exist
    fork = make_minifork(tmp_path / "tvm")
    for path in [fork, *fork.rglob("*")]:
        os.chown(path, uid, gid, follow_symlinks=False)
    (fork / "src" / "runtime").touch()  # a stale index entry: git status would rewrite it
    for p in (fork / "src").rglob("*.cc"):
        os.utime(p)
    index = fork / ".git" / "index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    env = {"TK_CACHE": str(tmp_path / "cache")}
    if sudo:
        env.update(SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER="someone")
    r = tk("build", "-C", str(fork), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert foreign_owned(fork, uid) == []
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before  # never touched
    assert any(fork.glob("build-*/.tk-plan"))
    # A custom build directory, with parents tk makes, belongs to the owner as well.
    r = tk("build", "-C", str(fork), "--json", "--force", "--build-dir", "out/a/b", env=env)
    assert r.returncode == 0, r.stderr
    assert foreign_owned(fork, uid) == []


# --- item 8: the store ------------------------------------------------------------------------

needs_cmake = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja")),
                                 reason="needs cmake and ninja")


@needs_cmake
def test_item8_store_serves_only_intact_libraries_and_builds_a_key_once(tk, tmp_path):
    from minifork import make_minifork

    env = {**os.environ, "TK_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    fork = make_minifork(tmp_path / "tvm")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(fork), str(clone)], check=True)
    # Two clones of one tree build the same key at once: one builds, the other waits for it.
    procs = [subprocess.Popen([sys.executable, "-m", "toolkit", "build", "-C", str(tree),
                               "--json"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tree in (fork, clone)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    manifests = [json.loads(o[0]) for o in outs]
    assert manifests[0]["id"] == manifests[1]["id"]
    assert sorted(m["from_store"] for m in manifests) == [False, True]
    log = Path(manifests[0]["log"]).read_text()
    assert log.count("# tk build ") == 1

    # A stored library damaged in place (same size) is never served.
    lib = Path(manifests[0]["artifacts"][0]["path"])
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF
    lib.write_bytes(bytes(data))
    r = tk("env", manifests[0]["id"], env={"TK_CACHE": env["TK_CACHE"]})
    assert r.returncode == 1 and "is damaged" in r.stderr, r.stderr
    r = tk("build", "-C", str(fork), "--json", env={"TK_CACHE": env["TK_CACHE"]})
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    assert again["from_store"] is False  # built again, not served
    assert store_sha(lib) == again["artifacts"][0]["sha256"]
    assert tk("env", again["id"], env={"TK_CACHE": env["TK_CACHE"]}).returncode == 0


def store_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- item 8: profile output and comparison ----------------------------------------------------

def test_item8_profile_never_overwrites_a_users_file_and_warns_on_other_workloads(tk, tmp_path):
    pytest.importorskip("tvm")
    env = {"TK_CACHE": str(tmp_path / "cache")}
    quick = ["-n", "2", "--warmup", "0", "--format", "json,md"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "profile.md").write_text("my notes\n")
    r = tk("profile", "builtin:mlp", *quick, "-o", str(mine), env=env)
    assert r.returncode == 2 and "tk did not write it" in r.stderr, r.stderr
    assert (mine / "profile.md").read_text() == "my notes\n"
    assert not (mine / "profile.json").exists()  # refused before any work

    a, b = tmp_path / "a", tmp_path / "b"
    for out, wl in ((a, "builtin:mlp"), (a, "builtin:mlp"), (b, "builtin:convnet")):
        r = tk("profile", wl, *quick, "-o", str(out), env=env)  # tk's own files: replaced
        assert r.returncode == 0, r.stderr
    (a / "profile.md").write_text((a / "profile.md").read_text() + "edited by hand\n")
    r = tk("profile", "builtin:mlp", *quick, "-o", str(a), env=env)
    assert r.returncode == 2 and "changed since" in r.stderr, r.stderr
    assert "edited by hand" in (a / "profile.md").read_text()

    r = tk("profile", "compare", str(a / "profile.json"), str(b / "profile.json"), env=env)
    assert r.returncode == 0, r.stderr
    assert "different workloads: builtin:mlp vs builtin:convnet" in r.stderr
    r = tk("profile", "compare", str(a / "profile.json"), str(a / "profile.json"), env=env)
    assert "different workloads" not in r.stderr


# --- item 8: bad inputs end in one precise line and exit 2, never "internal error" ------------

def crafted_elf(tmp_path: Path, name: str, patch: dict[int, bytes]) -> Path:
    """A real shared library (made with binutils here) with header bytes overwritten."""
    src = tmp_path / f"{name}.s"
    src.write_text(".globl f\nf: ret\n")
    obj, lib = tmp_path / f"{name}.o", tmp_path / f"lib{name}.so"
    subprocess.run(["as", "-o", str(obj), str(src)], check=True)
    subprocess.run(["ld", "-shared", "-soname", lib.name, "-o", str(lib), str(obj)], check=True)
    data = bytearray(lib.read_bytes())
    for offset, value in patch.items():
        data[offset:offset + len(value)] = value
    lib.write_bytes(bytes(data))
    return lib


BAD_RECIPES = {
    "scalar-section": "options = 3\n", "string-section": 'container = "x"\n',
    "array-of-tables": "[[options]]\n", "scalar-targets": '[build]\ntargets = "runtime"\n',
    "scalar-packages": '[container]\npackages = "vim"\n', "numeric-description": "description = 3\n",
}
BAD_PROFILES = {
    "list": "[1, 2]", "header-number": '{"report": "profile", "header": 3, "rows": []}',
    "columns-number": '{"report": "profile", "rows": [1], "columns": 5}',
    "missing-columns": '{"report": "profile", "rows": [{"name": 3}], "columns": ["name"]}',
}
BAD_INDEXES = {
    "list": "[]", "no-summary": '{"format": "tk-dump-ir/1", "passes": []}',
    "foreign-record": '{"format": "tk-dump-ir/1", "summary": {}, "input": {}, '
                      '"passes": [{"x": 1}]}',
    "passes-string": '{"format": "tk-dump-ir/1", "summary": {}, "input": {}, "passes": "x"}',
}


def bad_input_cases() -> list:
    cases = [pytest.param("recipe", text, id=f"recipe-{name}")
             for name, text in BAD_RECIPES.items()]
    cases.append(pytest.param("recipe", b"\xff\xfe[options]\n", id="recipe-not-utf8"))
    cases += [pytest.param("profile.json", text, id=f"profile-{name}")
              for name, text in BAD_PROFILES.items()]
    cases += [pytest.param("index.json", text, id=f"index-{name}")
              for name, text in BAD_INDEXES.items()]
    cases += [pytest.param("elf", patch, id=f"elf-{name}") for name, patch in {
        "phoff-huge": {32: b"\xff" * 8}, "shoff-huge": {40: b"\xff" * 8},
        "truncated": {}}.items()]
    cases.append(pytest.param("profile-o", "", id="profile-compare-o-under-a-file"))
    # /proc takes no new files, even from root (for whom os.access says yes).
    cases += [pytest.param("argv", args, id=name) for name, args in {
        "compile-o-unwritable": ["compile", "builtin:mlp", "-o", "/proc/tk-x/m.so"],
        "dump-ir-o-unwritable": ["dump-ir", "builtin:mlp", "-o", "/proc/tk-x"],
        "profile-o-unwritable": ["profile", "builtin:mlp", "-o", "/proc/tk-x"],
        "image-suite-with-space": ["image", "bootstrap", "--suite", "x y"],
        "cuda-arch-not-capabilities": ["build", "--dry-run", "--cuda", "--cuda-arch", "x;y"],
    }.items()]
    return cases


@pytest.mark.parametrize("kind, content", bad_input_cases())
def test_item8_bad_inputs_are_one_line_exit_2(tk, tmp_path, kind, content):
    env = {"TK_CACHE": str(tmp_path / "cache")}
    if kind == "recipe":
        from minifork import make_minifork

        fork = make_minifork(tmp_path / "tvm")
        recipe = tmp_path / "bad.toml"
        recipe.write_bytes(content if isinstance(content, bytes) else content.encode())
        args = ["build", "-C", str(fork), "--dry-run", "--recipe", str(recipe)]
    elif kind == "profile.json":
        (tmp_path / "a.json").write_text(content)
        args = ["profile", "compare", str(tmp_path / "a.json"), str(tmp_path / "a.json")]
    elif kind == "index.json":
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "index.json").write_text(content)
        args = ["dump-ir", "show", str(tmp_path / "d")]
    elif kind == "elf":
        lib = crafted_elf(tmp_path, "crafted", content)
        if not content:
            lib.write_bytes(lib.read_bytes()[:200])
        args = ["ext", "check", str(lib)]
    elif kind == "argv":
        if content[0] in ("compile", "dump-ir", "profile"):
            pytest.importorskip("tvm")
        args = content
        if content[0] == "build":
            from minifork import make_minifork

            args = [*content, "-C", str(make_minifork(tmp_path / "tvm"))]
    else:
        good = tmp_path / "p.json"
        good.write_text(json.dumps({"report": "profile", "header": {}, "summary": {},
                                    "columns": ["name", "args", "total_us"], "rows": []}))
        (tmp_path / "file").write_text("")
        args = ["profile", "compare", str(good), str(good), "-o", str(tmp_path / "file" / "o")]
    r = tk(*args, env=env)
    assert r.returncode == 2, r.stderr
    assert "internal error" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_item8_bisect_bad_inputs_are_one_line(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = small_repo(repo)
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--no-build", "--check", 'grep "ok val', env=env)
    assert r.returncode == 2 and "does not parse" in r.stderr, r.stderr
    start(tk, repo, env, shas[0])
    r = tk("bisect", "report", "--source", str(repo), "-o", "/proc/tk-x/r.md", env=env)
    assert r.returncode == 2 and "cannot write" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_item8_ext_check_notices_foreign_and_32_bit_libraries(tk, tmp_path):
    pytest.importorskip("tvm")
    src = tmp_path / "f.s"
    src.write_text(".globl f\nf: ret\n")
    subprocess.run(["as", "--32", "-o", str(tmp_path / "f32.o"), str(src)], check=True)
    lib32 = tmp_path / "libthirty.so"
    subprocess.run(["ld", "-m", "elf_i386", "-shared", "-o", str(lib32),
                    str(tmp_path / "f32.o")], check=True)
    arm = crafted_elf(tmp_path, "arm", {18: (183).to_bytes(2, "little")})  # e_machine AArch64
    for lib, what in ((lib32, "32-bit x86 library"), (arm, "64-bit AArch64 library")):
        r = tk("ext", "check", str(lib), "--json")
        assert r.returncode == 1, r.stderr
        problems = [p["problem"] for p in json.loads(r.stdout)["problems"]]
        assert any(what in p and "cannot be loaded" in p for p in problems), problems
    native = crafted_elf(tmp_path, "native", {})
    problems = json.loads(tk("ext", "check", str(native), "--json").stdout)["problems"]
    assert not any("cannot be loaded" in p["problem"] for p in problems)


def test_item8_corrupt_ext_manifest_is_one_line(tk, tmp_path):
    pytest.importorskip("tvm")
    lib = crafted_elf(tmp_path, "ext", {})
    for text in ("{", '{"schema": "tk-ext-manifest/1", "links": 5}',
                 '{"schema": "tk-ext-manifest/1", "links": [{"path": "/x", "build_id": 7}]}'):
        Path(str(lib) + ".tk.json").write_text(text)
        r = tk("ext", "check", str(lib))
        assert r.returncode == 2, r.stderr
        assert "manifest is corrupt" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_item8_empty_onnx_is_a_user_error(tk, tmp_path):
    pytest.importorskip("tvm")
    pytest.importorskip("onnx")
    model = tmp_path / "empty.onnx"
    model.write_bytes(b"")
    r = tk("run", str(model), "--check")
    assert r.returncode == 2 and "not an ONNX model" in r.stderr, r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (it bisects another user's repository)")
def test_item4_bisect_under_sudo_leaves_the_users_git_theirs(tk, tmp_path):
    sub = tmp_path / "sub"
    small_repo(sub, commits=1)
    repo = tmp_path / "repo"
    shas = small_repo(repo, submodule=sub)
    for path in [repo, *repo.rglob("*")]:
        os.chown(path, 1000, 1000, follow_symlinks=False)
    env = {"TK_CACHE": str(tmp_path / "cache"), "SUDO_UID": "1000", "SUDO_GID": "1000"}
    start(tk, repo, env, shas[0])
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert foreign_owned(repo, 1000) == []  # .git/worktrees/... included


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (it builds another user's extension)")
def test_item4_root_building_someones_extension_leaves_it_theirs(tk, tmp_path):
    pytest.importorskip("tvm")
    r = tk("ext", "new", "myext", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    root = tmp_path / "myext"
    for path in [root, *root.rglob("*")]:
        os.chown(path, 1000, 1000, follow_symlinks=False)
    r = tk("ext", "build", str(root), env={"SUDO_UID": "1000", "SUDO_GID": "1000"})
    assert r.returncode == 0, r.stderr
    assert any(root.rglob("*.tk.json")) and foreign_owned(root, 1000) == []
