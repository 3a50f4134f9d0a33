"""tk's one way to run git on a user's repository (a bisection, a build's tree, a fork).

Plain git processes, not GitPython: a bisection's start and a build's key need a handful of
commands, and GitPython's import alone costs ~50 ms. No optional locks: a read must not
refresh (and rewrite) the user's index (as root, under sudo: a root-owned index).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from toolkit.errors import TkError
from toolkit.process import last_line


class GitFailed(TkError):
    """A git command tk ran failed (its last line of stderr)."""


def run(*args: str, cwd: Path | str | None = None, check: bool = True,
        env: dict[str, str] | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``cwd``, output captured as text. With ``check``, a failure raises
    ``GitFailed`` naming the command, where it ran and git's last line of stderr. ``env`` is
    added to tk's environment (a commit's author and dates)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input,
                          env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", **(env or {})})
    if check and proc.returncode != 0:
        raise GitFailed(f"git {' '.join(args[:3])} in {cwd or os.getcwd()}: {failure(proc)}")
    return proc


def failure(proc: subprocess.CompletedProcess[str]) -> str:
    """What a failed git process said: its last line of stderr, or its exit status."""
    return last_line(proc.stderr, f"exit {proc.returncode}")
