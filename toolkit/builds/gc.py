"""What the store gives back: packing the builds no one uses, collecting the files nothing
links, and what each build (and the whole store) takes on disk.

Storing a new build packs the others (``pack_unused``): a build's library links are removed
(``.packed`` in its entry says which, by sha256; ``dematerialise``) and an object that loses
its last link is compressed into ``packs/`` (``pack``) - see ``toolkit.builds.store`` for the
layout and for ``materialise``, which undoes it. ``gc`` removes incomplete entries and packs
all but the newest build; ``remove`` deletes one build and what only it used.

Compressing is the slow part (a minute for the gigabyte of a Debug compiler library), so
``tk build`` and ``tk bisect run`` leave it to a process of their own (``pack_in_background``)
and return; and no one waits for it: the store's lock is held to decide what to pack and to
remove an object once its pack is whole, never while compressing (``gc_objects``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
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
    return gc_objects()


PACKERS = ".packers.lock"  # held (shared) by every packer a tk started, until it is done


def pack_in_background(keep: set[str]) -> None:
    """``pack_unused(keep)`` in a process of its own, at the lowest priority, that outlives
    tk (a session of its own: tk's guard ends whatever tk leaves running in its session).
    It holds ``PACKERS`` from the start (its lock is taken here and handed to it), so
    ``wait_for_packing`` never misses one that has not got going yet; what it did, or why
    it failed, goes to the store's ``pack.log``."""
    from toolkit.process import with_toolkit

    root = cache_root()
    builds = store.builds_root()
    if not builds.is_dir() or not any(
            e.name not in keep and (e / store.MANIFEST).exists()
            and not (e / store.PACKED).exists() for e in builds.iterdir()):
        return  # no other build is unpacked: nothing to pack
    try:
        held = (root / PACKERS).open("a")
    except OSError:
        return  # a read-only store: nothing to pack there
    with held, (root / "pack.log").open("a") as log:
        fcntl.flock(held, fcntl.LOCK_SH)
        subprocess.Popen([sys.executable, "-m", "toolkit.builds.gc", str(held.fileno()),
                          *sorted(keep)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=log, pass_fds=(held.fileno(),),
                         start_new_session=True, env=with_toolkit(dict(os.environ)))


def wait_for_packing() -> None:
    """Return when no packer a tk started (``pack_in_background``) is still at work."""
    lock = cache_root() / PACKERS
    if not lock.exists():
        return
    with lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)


def _packer(held: int, keep: set[str]) -> None:
    """The background packer's work: one at a time (the next waits, then finds less to do)."""
    import resource

    os.nice(19)
    with (cache_root() / ".packer.lock").open("a") as one:
        fcntl.flock(one, fcntl.LOCK_EX)
        start = time.monotonic()
        count, freed = pack_unused(keep)
        used = resource.getrusage(resource.RUSAGE_SELF)
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}: {count} objects "
              f"packed or removed ({freed} bytes) in {time.monotonic() - start:.1f} s, CPU "
              f"{used.ru_utime + used.ru_stime:.1f} s", file=sys.stderr)
    os.close(held)


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
    # Under the store's lock: what to remove now and what to pack. Then, without it, the
    # compressing (each pack is written whole, then renamed into place: an unpack meanwhile
    # finds the object still there). Then, locked again, each object that still has no other
    # link goes, its pack now whole.
    stale = time.time() - 3600  # a .tmp this old is no one's file being written
    count = freed = 0
    to_pack = []
    with store.packing(shared=False):
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
                if obj.name in keep and not obj.name.endswith(".tmp"):
                    to_pack.append(obj)
                    continue
                obj.unlink()
                count += 1
                freed += st.st_size
        proot = store.packs_root()
        for packed in proot.glob("*/*") if proot.is_dir() else []:
            try:
                st = packed.lstat()
            except FileNotFoundError:
                continue
            if packed.name.endswith(".tmp") and st.st_mtime > stale and \
                    not store.abandoned(packed):
                continue
            if packed.name.endswith(".tmp") or packed.name.split(".")[0] not in keep:
                freed += st.st_size
                packed.unlink()
    for obj in to_pack:
        with contextlib.suppress(FileNotFoundError):  # gone: another packer took it
            pack(obj.name)
    with store.packing(shared=False):
        for obj in to_pack:
            try:
                st = obj.lstat()
            except FileNotFoundError:
                continue
            if st.st_nlink <= 1 and store.pack_path(obj.name).exists():
                obj.unlink()
                count += 1
                freed += st.st_size
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
    wait_for_packing()  # what a tk build left packing is done, and counted below as gone
    builds = store.all_builds()
    count, freed = pack_unused(keep={builds[0].id} if builds else None)
    return {"entries": entries, "temporaries": temporaries, "objects": count, "bytes": freed}


if __name__ == "__main__":  # pack_in_background's process: the lock it holds, the builds kept
    _packer(int(sys.argv[1]), set(sys.argv[2:]))
