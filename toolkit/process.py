"""The processes tk starts, and everything they say to each other - written down once here.

Like the package comment of Go's ``cmd/bisect``, this is the reference for the protocols
between tk and its other processes; the constants below are the only definitions of the
names and numbers, and the modules speaking each protocol import them from here.

The worker (``guard``)
    Every ``tk`` command runs in a forked *worker*: a crash inside TVM (a segfault in a
    pass, in LLVM's JIT, in a kernel) kills the worker, and tk - the parent, which does no
    TVM work - reports it. The worker leads a session of its own, so everything it starts
    (CMake, Ninja and compilers, bisect checks and builds, the pass-probe server) belongs to
    that session, process groups made inside it included. The worker dies with tk: it has
    a parent-death signal (``PR_SET_PDEATHSIG``, SIGKILL), and a *sweeper* process waits on
    a pipe only tk holds; when tk ends, however it ends (even by SIGKILL), the pipe closes
    and the sweeper kills whatever is left of the session. tk forwards SIGINT, SIGTERM and
    SIGHUP to the worker, which raises ``KeyboardInterrupt`` so cleanups run; a second
    Ctrl-C, or ``STOP_GRACE`` seconds after SIGTERM/SIGHUP, kills the session outright.
    Ctrl-Z (SIGTSTP) stops the session with tk, and it goes on when tk does.
    ``TK_NO_FORK=1`` runs the command in tk's own process (for debuggers; no guard).

    A worker whose work can be redone up to a crash, to keep what the crash lost, says so
    by writing ``RERUN`` on a pipe to tk (``rerun_after_crash``; tk dump-ir does, before
    compiling). If it then dies of one of ``CRASH_SIGNALS`` (and tk was not asked to stop),
    tk starts a second worker on the same command line, with ``AFTER_CRASH`` in its
    environment naming the first worker's pid and signal (``after_crash``); it is guarded
    the same way and its ending is tk's. Only one second worker, whatever it does.

    A forked child (the worker, a pass probe) says it finished by writing ``FINISHED`` on
    a pipe only it and its parent hold, just before it exits: an exit without it is one
    that skipped the end of tk's work - ``os._exit`` or C's ``exit()`` in the workload or a
    library it loaded - and an ``os._exit(0)`` there is never taken for a success.

    Exit status of ``tk``: 0 done; 1 a failure of tk, of its environment or of TVM
    (``toolkit.errors.TkError``), and a crash inside TVM (one of ``CRASH_SIGNALS``, with a
    reproduce line); 2 a mistake in what was asked (``UserError``), and an ``os._exit(0)``
    before the worker finished (any other early exit keeps its status, with a line saying
    so); ``FLAKY`` (3) from ``tk bisect`` when runs of one probe disagreed (a flaky check):
    no culprit is named on that evidence; ``INTERRUPTED`` (130)
    after Ctrl-C; 128+N when tk or its worker was stopped by signal N from outside
    (SIGTERM: 143, SIGKILL: 137) - said so, never called a crash.

Probes (``run_probe``)
    Stdlib-only scripts under ``toolkit/probes``, run by path in the interpreter
    under test: ``python PROBE.py [MODE ARGS...]``. They print one JSON object per line,
    flushed, each with a ``STAGE`` key naming what it holds, so a crash mid-way leaves the
    stages before it; other lines (TVM's own logging) are ignored. ``doctor.py [--light]``
    emits python, packages, import, libraries, environment, mapped, build_info, runtimes,
    smoke_llvm, smoke_cuda (``--light``: no smoke stages, digests or tvm_dists);
    ``extlibs.py MODE`` emits, per mode: ``mapped`` -> mapped; ``globals LIB...`` -> loading
    and globals per library; ``owners`` -> loading and owner per library; ``environment`` ->
    environment; ``where`` -> where. ``explain.py JSON`` (the names a log mentions) emits tvm,
    source, build, libraries, globals, names. (The probes spell ``"stage"`` themselves: they
    cannot import toolkit.)

The packer (``toolkit.builds.gc.pack_in_background``)
    The one process tk leaves running on purpose: ``python -m toolkit.builds.gc FD KEEP...``
    packs the builds a ``tk build`` or ``tk bisect run`` displaced, after it has returned. It
    starts a session of its own (the sweeper would end it with tk), at the lowest priority,
    with no terminal: stdin and stdout are /dev/null, stderr the store's ``pack.log``, where
    it writes one line (what it packed, its time and CPU) or its traceback. FD is a lock
    file its parent took (shared) for it: ``gc.wait_for_packing`` takes it exclusively.

The protocols between a bisection and the processes it starts (checks, the pass-probe
server, function bisection) are written down in ``toolkit.bisect.protocol``.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from toolkit.errors import TkError, UserError

if TYPE_CHECKING:
    import subprocess

# The directory holding toolkit/: a process tk starts in a build's environment (a pass or
# function probe server, a ready-made bisect check) imports tk from here.
TK_ROOT = Path(__file__).resolve().parent.parent


def with_toolkit(env: dict[str, str]) -> dict[str, str]:
    """``env`` with tk importable, after its own PYTHONPATH entries (the TVM under test, found
    through those, wins over anything beside tk)."""
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**env, "PYTHONPATH": os.pathsep.join([*paths, str(TK_ROOT)])}

# --- the worker -------------------------------------------------------------------------
INTERRUPTED = 128 + signal.SIGINT
FLAKY = 3  # tk bisect: runs of one probe disagreed, so the answer is no culprit
# Signals a process gets from its own code going wrong; any other one was sent from outside.
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE,
                           signal.SIGABRT, signal.SIGSYS, signal.SIGTRAP})
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_GRACE = 5.0  # seconds a worker gets to clean up after SIGTERM/SIGHUP
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
FINISHED = b"F"  # a forked child's last write before it exits, on its own pipe
RERUN = b"R"  # a worker's request for a second worker should it crash
AFTER_CRASH = "TK_AFTER_CRASH"  # "PID SIGNAL" of the crashed worker, in the second one

# --- probes -----------------------------------------------------------------------------
STAGE = "stage"


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


# --- probes -----------------------------------------------------------------------------


@dataclass
class ProbeRun:
    """What a probe printed, and how its process ended."""

    records: list[dict[str, Any]] = field(default_factory=list)
    code: int | None = None  # exit status; negative: killed by that signal; None: timed out
    stderr: str = ""  # the last 4000 characters

    def stage(self, name: str) -> dict[str, Any] | None:
        """The last record of stage ``name`` (without its stage key), or None."""
        found = [r for r in self.records if r.get(STAGE) == name]
        return {k: v for k, v in found[-1].items() if k != STAGE} if found else None

    @property
    def ended(self) -> dict[str, Any]:
        return {"code": self.code, "stderr": self.stderr}

    def last_error_line(self) -> str:
        return last_line(self.stderr, "timed out" if self.code is None
                         else f"exit {self.code}, no output")


def last_line(stderr: str, otherwise: str) -> str:
    """A failed process's cause in one line: the last thing it wrote on stderr (where tools
    put the error that stopped them), else ``otherwise`` (its exit status, say)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else otherwise


