"""The processes tk starts: the worker dies with tk, signals are told apart from crashes,
--debug shows tracebacks, probes and forked children report how they ended.

Real processes and real signals throughout; each waits only for what it needs.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO

from toolkit import process
from toolkit.errors import UserError

SPIN = """
import os
from pathlib import Path

Path({pidfile!r}).write_text(str(os.getpid()))
while True:  # a workload stuck in a loop
    pass
"""

# A Relax pipeline whose Python pass never ends: a Ctrl-C lands inside a call from TVM.
SLOW_PASS = """
import os
import time
from pathlib import Path

import tvm
from tvm.relax.frontend import nn


class M(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


model = M()
spec = {{"forward": {{"x": nn.spec.Tensor((1, 4), "float32")}}}}


@tvm.transform.module_pass(opt_level=0, name="SlowPass")
def pipeline(mod, ctx):
    Path({pidfile!r}).write_text(str(os.getpid()))
    while True:
        time.sleep(0.01)
"""


def tk_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("TK_DEBUG", None)
    env.pop("TK_NO_FORK", None)
    return env


def start_tk(*args: str, cwd: Path, blocked: tuple[int, ...] = ()) -> subprocess.Popen:
    """tk as a shell starts a job: in a process group of its own whose parent (this process)
    is in another group of the session. In the group of a test runner that is a session
    leader, the group would be orphaned, where the kernel discards a Ctrl-Z (SIGTSTP).
    ``blocked``: signals tk starts with blocked (a mask is inherited across exec)."""
    def setup() -> None:
        os.setpgid(0, 0)
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)

    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], cwd=cwd, env=tk_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=setup)


def wait_for(what: Callable[[], object], timeout: float = 120, proc: subprocess.Popen | None = None,
             ) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"tk ended (exit {proc.returncode}) before it got there:\n{err[-2000:]}")
        time.sleep(0.05)
    pytest.fail("timed out waiting")


def pid_in(path: Path) -> int | None:
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text else None


def alive(pid: int) -> bool:
    """Running, not a zombie (a zombie has ended; only its exit status is left to collect)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def session_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[3])


