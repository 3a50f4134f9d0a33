"""Files tk writes for a user belong to that user, even when tk runs as root.

Under sudo, or when root builds a tree another user owns, everything tk (and the build it runs)
creates there would otherwise be root's, and the owner's next ``tk build`` or ``git`` fails
with a PermissionError. Only files that root owns are handed over: a file of a third user
stays theirs. A tree's files go to the tree's owner (``owner_of``); an output (a dump, a
report, a library) to the owner of the directory it goes into, or, where root owns that
(``/tmp``), to the user sudo ran tk for (``owner_for_output``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def owner_of(root: Path) -> tuple[int, int] | None:
    """(uid, gid) that files written under ``root`` should have, when tk runs as root and the
    tree is someone else's; None when what tk writes is already right."""
    if os.geteuid() != 0:
        return None
    st = root.stat()
    return (st.st_uid, st.st_gid) if st.st_uid != 0 else None


def owner_for_output(path: Path) -> tuple[int, int] | None:
    """(uid, gid) an output written at ``path`` should have when tk runs as root: the owner of
    the nearest directory that exists above it, else the user ``sudo`` names; None when what
    tk writes is already right."""
    if os.geteuid() != 0:
        return None
    parent = next((p for p in path.absolute().parents if p.exists()), Path("/"))
    st = parent.stat()
    if st.st_uid != 0:
        return st.st_uid, st.st_gid
    uid, gid = os.environ.get("SUDO_UID", ""), os.environ.get("SUDO_GID", "")
    return (int(uid), int(gid)) if uid.isdigit() and gid.isdigit() and uid != "0" else None


def hand_over(path: Path, owner: tuple[int, int] | None, recursive: bool = True) -> None:
    """Give ``path`` and, for a directory, everything under it that root owns to ``owner``
    (symbolic links themselves, never what they point to)."""
    if owner is None or not os.path.lexists(path):
        return
    _chown(path, owner)
    if recursive and path.is_dir() and not path.is_symlink():
        for top, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                _chown(Path(top) / name, owner)


def _chown(path: Path, owner: tuple[int, int]) -> None:
    try:
        if path.lstat().st_uid == 0:
            os.chown(path, *owner, follow_symlinks=False)
    except FileNotFoundError:
        pass  # removed while we walked (a build's temporary file)


@contextlib.contextmanager
def handing_over(root: Path, owner: tuple[int, int] | None) -> Iterator[None]:
    """What root comes to own under ``root`` while the block runs (a build that writes next
    to its sources, not only into its build directory) goes to ``owner`` afterwards, however
    the block ends; what was root's before stays root's."""
    if owner is None:
        yield
        return
    before = set(_root_owned(root))
    try:
        yield
    finally:
        for path in _root_owned(root):
            if path not in before:
                _chown(path, owner)


def _root_owned(root: Path) -> Iterator[Path]:
    for top, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(top) / name
            try:
                if path.lstat().st_uid == 0:
                    yield path
            except FileNotFoundError:
                continue