def run_probe(name: str, *args: str, python: str = sys.executable,
              env: dict[str, str] | None = None, timeout: float = 300,
              cwd: Path | None = None) -> ProbeRun:
    """Run the probe script ``name`` under ``python``; its JSON-line records in order.

    A missing or non-executable interpreter is the user's mistake (``UserError``); a probe
    that crashes or times out is a result (``code``), never an exception."""
    import subprocess  # here, not at the top: tk's parent process imports this module

    from toolkit.probes import path_of

    try:
        proc = subprocess.run([python, str(path_of(name)), *args], capture_output=True,
                              text=True, errors="replace", timeout=timeout, env=env, cwd=cwd)
    except FileNotFoundError:
        raise UserError(f"--python {python}: no such interpreter") from None
    except PermissionError:
        raise UserError(f"--python {python}: not executable") from None
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        return ProbeRun(_records(out or ""), None, f"probe timed out after {timeout:.0f} s")
    return ProbeRun(_records(proc.stdout), proc.returncode, proc.stderr[-4000:])


def _records(stdout: str) -> list[dict[str, Any]]:
    records = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # TVM's own logging on stdout
        if isinstance(record, dict) and STAGE in record:
            records.append(record)
    return records


# --- fork and wait ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ended:
    """How a forked child ended: its exit status, or the signal that killed it."""

    code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    # It went through the end of ``fork`` (its work returned or raised): False for a child
    # that ended itself early (os._exit, C's exit()) or was killed.
    finished: bool = False

    @property
    def ended_early(self) -> bool:
        """It exited by itself, but before its work was done."""
        return self.code is not None and not self.finished


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


