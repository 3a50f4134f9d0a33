"""The artifact store: one entry per build, files stored once by content.

``$TK_CACHE`` (``~/.cache/tk`` by default) holds:

- ``objects/<sha256[:2]>/<sha256>``: every stored file once, read-only;
- ``builds/<key>/``: ``manifest.json`` (the ``BuildRecord``), ``build.log``, ``lib/`` with a
  hard link per library the build wrote (so identical libraries of two builds take the room
  of one) and, for trees with tvm-ffi, ``python/`` with the tree's tvm-ffi package;
- ``wheels/``: the tvm-ffi wheels built from trees, by a hash of the tvm-ffi sources.

A stored build survives its build directory being rebuilt for another commit.
``key = build_key(plan.hash, tree key)``: the same plan on a tree whose sources, CMake files
and submodules are the same is the same build. An object whose only link is its own name
belongs to no build: ``gc`` removes it.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from toolkit.build.record import Artifact, BuildRecord
from toolkit.build.source import python_dirs
from toolkit.errors import TkError, UserError
from toolkit.outputs import sha256_file

MANIFEST = "manifest.json"
LOCK = ".lock"  # held by the tk build that is building this entry
VERIFIED = ".verified"  # each library's (size, mtime, ctime) when its sha256 was last checked


def cache_root() -> Path:
    return Path(os.environ.get("TK_CACHE") or Path.home() / ".cache" / "tk")


def builds_root() -> Path:
    return cache_root() / "builds"


def objects_root() -> Path:
    return cache_root() / "objects"


def wheels_root() -> Path:
    return cache_root() / "wheels"


def build_key(plan_hash: str, tree_key: str) -> str:
    """The store key of a plan built from a tree (``toolkit.build.source.tree_key`` for a commit)."""
    return hashlib.sha256(f"{plan_hash}:{tree_key}".encode()).hexdigest()[:16]


def entry_dir(key: str) -> Path:
    return builds_root() / key


def load(key: str, verify: bool = False) -> BuildRecord | None:
    """The record of a complete stored build, or None (absent, unreadable, or its libraries
    are gone).

    ``verify`` (for a build about to be served) also compares each library's sha256 with the
    record's: a library damaged in place keeps its size, and would load and crash, or worse.
    """
    record = BuildRecord.load(entry_dir(key) / MANIFEST)
    if record is None:
        return None
    for art in record.artifacts:
        stored = Path(art.path)
        if art.link is None and (not stored.exists() or stored.stat().st_size != art.size):
            return None
    if verify and damaged(record):
        return None
    return record


def damaged(record: BuildRecord) -> str | None:
    """The first stored library whose content is not what was stored, or None.

    A library whose (size, mtime, ctime) are those it had when it was last verified is not
    read again: writing into a file changes its ctime, which no one can set back (a new hard
    link to it changes it too, and then it is verified once more)."""
    stamps_path = entry_dir(record.id) / VERIFIED
    try:
        stamps = json.loads(stamps_path.read_text())
    except (OSError, ValueError):
        stamps = {}
    fresh = {}
    for art in record.artifacts:
        if art.link is not None:
            continue
        st = os.stat(art.path)
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        if stamps.get(art.name) != stamp and sha256_file(Path(art.path)) != art.sha256:
            return art.path
        fresh[art.name] = stamp
    if fresh != stamps:
        try:
            tmp = stamps_path.with_name(f"{VERIFIED}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(fresh))
            tmp.replace(stamps_path)
        except OSError:
            pass  # a read-only store: verified again next time
    return None


def clear_entry(key: str) -> Path:
    """The entry directory, emptied of an earlier attempt (its lock file kept: it is held)."""
    entry = entry_dir(key)
    entry.mkdir(parents=True, exist_ok=True)
    (entry / MANIFEST).unlink(missing_ok=True)  # first: no longer a complete entry
    for path in entry.iterdir():
        if path.name == LOCK:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return entry


def being_built(entry: Path) -> bool:
    """Is a tk build holding this entry's lock right now?"""
    lock = entry / LOCK
    if not lock.exists():
        return False
    with lock.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


def save(record: BuildRecord) -> Path:
    return record.save(entry_dir(record.id) / MANIFEST)


def put_object(src: Path) -> tuple[str, Path]:
    """Store a file by content (once); its sha256 and the object's path."""
    sha = sha256_file(src)
    obj = objects_root() / sha[:2] / sha
    # An object damaged in place (root ignores its read-only mode) is replaced, not reused.
    if not obj.exists() or obj.stat().st_size != src.stat().st_size or sha256_file(obj) != sha:
        obj.parent.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_name(f"{sha}.{os.getpid()}.tmp")
        shutil.copyfile(src, tmp)
        tmp.chmod(0o555)  # read-only: every build linking it shares these bytes
        tmp.replace(obj)
    return sha, obj


def link_object(obj: Path, dst: Path) -> None:
    """``dst`` becomes a hard link to ``obj`` (a copy across file systems)."""
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(obj, tmp)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copyfile(obj, tmp)
    tmp.replace(dst)


def store_file(src: Path, dst: Path) -> tuple[str, int]:
    """Store ``src`` by content and link it at ``dst``: (sha256, size)."""
    sha, obj = put_object(src)
    link_object(obj, dst)
    return sha, obj.stat().st_size