def live_in_session(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if session_of(int(entry.name)) == sid and alive(int(entry.name)):
                    found.append(int(entry.name))
            except (OSError, ValueError):
                continue
    return found


def gone(pids: Callable[[], list[int]], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pids():
            return True
        time.sleep(0.05)
    return False


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")


# --- --debug ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["--debug", "TK_DEBUG=1"])
def test_debug_shows_the_traceback(tk, tmp_path, how):
    args = ("--debug", "run", str(tmp_path / "missing.py"))
    env = None
    if how == "TK_DEBUG=1":
        args, env = args[1:], {"TK_DEBUG": "1"}
    result = tk(*args, env=env)
    assert "Traceback (most recent call last)" in result.stderr
    assert "UserError: workload file" in result.stderr and "does not exist" in result.stderr
    assert result.returncode == 2  # the error's own status, traceback or not
    plain = tk("run", str(tmp_path / "missing.py"))
    assert plain.returncode == 2 and "Traceback" not in plain.stderr


# --- the worker dies with tk --------------------------------------------------------------


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_killing_tk_stops_a_stuck_workload(tmp_path, sig):
    """SIGHUP: the terminal tk ran in was closed."""
    pidfile = tmp_path / "worker.pid"
    (tmp_path / "spin.py").write_text(SPIN.format(pidfile=str(pidfile)))
    proc = start_tk("run", "spin.py", cwd=tmp_path)
    worker = wait_for(lambda: pid_in(pidfile), proc=proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert gone(lambda: [worker] if alive(worker) else []), "the worker outlived tk"
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig, err
        assert f"tk: stopped by {sig.name}" in err and "crash" not in err


@needs_proc
@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs CMake")
def test_killing_tk_stops_a_native_build(tk, tmp_path):
    """tk ext build runs CMake and Ninja natively; a step that never ends stands for a long
    compile. After kill -9 of tk, nothing of the build is left running."""
    pidfile = tmp_path / "step.pid"
    src = tmp_path / "holdext"
    src.mkdir()
    (tmp_path / "step.sh").write_text(f"echo $$ > {pidfile}\nexec sleep 600\n")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(holdext NONE)\n"
        f"add_custom_target(holdext ALL COMMAND sh {tmp_path / 'step.sh'})\n")
    proc = start_tk("ext", "build", str(src), cwd=tmp_path)
    step = wait_for(lambda: pid_in(pidfile), proc=proc)
    sid = session_of(step)
    assert sid != os.getsid(0), "the build runs outside tk's worker session"
    proc.kill()
    proc.communicate()
    assert gone(lambda: live_in_session(sid)), \
        f"left running after tk was killed: {live_in_session(sid)}"


def bisect_repo(root: Path) -> list[str]:
    from minifork import commit_file, git

    root.mkdir()
    git(root, "init", "-q")
    return [commit_file(root, "state.txt", f"{'wrong' if i >= 3 else 'fine'} {i}\n", f"rev {i}")
            for i in range(5)]


@needs_proc
@pytest.mark.parametrize("stage", ["check", "build"])
def test_killed_bisect_run_leaves_nothing_running_and_the_lock_free(tk, tmp_path, stage):
    """kill -9 of 'tk bisect run' during a check (or a build): the check/build stops, and
    the next 'tk bisect run' starts at once and finishes the bisection."""
    repo = tmp_path / "repo"
    shas = bisect_repo(repo)
    pidfile, hold = tmp_path / f"{stage}.pid", tmp_path / "hold"
    hold.touch()
    holding = f"echo $$ > {pidfile}\nif [ -e {hold} ]; then exec sleep 600; fi\n"
    (tmp_path / "check.sh").write_text((holding if stage == "check" else "")
                                       + "grep -q fine state.txt\n")
    (tmp_path / "build.sh").write_text(holding if stage == "build" else "true\n")
    check, build = f"sh {tmp_path / 'check.sh'}", f"sh {tmp_path / 'build.sh'}"
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--check", check, "--build-cmd", build, env=env)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "bisect", "run", "--source",
                             str(repo)], env={**tk_env(), **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    held = wait_for(lambda: pid_in(pidfile), proc=proc)
    sid = session_of(held)
    proc.kill()
    proc.communicate()
    assert gone(lambda: live_in_session(sid)), f"the {stage} outlived tk"
    hold.unlink()
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert "First bad commit: " + shas[3][:12] in r.stdout


def state_of(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


@needs_proc
@pytest.mark.parametrize("blocked", [(), (signal.SIGTSTP, signal.SIGINT)],
                         ids=["plain", "started-with-them-blocked"])
def test_ctrl_z_stops_the_worker_with_tk_and_fg_resumes_it(tmp_path, blocked):
    pidfile = tmp_path / "worker.pid"
    (tmp_path / "spin.py").write_text(SPIN.format(pidfile=str(pidfile)))
    proc = start_tk("run", "spin.py", cwd=tmp_path, blocked=blocked)
    worker = wait_for(lambda: pid_in(pidfile), proc=proc)
    try:
        proc.send_signal(signal.SIGTSTP)
        assert wait_for(lambda: state_of(worker) == "T" and state_of(proc.pid) == "T", 10)
        proc.send_signal(signal.SIGCONT)
        assert wait_for(lambda: state_of(worker) in "RS" and state_of(proc.pid) in "RS", 10)
    finally:
        proc.kill()
        proc.communicate()
    assert gone(lambda: [worker] if alive(worker) else [])


# --- signals told apart -----------------------------------------------------------------


@needs_proc
def test_ctrl_c_inside_a_tvm_pass_exits_130_not_a_tvm_failure(tmp_path):
    pidfile = tmp_path / "worker.pid"
    (tmp_path / "slow.py").write_text(SLOW_PASS.format(pidfile=str(pidfile)))
    proc = start_tk("run", "slow.py", cwd=tmp_path)
    wait_for(lambda: pid_in(pidfile), proc=proc)
    proc.send_signal(signal.SIGINT)  # what the terminal sends tk on Ctrl-C
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "tk: interrupted" in err and "error" not in err


@needs_proc
def test_worker_killed_from_outside_is_not_called_a_crash(tmp_path):
    pidfile = tmp_path / "worker.pid"
    (tmp_path / "spin.py").write_text(SPIN.format(pidfile=str(pidfile)))
    proc = start_tk("run", "spin.py", cwd=tmp_path)
    os.kill(wait_for(lambda: pid_in(pidfile), proc=proc), signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGKILL, err
    assert "killed by SIGKILL from outside tk" in err and "crash inside" not in err


# --- the helpers themselves -------------------------------------------------------------


def test_fork_and_wait_reports_status_signal_and_timeout():
    assert process.fork_and_wait(lambda: 3) == process.Ended(code=3, finished=True)
    assert process.fork_and_wait(lambda: sys.exit(4)) == process.Ended(code=4, finished=True)
    def crash() -> None:
        faulthandler.disable()  # pytest's handler would print the child's stack
        os.kill(os.getpid(), signal.SIGSEGV)

    crashed = process.fork_and_wait(crash)
    assert crashed == process.Ended(signal=signal.SIGSEGV)
    start = time.monotonic()
    slow = process.fork_and_wait(lambda: time.sleep(60), timeout=0.3)
    assert slow.timed_out and slow.signal == signal.SIGKILL
    assert time.monotonic() - start < 30


def test_fork_and_wait_tells_an_early_os_exit_from_finishing(tmp_path):
    assert process.fork_and_wait(lambda: None) == process.Ended(code=0, finished=True)
    early = process.fork_and_wait(lambda: os._exit(0))
    assert early == process.Ended(code=0) and early.ended_early
    assert process.fork_and_wait(lambda: os._exit(5)).ended_early

    pidfile = tmp_path / "sleeper.pid"

    def fork_a_sleeper_then_leave() -> None:
        # A process it forks keeps the pipe's write end open: waiting must not block on it.
        sleeper = os.fork()
        if sleeper == 0:
            time.sleep(60)
            os._exit(0)
        pidfile.write_text(str(sleeper))
        os._exit(0)

    start = time.monotonic()
    assert process.fork_and_wait(fork_a_sleeper_then_leave).ended_early
    assert time.monotonic() - start < 30
    os.kill(int(pidfile.read_text()), signal.SIGKILL)

    def fork_one_that_returns() -> None:
        # A process forked with os.fork inside the work that returns through fork's frame
        # speaks for itself only: its parent, ended early, is not called finished.
        if os.fork() == 0:
            return
        time.sleep(0.5)
        os._exit(0)

    assert process.fork_and_wait(fork_one_that_returns).ended_early


def test_fork_prints_the_traceback_of_what_escapes(capfd):
    def boom() -> None:
        raise ValueError("the reason")

    assert process.fork_and_wait(boom) == process.Ended(code=1, finished=True)
    err = capfd.readouterr().err
    assert "Traceback (most recent call last)" in err and "ValueError: the reason" in err


def test_run_probe_reads_stages_and_refuses_a_missing_interpreter(tmp_path):
    ran = process.run_probe("extlibs", "where")
    assert ran.code == 0
    where = ran.stage("where")
    assert where is not None and process.STAGE not in where and "tvm_dir" in where
    with pytest.raises(UserError, match="no such interpreter"):
        process.run_probe("extlibs", "where", python=str(tmp_path / "no-python"))
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho '{\"stage\": \"early\", \"x\": 1}'\necho dying >&2\n"
                      "kill -SEGV $$\n")
    broken.chmod(0o755)
    ran = process.run_probe("extlibs", "where", python=str(broken))
    assert ran.stage("early") == {"x": 1} and ran.stage("where") is None
    assert ran.code == -signal.SIGSEGV and ran.last_error_line() == "dying"


def test_every_probe_stage_is_written_down():
    """The protocol's one description stays true: each stage a probe emits is named there."""
    import re

    probes = REPO / "toolkit" / "probes"
    source = "".join(p.read_text() for p in probes.glob("*.py"))
    stages = set(re.findall(r'(?:emit|load_and_report)\(\s*"(\w+)"', source))
    assert {"python", "import", "mapped", "globals", "where"} <= stages
    doc = process.__doc__ or ""
    section = doc[doc.index("Probes (``run_probe``)"):doc.index("toolkit.bisect.protocol")]
    assert not [s for s in sorted(stages) if not re.search(rf"\b{s}\b", section)]
