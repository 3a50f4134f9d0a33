"""What the store gives back: packing the builds no one uses, collecting the files nothing
links, and what each build (and the whole store) takes on disk.

Storing a new build packs the others (``pack_unused``): a build's library links are removed
(``.packed`` in its entry says which, by sha256; ``dematerialise``) and an object that loses
its last link is compressed into ``packs/`` (``pack``) - see ``toolkit.builds.store`` for the
layout and for ``materialise``, which undoes it. ``gc`` removes incomplete entries and packs
all but the newest build; ``remove`` deletes one build and what only it used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from toolkit.builds import store
from toolkit.builds.record import Artifact, BuildRecord
from toolkit.paths import cache_root


def pack(sha: str) -> None:
    """Compress the object ``sha`` into ``packs/`` (once)."""
    import lzma

    dst = store.pack_path(sha)
    if dst.exists():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.temporary(dst)
    # Preset 0: a third of zlib's size on these libraries at a few seconds per 50 MB.
    with store.object_path(sha).open("rb") as src, lzma.open(tmp, "wb", preset=0) as out:
        shutil.copyfileobj(src, out, 1 << 20)
    tmp.chmod(0o444)
    tmp.replace(dst)


def mapped_entries() -> set[str]:
    """Store entries whose files a live process has mapped (a Python with the build loaded)."""
    marker = str(store.builds_root()) + os.sep
    found = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text()
        except OSError:
            continue  # gone, or another user's
        start = text.find(marker)
        while start != -1:
            found.add(text[start + len(marker):].split(os.sep, 1)[0])
            start = text.find(marker, start + 1)
    return found


@store.serialised
def pack_unused(keep: set[str] | None = None) -> tuple[int, int]:
    """Pack every materialised build but those in ``keep``, the one this process's
    environment uses (``tk env`` in this shell), those ``tk env`` handed out in the last day
    and those a live process has mapped; then ``gc_objects``."""
    import time

    keep = set(keep or ()) | mapped_entries()
    current = store.in_use()
    if current is not None:
        keep.add(current.id)
    recent = time.time() - store.ENV_DAYS * 86400
    with store.packing(shared=False):
        builds = store.all_builds()
        # Unlinking another build's copy of a shared library changes its ctime: what was
        # verified in the kept builds stays so.
        verified = {r.id: [a for a in r.artifacts if a.link is None and _verified(r.id, a)]
                    for r in builds if r.id in keep}
        for record in builds:
            entry = store.entry_dir(record.id)
            stamp = entry / store.ENV_STAMP
            if (record.id in keep or store.being_built(entry) or store.packed_links(record.id)
                    or (stamp.exists() and stamp.stat().st_mtime > recent)):
                continue
            dematerialise(record)
        for key, arts in verified.items():
            store.stamp_verified(key, arts)
        return _gc_objects()


def _verified(key: str, art: Artifact) -> bool:
    try:
        stamps = json.loads((store.entry_dir(key) / store.VERIFIED).read_text())
        st = os.stat(art.path)
    except (OSError, ValueError):
        return False
    return stamps.get(art.name) == [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


@store.serialised
def dematerialise(record: BuildRecord) -> None:
    """Remove the entry's links to its libraries' objects (lib/, and python/'s link to the
    build's libtvm_ffi.so), saying which in ``.packed``; ``gc_objects`` packs what is left
    unlinked."""
    entry = store.entry_dir(record.id)
    shas = {a.sha256 for a in record.artifacts if a.link is None and a.sha256}
    inodes = {}
    for sha in shas:
        with contextlib.suppress(OSError):
            st = store.object_path(sha).stat()
            inodes[(st.st_dev, st.st_ino)] = sha
    links = store.packed_links(record.id)
    for dirpath, _dirs, names in os.walk(entry):
        for name in names:
            if store.is_temporary(name):
                continue  # being written (or left: gc removes it), not one of the build's files
            path = Path(dirpath) / name
            st = path.lstat()
            sha = inodes.get((st.st_dev, st.st_ino))
            if sha is not None and not path.is_symlink():
                links[str(path.relative_to(entry))] = sha
    store._write_json(entry / store.PACKED, links)
    for rel in links:
        (entry / rel).unlink(missing_ok=True)
    (entry / store.VERIFIED).unlink(missing_ok=True)


@dataclass
class Usage:
    files: int
    bytes: int  # what the build's files add up to
    unique: int  # what removing it would free: files no other build links
    packed: bool = False  # its libraries are in packs/, unpacked when it is used


def usage(record: BuildRecord) -> Usage:
    """Bytes of a stored build, each stored file once (by inode), its packed libraries as the
    room their packs take."""
    directory = store.entry_dir(record.id)
    seen: set[tuple[int, int]] = set()
    total = unique = files = 0
    for dirpath, _dirs, names in os.walk(directory):
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            if not os.path.isfile(os.path.join(dirpath, name)) or os.path.islink(
                    os.path.join(dirpath, name)) or (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            files += 1
            total += st.st_size
            # An object linked from the objects dir and from here alone is this build's own;
            # a plain file (a log, the record) is too.
            if st.st_nlink <= 2:
                unique += st.st_size
    packed = set(store.packed_links(record.id).values())
    if packed:
        others = referenced(exclude=record.id)
        for sha in packed:
            if store.object_path(sha).exists() or not store.pack_path(sha).exists():
                continue
            size = store.pack_path(sha).stat().st_size
            files += 1
            total += size
            unique += 0 if sha in others else size
    return Usage(files, total, unique, packed=bool(packed))


def referenced(exclude: str | None = None) -> set[str]:
    """The sha256 of every library a complete stored build has (``exclude`` left out)."""
    return {a.sha256 for r in store.all_builds() if r.id != exclude
            for a in r.artifacts if a.sha256}


def store_usage() -> int:
    """Bytes the whole store takes on disk (each object once)."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for dirpath, _dirs, names in os.walk(cache_root()):
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path) or (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def remove(record: BuildRecord) -> int:
    """Delete a stored build and the objects and packs only it used; bytes freed."""
    freed = usage(record).unique
    shutil.rmtree(store.entry_dir(record.id))
    gc_objects()
    return freed


@store.serialised
def gc_objects() -> tuple[int, int]:
    """Objects no build links any more: packed when a stored build still has them, else
    removed with their packs; (count, bytes of full files removed)."""
    with store.packing(shared=False):
        return _gc_objects()


def _gc_objects() -> tuple[int, int]:
    import time

    stale = time.time() - 3600  # a .tmp this old is no one's file being written
    count = freed = 0
    keep = referenced()
    root = store.objects_root()
    for obj in root.glob("*/*") if root.is_dir() else []:
        try:
            st = obj.lstat()
        except FileNotFoundError:
            continue  # a temporary file just renamed into place
        if obj.name.endswith(".tmp") and st.st_mtime > stale and not store.abandoned(obj):
            continue
        if obj.name.endswith(".tmp") or st.st_nlink <= 1:
            if obj.name in keep:
                pack(obj.name)
            obj.unlink()
            count += 1
            freed += st.st_size
    proot = store.packs_root()
    for packed in proot.glob("*/*") if proot.is_dir() else []:
        try:
            st = packed.lstat()
        except FileNotFoundError:
            continue
        if packed.name.endswith(".tmp") and st.st_mtime > stale and not store.abandoned(packed):
            continue
        if packed.name.endswith(".tmp") or packed.name.split(".")[0] not in keep:
            freed += st.st_size
            packed.unlink()
    return count, freed


def remove_abandoned() -> int:
    """Remove the temporary files whose writer is gone from the store's entries and its top
    (a killed tk's half-made link in a build's lib/, a stamp file's); how many."""
    root = cache_root()
    found = [p for p in root.iterdir() if p.is_file()] if root.is_dir() else []
    for dirpath, _dirs, names in os.walk(store.builds_root()):
        found += [Path(dirpath) / name for name in names if store.is_temporary(name)]
    count = 0
    for path in found:
        if store.abandoned(path):
            path.unlink(missing_ok=True)
            count += 1
    return count


def gc() -> dict[str, int]:
    """Remove incomplete or unreadable entries (an interrupted build, an older tk's record)
    and temporary files their writer left, pack the builds no one uses (all but the newest),
    then remove what nothing links. The tvm-ffi wheels stay: they are what spares the next
    build of the same tvm-ffi sources its Python package build."""
    entries = 0
    root = store.builds_root()
    for entry in (root.iterdir() if root.is_dir() else []):
        if entry.is_dir() and store.load(entry.name) is None and not store.being_built(entry):
            shutil.rmtree(entry)
            entries += 1
    temporaries = remove_abandoned()
    builds = store.all_builds()
    count, freed = pack_unused(keep={builds[0].id} if builds else None)
    return {"entries": entries, "temporaries": temporaries, "objects": count, "bytes": freed}
