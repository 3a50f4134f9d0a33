"""The tk command line that repeats a failing piece of work (a failure's "reproduce:" line).

An extension loaded with ``--ext`` is part of what a command ran with (the target, the pass or
the code generator may be its own), so the loader notes each one here and every reproduce line
repeats them, in the order they were loaded.
"""

from __future__ import annotations

import shlex

_EXTENSIONS: list[str] = []  # resolved paths, as --ext loaded them in this process


def note_extension(path: str) -> None:
    _EXTENSIONS.append(path)


def extensions() -> list[str]:
    """The extensions ``--ext`` loaded in this process, in order."""
    return list(_EXTENSIONS)


def tk_command(command: str, source: str, target_spec: str, *extra: str) -> str:
    """``tk --debug COMMAND SOURCE --target T [--ext X ...] EXTRA...``, shell-quoted.

    ``--debug`` is tk's own option, so it goes before the command (``tk compile --debug`` is
    refused by click); ``extra`` are options of ``command``.
    """
    ext = [word for path in _EXTENSIONS for word in ("--ext", path)]
    words = ["tk", "--debug", command, source, "--target", target_spec, *ext, *extra]
    return " ".join(shlex.quote(w) for w in words)