def store_artifacts(key: str, files: list[Path]) -> list[Artifact]:
    """Link the built libraries into the entry's lib/ (symlinks stay symlinks)."""
    lib = entry_dir(key) / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    records = []
    for src in files:
        dst = lib / src.name
        if src.is_symlink():
            dst.unlink(missing_ok=True)
            target = os.readlink(src)
            dst.symlink_to(target)
            records.append(Artifact(name=src.name, path=str(dst), built=str(src), size=0,
                                    sha256=None, link=target))
            continue
        sha, size = store_file(src, dst)
        records.append(Artifact(name=src.name, path=str(dst), built=str(src), size=size,
                                sha256=sha))
    return records


def all_builds() -> list[BuildRecord]:
    """Every complete stored build, newest first."""
    root = builds_root()
    found = []
    if root.is_dir():
        for entry in root.iterdir():
            record = load(entry.name)
            if record is not None:
                found.append(record)
    return sorted(found, key=lambda r: r.created, reverse=True)


def find(build_id: str) -> BuildRecord:
    """A stored build by id or unique id prefix, its libraries verified; a user error when none
    or several match."""
    if not build_id or "/" in build_id:
        raise UserError(f"{build_id!r} is not a build id (see tk build ls)")
    found = load(build_id)
    if found is None:
        root = builds_root()
        matches = sorted(p.name for p in root.glob(f"{build_id}*")) if root.is_dir() else []
        complete = [r for r in (load(name) for name in matches) if r is not None]
        if not complete:
            raise UserError(f"no stored build {build_id!r} in {root} (see tk build ls)")
        if len(complete) > 1:
            ids = ", ".join(r.id for r in complete[:5])
            raise UserError(f"build id {build_id!r} is ambiguous: {ids}")
        found = complete[0]
    bad = damaged(found)
    if bad:
        raise TkError(f"stored build {found.id} is damaged: {bad} is not the library that was "
                      f"stored (sha256 differs); rebuild it with tk build --force -C "
                      f"{found.source.dir}")
    return found


@dataclass
class Usage:
    files: int
    bytes: int  # what the build's files add up to
    unique: int  # what removing it would free: files no other build links


def usage(directory: Path) -> Usage:
    """Bytes under a store entry, counting each stored object once (by inode)."""
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
    return Usage(files, total, unique)


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
    """Delete a stored build and the objects only it used; bytes freed."""
    freed = usage(entry_dir(record.id)).unique
    shutil.rmtree(entry_dir(record.id))
    gc_objects()
    return freed


def gc_objects() -> tuple[int, int]:
    """Remove objects no build links any more: (count, bytes)."""
    count = freed = 0
    root = objects_root()
    if not root.is_dir():
        return 0, 0
    for obj in root.glob("*/*"):
        st = obj.lstat()
        if obj.name.endswith(".tmp") or st.st_nlink <= 1:
            obj.unlink()
            count += 1
            freed += st.st_size
    return count, freed


def gc() -> dict[str, int]:
    """Remove incomplete or unreadable entries (an interrupted build, an older tk's record),
    then objects nothing links. The tvm-ffi wheels stay: they are what spares the next build
    of the same tvm-ffi sources its Python package build."""
    entries = 0
    root = builds_root()
    for entry in (root.iterdir() if root.is_dir() else []):
        if entry.is_dir() and load(entry.name) is None and not being_built(entry):
            shutil.rmtree(entry)
            entries += 1
    count, freed = gc_objects()
    return {"entries": entries, "objects": count, "bytes": freed}


def env_of(record: BuildRecord, source_dir: Path | str | None = None) -> dict[str, str]:
    """The variables that put a stored build in use: its libraries, its tree's Python package
    and the tvm-ffi package built from that tree.

    ``source_dir`` replaces the tree recorded (a checkout of a later commit whose changes are
    Python-only can use this build's libraries with its own Python code).
    """
    lib = str(entry_dir(record.id) / "lib")
    root = Path(source_dir) if source_dir else Path(record.source.dir)
    python = [str(d) for d in python_dirs(root)]
    if record.python is not None:
        python = [d for d in python if not d.endswith(os.path.join("tvm-ffi", "python"))]
        python.append(record.python.site)
    env = {"TVM_LIBRARY_PATH": lib, "LD_LIBRARY_PATH": lib}
    if python:
        env["PYTHONPATH"] = os.pathsep.join(python)
    return env


def in_use(env: dict[str, str] | None = None) -> BuildRecord | None:
    """The stored build an environment puts in use (``tk env`` sets TVM_LIBRARY_PATH to its
    lib/), or None."""
    env = os.environ if env is None else env
    for entry in filter(None, env.get("TVM_LIBRARY_PATH", "").split(os.pathsep)):
        lib = Path(entry)
        if lib.name == "lib" and (lib.parent / MANIFEST).exists():
            return BuildRecord.load(lib.parent / MANIFEST)
    return None


def asked_of(record: BuildRecord) -> dict[str, object]:
    """What tk doctor should expect of a stored build."""
    python = [d for d in record.env.get("PYTHONPATH", "").split(os.pathsep) if d]
    targets = set(record.plan.get("targets", []))
    return {"build": record.id, "runtimes": record.runtimes, "lib_dir": str(record.lib_dir),
            "python": python, "runtime_only": bool({"runtime", "tvm_runtime"} & targets)}


def shell_exports(env: dict[str, str]) -> str:
    """``export`` lines that prepend to path-like variables already set in the shell."""
    lines = []
    for name, value in env.items():
        if name in ("PYTHONPATH", "LD_LIBRARY_PATH"):
            lines.append(f"export {name}={shlex.quote(value)}${{{name}:+:${name}}}")
        else:
            lines.append(f"export {name}={shlex.quote(value)}")
    return "\n".join(lines)
