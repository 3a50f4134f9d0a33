"""Writing only where tk may: a writable place, and replacing only files tk can prove it wrote.

``os.access`` answers yes to root everywhere (``/proc`` included), so :func:`probe_writable`
creates and removes a file of its own in the nearest directory that exists: what the write
will meet. An output directory tk writes into again (a dump, a report) carries a manifest
naming each file tk put there with its sha256 (:func:`read_manifest`, :func:`write_manifest`):
a file it does not name, or one changed since, is the user's and is never replaced.

A page tk writes (a dump's, a report's) carries its data as JSON inside a ``<script>``
element and its texts as HTML: :func:`script_json` and :func:`html_text` make each safe for
its context, and :func:`fill` puts them into a template in one pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
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


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in chunks (libraries run to hundreds of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(path: Path, fmt: str) -> dict[str, str] | None:
    """The files a manifest of format ``fmt`` vouches for (relative path -> sha256), or None
    when there is none or it is not one tk wrote."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) and data.get("format") == fmt else None
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        return None
    return files


def write_manifest(path: Path, fmt: str, files: dict[str, str]) -> None:
    """Write a manifest atomically: a reader sees the old one or the new one, never half."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"format": fmt, "files": dict(sorted(files.items()))},
                              indent=1) + "\n")
    os.replace(tmp, path)


def script_json(value: object) -> str:
    """JSON to put inside a ``<script>`` element. Not only "</script" ends the element
    early: "<!--" followed by "<script" puts the parser in a state where the real
    "</script>" is not seen (a name "c<!--<script>x.py" blanked a page). JSON with no raw
    "<", ">" or "&" can do neither, and parses to the same value."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_text(text: str) -> str:
    """Text to put between HTML tags or in a quoted attribute."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each key of ``values`` replaced, in one pass: a value that holds
    another key (a title naming "{{DATA}}") is not filled in again."""
    slots = re.compile("|".join(re.escape(k) for k in values))
    return slots.sub(lambda m: values[m.group(0)], template)
