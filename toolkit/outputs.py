"""Refuse, before any work, an output place nothing can be written to.

``os.access`` answers yes to root everywhere (``/proc`` included), so the probe creates and
removes a file of its own in the nearest directory that exists: what the write will meet.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from toolkit.errors import UserError


def probe_writable(directory: Path, what: str) -> None:
    """A user error naming ``what`` (e.g. ``-o out/``) when files cannot be made in
    ``directory`` (made later, with its parents, where it does not exist yet)."""
    existing = next((p for p in (directory, *directory.parents) if os.path.lexists(p)),
                    Path(directory.anchor or "."))
    if not existing.is_dir():
        raise UserError(f"{what}: {existing} is not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".tk-probe-"):
            pass
    except OSError as e:
        raise UserError(f"{what}: cannot write in {existing} ({e.strerror or e})") from None
