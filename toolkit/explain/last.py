"""The log of tk's last failure, kept so ``tk explain --last`` can read it afterwards.

Every tk command that fails (exit 1 or 2, or an internal error) writes what it knows - the
command, its one-line error and the exception chain with TVM's frames - to
``last-failure.log`` in tk's cache directory (``$TK_CACHE``, which the CLI passes in: this
package stays below the build chore); the next failure replaces it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

NAME = "last-failure.log"


def save(cache: Path, argv: list[str], message: str, detail: str = "") -> Path | None:
    """Record a failure; never raises (a read-only cache must not hide the failure itself)."""
    text = f"$ {shlex.join(['tk', *argv])}\n{message}\n"
    if detail:
        text += f"\n{detail.rstrip()}\n"
    target = cache / NAME
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(target)
    except OSError:
        return None
    return target


def load(cache: Path) -> str | None:
    """The last failure's log, or None when no tk command has failed here yet."""
    try:
        return (cache / NAME).read_text(errors="replace")
    except OSError:
        return None
