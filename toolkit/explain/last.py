"""The log of tk's last failure, kept so ``tk explain --last`` can read it afterwards.

Every tk command that fails (exit 1 or 2, or an internal error) writes what it knows - the
command, its one-line error and the exception chain with TVM's frames - to
``last-failure.log`` in tk's cache directory (``$TK_CACHE``, which the CLI passes in: this
package stays below the build chore); the next failure replaces it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

NAME = "last-failure.log"


def save(cache: Path, argv: list[str], message: str, detail: str = "") -> Path | None:
    """Record a failure; never raises (a read-only cache must not hide the failure itself)."""
    text = f"$ {shlex.join(['tk', *argv])}\n{message}\n"
    if detail:
        text += f"\n{detail.rstrip()}\n"
    target = cache / NAME
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text)
        tmp.replace(target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return target


@dataclass
class Recorded:
    """The last failure's log, and what says whether it is the latest failure."""

    text: str
    when: float  # seconds since the epoch: when it was recorded
    unrecorded: str | None  # why a later failure may have gone unrecorded, or None

    def heading(self) -> str:
        """The line that says which failure this is: a log kept from before is not news."""
        command = self.text.split("\n", 1)[0]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.when))
        line = f"the last failure recorded, at {when}: {command}"
        return line + (f" (later ones may be missing: {self.unrecorded})" if self.unrecorded
                       else "")


def load(cache: Path) -> Recorded | None:
    """The last failure's log, or None when no tk command has failed here yet."""
    path = cache / NAME
    try:
        text, when = path.read_text(errors="replace"), path.stat().st_mtime
    except OSError:
        return None
    return Recorded(text, when, _unwritable(cache))


def _unwritable(cache: Path) -> str | None:
    """Why a failure could not be recorded in ``cache`` now (read-only, full), or None."""
    try:
        with tempfile.NamedTemporaryFile(dir=cache, prefix=".tk-probe-"):
            return None
    except OSError as e:
        return f"{cache} is not writable ({e.strerror or e})"