# The read ends of the pipes this process's forked children write FINISHED on, by pid.
_finish_pipes: dict[int, int] = {}


def fork(work: Callable[[], int | None], setup: Callable[[], None] | None = None) -> int:
    """Run ``work`` in a forked child, which exits with its status; the child's pid.

    The child leaves through ``os._exit`` (the parent's atexit handlers and buffers are not
    its to run), so whatever ends ``work`` is turned into a status first: SystemExit's code,
    128+N for KeyboardInterrupt after signal N, and for any other exception its traceback
    (what ``--debug`` asks for) and the status that exception stands for. Just before, it
    writes ``FINISHED`` on its pipe (``wait`` reads it: ``Ended.finished``)."""
    sys.stdout.flush()
    sys.stderr.flush()
    finish_r, finish_w = os.pipe()  # not inherited by programs it execs (O_CLOEXEC)
    pid = os.fork()
    if pid:
        os.close(finish_w)
        _finish_pipes[pid] = finish_r
        return pid
    os.close(finish_r)
    for fd in _finish_pipes.values():  # its siblings' pipes are the parent's to read
        os.close(fd)
    _finish_pipes.clear()
    me = os.getpid()
    code = 1
    try:
        if setup is not None:
            setup()
        rv = work()
        code = rv if isinstance(rv, int) else 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt:
        code = 128 + (_stopped_by or signal.SIGINT)
    except BaseException as exc:  # noqa: BLE001 - the child's last words, then its status
        import traceback

        traceback.print_exc()
        code = exc.exit_code if isinstance(exc, TkError) else 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            # Only this child says so: a process its work forked with os.fork, returning
            # through this frame, is not the one the parent waits for.
            if os.getpid() == me:
                try:
                    os.write(finish_w, FINISHED)
                except OSError:  # the parent is gone: nobody is left to tell
                    pass
            os._exit(code)


def wait(pid: int, timeout: float | None = None) -> Ended:
    """Wait for child ``pid`` (forked by ``fork``); after ``timeout`` seconds kill it
    (SIGKILL) and say so."""
    if timeout is None:
        _, status = os.waitpid(pid, 0)  # signal handlers run while it blocks (PEP 475)
    else:
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                _finished(pid)
                return Ended(signal=signal.SIGKILL, timed_out=True)
            time.sleep(0.02)
    finished = _finished(pid)
    if os.WIFSIGNALED(status):
        return Ended(signal=os.WTERMSIG(status))
    return Ended(code=os.WEXITSTATUS(status), finished=finished)


def _finished(pid: int) -> bool:
    """Whether the dead child ``pid`` wrote FINISHED; closes its pipe. Never blocks: a
    process the child forked may still hold the write end open."""
    fd = _finish_pipes.pop(pid, None)
    if fd is None:
        return False
    try:
        os.set_blocking(fd, False)
        return os.read(fd, len(FINISHED)) == FINISHED
    except BlockingIOError:  # nothing written, the write end still open elsewhere
        return False
    finally:
        os.close(fd)


def fork_and_wait(work: Callable[[], int | None], timeout: float | None = None) -> Ended:
    """``work`` in a forked child (a crash there cannot take this process down), waited for."""
    return wait(fork(work), timeout)


# --- stopping: signals become KeyboardInterrupt, and who sent which is remembered ---------

_stopped_by: int | None = None


def stopped_by() -> int | None:
    """The signal (SIGINT, SIGTERM, SIGHUP) that asked this process to stop, if one did.

    A Ctrl-C that lands inside a Python callback TVM called (a pass, an instrument) comes
    back wrapped in a TVM error; this tells the command it was an interruption."""
    return _stopped_by


def _raise_stop(signum: int, frame: Any) -> None:
    global _stopped_by
    _stopped_by = signum
    # Plain KeyboardInterrupt, whatever the signal: subprocess and the bisect loop treat it
    # specially (they stop waiting for their children, and save state as interrupted).
    raise KeyboardInterrupt


