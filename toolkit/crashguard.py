"""Run tk's work in a forked child so a crash inside TVM becomes a report, not a core dump.

A segfault in a pass, in LLVM's JIT or in a kernel kills the process that runs it, and
a loaded libtvm cannot be unloaded or recovered. The parent does no TVM work: it waits,
and when the child dies of a signal it says what crashed and how to reproduce it.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run(work: Callable[[], None], argv: list[str]) -> None:
    """Run ``work`` (which ends by raising SystemExit) in a child; exit as it did."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            work()
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    # Ctrl-C reaches the child through the process group; the parent just waits for it.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGINT, previous)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGINT:
            print("tk: interrupted", file=sys.stderr)
            sys.exit(130)
        name = signal.Signals(sig).name
        command = shlex.join(["tk", *argv])
        print(
            f"tk: error: the process doing the work was killed by {name} - a crash inside TVM "
            f"or a library it loaded (see its output above).\n"
            f"  reproduce: TK_NO_FORK=1 python -X faulthandler -m toolkit {shlex.join(argv)}\n"
            f"  explain:   {command} 2>&1 | tk explain -",
            file=sys.stderr,
        )
        sys.exit(1)
    sys.exit(os.WEXITSTATUS(status))
