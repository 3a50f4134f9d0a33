"""Writing only where tk may: a writable place, and replacing only files tk can prove it wrote.

``os.access`` answers yes to root everywhere (``/proc`` included), so :func:`probe_writable`
creates and removes a file of its own in the nearest directory that exists: what the write
will meet. An output directory tk writes into again (a dump, a report) carries a manifest
naming each file tk put there with its sha256 (:func:`read_manifest`, :func:`write_manifest`):
a file it does not name, or one changed since, is the user's and is never replaced.

An output is written beside its place and renamed into it (``writing``): a full disk or a
kill leaves nothing half-written under the user's name, a write the environment refuses is
one line naming the file, and what tk made belongs to the user tk ran for (sudo).

A page tk writes (a dump's, a report's) carries its data as JSON inside a ``<script>``
element and its texts as HTML: :func:`script_json` and :func:`html_text` make each safe for
its context, and :func:`fill` puts them into a template in one pass.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from toolkit import ownership
from toolkit.errors import UserError

# What the user's environment refuses (not tk's failure): said in one line, exit 2.
ENVIRONMENT = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
                         errno.EFBIG})


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
    with writing(path, str(path.parent)) as tmp:
        tmp.write_text(json.dumps({"format": fmt, "files": dict(sorted(files.items()))},
                                  indent=1) + "\n")


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


def refused(e: OSError, what: str | None = None) -> UserError:
    """The one line for a write the environment refused (full disk, read-only, no right);
    ``what`` names the output it was for (``-o out.so``)."""
    where = f" {e.filename}" if e.filename else ""
    return UserError(f"{what + ': ' if what else ''}cannot write{where}: {e.strerror or e}")


@contextlib.contextmanager
def writing(path: Path, what: str) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix: TVM and numpy choose formats by it) to
    write into. When the block ends cleanly it becomes ``path`` (whole: a rename) and, when
    tk runs as root, the user's (with the directories made for it); otherwise it is removed,
    with the directories made for it. ``what`` names the output in the one line a refused
    write gets (``-o out.so``)."""
    tmp = path.with_name(f".{path.stem}.tk-{os.getpid()}.tmp{path.suffix}")
    try:
        with users(path):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                yield tmp
                os.replace(tmp, path)
            except BaseException:
                _remove(tmp)
                raise
    except OSError as e:
        if e.errno in ENVIRONMENT:
            raise refused(e, what) from None
        raise


@contextlib.contextmanager
def users(path: Path) -> Iterator[None]:
    """What the block makes at ``path``, and the directories it makes above it, belong to the
    user tk runs for when tk runs as root (sudo). When the block fails, the directories it
    made are removed again (if it left them empty)."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    owner = ownership.owner_for_output(path)  # before the block makes the directories
    try:
        yield
    except BaseException:
        for directory in missing:  # the deepest first
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    ownership.hand_over(missing[-1] if missing else path, owner)


def environment_refusal(text: str) -> str | None:
    """The reason a tool's message gives for a write the environment refused (a linker's "No
    space left on device"), or None: a tool run in a subprocess reports it only as text."""
    return next((os.strerror(n) for n in sorted(ENVIRONMENT) if os.strerror(n) in text), None)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()
