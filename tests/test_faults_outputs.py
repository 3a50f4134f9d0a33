"""Fault injection for the commands that write a user's outputs (SQLite's I/O-error testing
is the model): each command against a full file system, a read-only one and a signal while
it works; and what it writes under sudo.

Every cell must end in one line and the right exit code (2: the user's environment refused
the write; 130/143: a signal), with nothing half-written under the user's name and no
temporary file left beside it. The file systems are tmpfs mounts in a mount namespace of the
test's own (``unshare -m``): they need root, as CI has.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_tk

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")

TK = f"{shlex.quote(sys.executable)} -m toolkit"
# Each command that writes, and what it writes under OUT (a directory on the faulty mount).
COMMANDS = {
    "compile -o": ("compile builtin:mlp -o OUT/m.so", ["m.so", "m.params.npz"]),
    "compile --emit-source": ("compile builtin:mlp --emit-source OUT/src", ["src"]),
    "dump-ir -o": ("dump-ir builtin:mlp -o OUT/dump", ["dump"]),
    "trace -o": ("trace builtin:mlp -o OUT/t.json", ["t.json"]),
    "profile -o": ("profile builtin:mlp -n 2 --warmup 0 -o OUT/report", ["report"]),
    "profile --trace": ("profile builtin:mlp -n 2 --warmup 0 --trace OUT/p.json", ["p.json"]),
}
# What each fault does to the mount before the command runs: full (a file takes all but 4 KiB
# of 512 KiB; the outputs are larger), read-only.
FAULTS = {
    "full": "dd if=/dev/zero of=$MNT/fill bs=4k count=127 2>/dev/null || true",
    "read-only": "mount -o remount,ro $MNT",
}


def run_on_mount(command: str, fault: str, tmp_path: Path) -> dict:
    """Run ``tk COMMAND`` with OUT on a 512 KiB tmpfs the fault has made faulty; what it
    said, its exit code and what the mount holds afterwards (the mount dies with the
    namespace, so it is listed inside)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    words = command.replace("OUT", str(mnt / "out"))
    script = "\n".join([
        f"MNT={shlex.quote(str(mnt))}",
        "mount -t tmpfs -o size=512k tmpfs $MNT",
        "mkdir $MNT/out",
        FAULTS[fault],
        f"{TK} {words} >$MNT.stdout 2>$MNT.stderr; echo $? >$MNT.rc",
        "(cd $MNT && find . -mindepth 1 | sort) >$MNT.left",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return {"rc": int(Path(f"{mnt}.rc").read_text()), "stderr": Path(f"{mnt}.stderr").read_text(),
            "left": Path(f"{mnt}.left").read_text().split()}


def _mounts_work() -> str | None:
    proc = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                          capture_output=True, text=True)
    return None if proc.returncode == 0 else f"unshare -m fails here: {proc.stderr.strip()}"


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_refused_write_is_one_line_exit_2_and_leaves_nothing(tmp_path, name, fault):
    why = _mounts_work()
    if why:
        pytest.skip(why)
    command, _ = COMMANDS[name]
    got = run_on_mount(command, fault, tmp_path)
    errors = [line for line in got["stderr"].splitlines() if line.startswith("tk")]
    assert got["rc"] == 2, got
    assert len(errors) == 1 and "internal error" not in got["stderr"], got["stderr"]
    said = "No space left on device" if fault == "full" else "Read-only file system"
    assert said in errors[0] and "cannot write" in errors[0], errors
    # Nothing under the user's name, no temporary file: the mount holds what it held.
    assert got["left"] == (["./fill", "./out"] if fault == "full" else ["./out"]), got["left"]


@pytest.mark.parametrize("name", ["compile -o", "dump-ir -o", "profile -o"])
def test_a_signal_at_any_point_leaves_the_output_whole_or_absent(tmp_path, name):
    """SIGTERM at several points of the run: tk ends as a SIGTERM'd process does (143) or has
    finished (0); the output is there whole, or not at all, and no temporary file is left."""
    command, outputs = COMMANDS[name]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    for delay in (0.5, 1.5, 3.0, 6.0):
        out = tmp_path / f"after-{delay}"
        out.mkdir()
        words = shlex.split(command.replace("OUT", str(out)))
        proc = subprocess.Popen([sys.executable, "-m", "toolkit", *words], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 143), (delay, proc.returncode, err)
        left = sorted(p.name for p in out.iterdir())
        if proc.returncode == 143:
            assert err.strip().splitlines()[-1] == "tk: stopped by SIGTERM", err
            assert left == [], (delay, left)
        else:
            assert left == sorted(outputs), (delay, left)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_outputs_belong_to_the_user_sudo_ran_tk_for(tmp_path, name):
    """Under sudo (SUDO_UID/SUDO_GID), what tk writes into a directory root owns goes to that
    user; into a directory another user owns, to that user."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    command, outputs = COMMANDS[name]
    for where, env, owner in (("sudo", {"SUDO_UID": "4321", "SUDO_GID": "4322"}, (4321, 4322)),
                              ("theirs", {}, (1234, 1235))):
        out = tmp_path / where
        out.mkdir()
        if where == "theirs":
            os.chown(out, 1234, 1235)
        words = shlex.split(command.replace("OUT", str(out / "new" / "dir")))
        r = run_tk(*words, env=env)
        assert r.returncode == 0, r.stderr
        made = [out / "new", *(out / "new").rglob("*")]
        assert made and {(p.lstat().st_uid, p.lstat().st_gid) for p in made} == {owner}, \
            [(str(p), p.lstat().st_uid) for p in made if p.lstat().st_uid != owner[0]]
        assert sorted(p.name for p in (out / "new" / "dir").iterdir()) == sorted(outputs)



def test_explain_last_on_a_read_only_cache_says_its_log_may_not_be_the_latest(tmp_path):
    """A failure on a read-only cache cannot replace the last one's log: ``--last`` showed the
    older failure as if it were the latest. It says when that one was, and that later ones
    may be missing."""
    why = _mounts_work()
    if why:
        pytest.skip(why)
    cache = tmp_path / "cache"
    cache.mkdir()
    script = "\n".join([
        f"export TK_CACHE={shlex.quote(str(cache))}",
        "mount -t tmpfs tmpfs $TK_CACHE",
        f"{TK} run builtin:nosuch >/dev/null 2>&1",
        "mount -o remount,ro $TK_CACHE",
        f"{TK} run builtin:othermissing >/dev/null 2>&1",
        f"{TK} explain --last",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    heading = proc.stdout.split("\n", 1)[0]
    assert heading.startswith("the last failure recorded, at "), proc.stdout + proc.stderr
    assert "$ tk run builtin:nosuch" in heading and "othermissing" not in proc.stdout
    assert f"later ones may be missing: {cache} is not writable" in heading


# --- the build store ---------------------------------------------------------------------

def run_with_cache(tmp_path: Path, steps: list[str], size: str = "256k") -> list[dict]:
    """Run tk commands with TK_CACHE on a tmpfs of ``size`` in a namespace of the test's own;
    a step ``!CMD`` runs a shell command instead. What each said and its exit code, and what
    the cache held after each."""
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    lines = [f"export TK_CACHE={shlex.quote(str(cache))}",
             f"mount -t tmpfs -o size={size} tmpfs $TK_CACHE"]
    for i, step in enumerate(steps):
        run = step[1:] if step.startswith("!") else f"{TK} {step}"
        lines += [f"{run} >{tmp_path}/{i}.out 2>{tmp_path}/{i}.err; echo $? >{tmp_path}/{i}.rc",
                  f"(cd $TK_CACHE && find . -mindepth 1 | sort) >{tmp_path}/{i}.left"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(["unshare", "-m", "sh", "-c", "\n".join(lines)], capture_output=True,
                          text=True, env=env, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [{"rc": int((tmp_path / f"{i}.rc").read_text()),
             "out": (tmp_path / f"{i}.out").read_text(), "err": (tmp_path / f"{i}.err").read_text(),
             "left": (tmp_path / f"{i}.left").read_text().split()} for i in range(len(steps))]


@pytest.fixture
def fork(tmp_path):
    if _mounts_work():
        pytest.skip(_mounts_work())
    from minifork import make_minifork

    return make_minifork(tmp_path / "tvm")


def test_a_build_into_a_full_store_is_one_line_and_gc_reclaims_what_is_left(tmp_path, fork):
    tree = shlex.quote(str(fork))
    full, gc = run_with_cache(tmp_path, [f"build -C {tree}", "build gc"], size="96k")
    assert full["rc"] == 2, full
    errors = [line for line in full["err"].splitlines() if line.startswith("tk: error")]
    assert len(errors) == 1 and "internal error" not in full["err"], full["err"]
    assert "the build store" in errors[0] and "No space left on device" in errors[0]
    assert not [p for p in full["left"] if p.endswith(".tmp")], full["left"]
    assert gc["rc"] == 0, gc
    assert not [p for p in gc["left"] if p.startswith("./builds/") and p != "./builds/"]


def test_env_from_a_read_only_store_still_hands_out_a_build(tmp_path, fork):
    """A store mounted read-only (a shared cache, a full disk remounted): tk env of a build in
    it works without stamping it; a command that must write there says so in one line."""
    tree = shlex.quote(str(fork))
    steps = [f"build -C {tree} --json", "!mount -o remount,ro $TK_CACHE",
             "env $(ls $TK_CACHE/builds)", f"build -C {tree} --force"]
    build, _, env, again = run_with_cache(tmp_path, steps, size="64m")
    assert build["rc"] == 0, build["err"]
    assert env["rc"] == 0 and "export TVM_LIBRARY_PATH=" in env["out"], env
    assert again["rc"] == 2, again
    errors = [line for line in again["err"].splitlines() if line.startswith("tk")]
    assert errors and "Read-only file system" in errors[-1] and "internal error" not in again["err"]