def stop_on_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt here, so cleanups run."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _raise_stop)


def own_group() -> dict[str, Any]:
    """``subprocess.Popen`` arguments that start a child in a process group of its own, in
    this session: a timeout can kill it whole, and the sweeper still finds it (a new session,
    ``start_new_session``, would escape the sweep)."""
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the process group ``own_group`` gave ``proc`` (whatever it started goes with
    it; a group already gone is fine) and reap ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


# --- the guard ----------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    """Be killed (SIGKILL) when ``parent`` dies, however it dies (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request was made
        os._exit(128 + signal.SIGKILL)


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``, from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses
        fields = stat[stat.rindex(b")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != b"Z":
            found.append(int(entry.name))
    return found


def signal_session(sid: int, sig: int) -> int:
    """Send ``sig`` to every live process of session ``sid`` but this one; how many."""
    if not os.path.isdir("/proc"):  # no /proc: the worker's own group is what can be reached
        try:
            os.killpg(sid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        return 0
    me = os.getpid()
    pids = [p for p in session_members(sid) if p != me]
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return len(pids)


def kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` but this one, until none is left."""
    for _ in range(100):  # a process may fork while its session is being killed
        if not signal_session(sid, signal.SIGKILL):
            return
        time.sleep(0.005)


def _sweep_when_closed(lifeline: int, spare: int, session: int) -> int:
    """The sweeper: wait until the lifeline's write end is closed everywhere - tk is done or
    dead - then kill what is left of the worker's session."""
    os.close(spare)
    os.setsid()  # out of tk's process group: a kill of that group leaves the sweeper to sweep
    for sig in (*STOP_SIGNALS, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)  # a Ctrl-C or a kill of tk's group is for tk
    while os.read(lifeline, 1):
        pass
    kill_session(session)
    return 0


def guard(work: Callable[[], None], argv: Sequence[str]) -> NoReturn:
    """Run ``work`` (which ends by raising SystemExit) in a worker that dies with this
    process; exit as it did, or say how it was killed. A worker that crashed after asking
    for it (``rerun_after_crash``) is followed by a second one, told of the crash."""
    rerun_r, rerun_w = os.pipe()
    ended, stop, worker = _guarded_worker(work, rerun_w, None)
    if ended.signal in CRASH_SIGNALS and not stop and _rerun_requested(rerun_r):
        print(f"tk: the process doing the work was killed by {signal_name(ended.signal)}; "
              "running the work again up to where it crashed", file=sys.stderr)
        ended, stop, _ = _guarded_worker(work, None, Crash(worker, ended.signal))
    code = _report(ended, stop, argv)
    # This process only waited: the work, and its cleanups, ran in the worker. Tearing its
    # interpreter down (every module's objects freed one by one) would be ~9 ms more of each
    # tk command, for nothing; its output is flushed and nothing registered to run at exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _guarded_worker(work: Callable[[], None], rerun_w: int | None,
                    crash: Crash | None) -> tuple[Ended, list[int], int]:
    """One worker with its sweeper, this process forwarding signals to it while it runs:
    how it ended, the stop signals this process got meanwhile, its pid."""
    parent = os.getpid()
    # Until this process's handlers below exist, a signal waits (blocked) rather than taking
    # its default action on tk alone: a Ctrl-Z that came as soon as the worker ran would
    # stop tk and leave the worker running. They are unblocked after, even where tk was
    # started with them blocked (a mask is inherited: a test runner's worker had SIGTSTP
    # blocked, and Ctrl-Z never reached tk). The sweeper keeps them blocked: they are for tk.
    handled = (*STOP_SIGNALS, signal.SIGTSTP)
    signal.pthread_sigmask(signal.SIG_BLOCK, handled)

    def become_worker() -> None:
        global _rerun_pipe
        os.setsid()
        _die_with_parent(parent)
        stop_on_signals()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, handled)
        _rerun_pipe = rerun_w
        if crash is not None:
            os.environ[AFTER_CRASH] = f"{crash.pid} {crash.signal}"

    # The worker shares this process's pages until it writes to them. The collector writes to
    # every object it visits, so one collection in the worker would copy all the pages the
    # imports so far filled (~10 ms of each tk command). Those objects live as long as the
    # process anyway: frozen, the collector leaves them alone.
    gc.freeze()
    worker = fork(work, become_worker)
    lifeline, spare = os.pipe()
    sweeper = fork(lambda: _sweep_when_closed(lifeline, spare, worker))
    os.close(lifeline)

    stop: list[int] = []  # the signals this process got, in order

    def kill_worker(*_: Any) -> None:
        kill_session(worker)

    def forward(signum: int, frame: Any) -> None:
        stop.append(signum)
        if signum == signal.SIGINT and stop.count(signal.SIGINT) > 1:
            kill_worker()  # a second Ctrl-C: the worker is stuck where Python cannot stop it
            return
        try:
            os.kill(worker, signum)
        except ProcessLookupError:
            return
        if signum != signal.SIGINT:
            signal.signal(signal.SIGALRM, kill_worker)
            signal.setitimer(signal.ITIMER_REAL, STOP_GRACE)

    def suspend(signum: int, frame: Any) -> None:
        # Ctrl-Z stops the terminal's process group; the worker's session is not in it.
        signal_session(worker, signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until 'fg' or 'bg' (SIGCONT)
        signal.signal(signal.SIGTSTP, suspend)
        signal_session(worker, signal.SIGCONT)

    for sig in STOP_SIGNALS:
        signal.signal(sig, forward)
    signal.signal(signal.SIGTSTP, suspend)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, handled)  # what came meanwhile is handled now
    ended = wait(worker)
    signal.setitimer(signal.ITIMER_REAL, 0)
    for sig in (*STOP_SIGNALS, signal.SIGALRM, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    os.close(spare)  # the sweeper ends what the worker left running
    wait(sweeper)
    return ended, stop, worker


# --- a second worker after a crash ----------------------------------------------------------


@dataclass(frozen=True)
class Crash:
    """The worker before this one: its pid, and the signal that killed it."""

    pid: int
    signal: int


_rerun_pipe: int | None = None  # the worker's end of the guard's rerun pipe


def rerun_after_crash() -> None:
    """Ask the guard, should this worker crash, for a second worker running the same
    command with ``after_crash()`` set (dump-ir replays the compile up to the crash)."""
    if _rerun_pipe is not None:
        os.write(_rerun_pipe, RERUN)


def after_crash() -> Crash | None:
    """In the second worker, the crash of the first; None otherwise."""
    value = os.environ.get(AFTER_CRASH, "").split()
    return Crash(int(value[0]), int(value[1])) if len(value) == 2 else None


def _rerun_requested(rerun_r: int) -> bool:
    os.set_blocking(rerun_r, False)
    try:
        return RERUN in os.read(rerun_r, 64)
    except BlockingIOError:
        return False


def _report(ended: Ended, stop: list[int], argv: Sequence[str]) -> int:
    """The exit status of tk for how its worker ended; says why when the worker did not."""
    import shlex

    if ended.ended_early:
        # The worker skipped tk's end (os._exit, C's exit()): whatever was asked was not done,
        # and an exit status of 0 would read as a pass.
        print(f"tk: error: the workload ended the process (os._exit({ended.code})) before tk "
              "finished - or a library it loaded did; there is no result", file=sys.stderr)
        return ended.code or 2
    if ended.signal is None:
        return ended.code if ended.code is not None else 1
    if stop:  # killed after tk was asked to stop: that is what happened, not a crash
        print("tk: interrupted" if stop[0] == signal.SIGINT else
              f"tk: stopped by {signal_name(stop[0])}", file=sys.stderr)
        return 128 + stop[0]
    name = signal_name(ended.signal)
    if ended.signal in CRASH_SIGNALS:
        print(f"tk: error: the process doing the work was killed by {name} - a crash inside "
              f"TVM or a library it loaded (see its output above).\n"
              f"  reproduce: TK_NO_FORK=1 python -X faulthandler -m toolkit {shlex.join(argv)}\n"
              f"  explain:   {shlex.join(['tk', *argv])} 2>&1 | tk explain -", file=sys.stderr)
        return 1
    who = " (by a user, or by the kernel's out-of-memory killer)" \
        if ended.signal == signal.SIGKILL else ""
    print(f"tk: error: the process doing the work was killed by {name} from outside tk{who}; "
          "nothing in it crashed", file=sys.stderr)
    return 128 + ended.signal
