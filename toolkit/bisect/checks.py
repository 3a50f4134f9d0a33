"""Turning ``--check`` into the argv a step runs: a ready-made check by name, or a command.

Ready-made checks are scripts in the repository's top-level ``bisect/`` directory (not a
Python package: it would shadow the standard library's ``bisect``). ``--check numerics
builtin:mlp`` runs ``bisect/numerics.py builtin:mlp`` with the Python of the step.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from toolkit.errors import UserError

# Shipped as package data (a link to the top-level bisect/ in a checkout), so an installed
# tk has them too.
CHECK_DIR = Path(__file__).resolve().parent.parent / "data" / "bisect"
SHELL_SYNTAX = ("&&", "||", "|", ";", ">", "<", "$", "`")


def ready_made() -> dict[str, Path]:
    """Ready-made checks by name (file stem), e.g. ``build-only``, ``pytest``, ``numerics``."""
    if not CHECK_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(CHECK_DIR.iterdir())
            if p.suffix in (".py", ".sh") and not p.name.startswith("_")}


def split_check(text: str) -> list[str]:
    """The words of a check written as one shell line; unbalanced quotes are the user's."""
    try:
        return shlex.split(text)
    except ValueError as e:
        raise UserError(f"--check {text!r} does not parse as a command line: {e}") from None


def resolve(words: Sequence[str], source: Path) -> tuple[list[str], str]:
    """(argv to run, the check as the user wrote it). A missing command is a user error."""
    words = list(words)
    if len(words) == 1:
        text = words[0]
        words = split_check(text)
    else:
        text = shlex.join(words)
    if not words:
        raise UserError("missing check: give --check CMD (or a ready-made check: "
                        f"{', '.join(ready_made())})")
    script = ready_made().get(words[0])
    if script is not None:
        runner = [sys.executable] if script.suffix == ".py" else ["/bin/sh"]
        return [*runner, str(script), *words[1:]], text
    if any(tok in text for tok in SHELL_SYNTAX):
        return ["/bin/sh", "-c", text], text
    cmd = words[0]
    if "/" in cmd:
        if (source / cmd).exists():
            return words, text  # a script of the tree: run the version of each commit
        if not Path(cmd).exists():
            raise UserError(f"check command {cmd!r} does not exist (relative paths are "
                            "taken from the top of the source tree)")
        words[0] = str(Path(cmd).resolve())
    elif shutil.which(cmd) is None:
        raise UserError(f"check command {cmd!r} not found on PATH; ready-made checks: "
                        f"{', '.join(ready_made())}")
    return words, text
