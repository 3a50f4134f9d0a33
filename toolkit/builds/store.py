"""The artifact store: one entry per build, files stored once by content.

``$TK_CACHE`` (``~/.cache/tk`` by default) holds:

- ``objects/<sha256[:2]>/<sha256>``: every stored file once, read-only;
- ``builds/<key>/``: ``manifest.json`` (the ``BuildRecord``), ``build.log``, ``lib/`` with a
  hard link per library the build wrote (so identical libraries of two builds take the room
  of one) and, for trees with tvm-ffi, ``python/`` with the tree's tvm-ffi package;
- ``wheels/``: the tvm-ffi wheels built from trees, by a hash of the tvm-ffi sources;
- ``packs/<sha256[:2]>/<sha256>.xz``: a library no materialised build links any more, kept
  compressed (LZMA) until a build that has it is used again.

Libraries take most of the room, and two builds one source file apart share little of their
bytes (the linker shifts addresses and string offsets all through the debug sections:
content-defined chunking of two such libtvm_runtime.so found 12-23% in common). So a build's
libraries are full files (hard links to ``objects/``) only while the build is *materialised*:
the build just made or served, one ``tk env`` handed to a shell in the last day, one a live
process has mapped, one the current environment's ``TVM_LIBRARY_PATH`` names, one held by
``using``. Storing a new build packs the others (``gc.pack_unused``, in a process of its
own): their library links are removed (``.packed`` in the entry says which, by sha256) and an
object that loses its last link is compressed into ``packs/``. Using a packed build (a store
hit, ``tk env``, ``tk ext build --build``) unpacks and links it again (``materialise``).

Storing costs what changed, not what was built (``store_artifacts``): a library Ninja did not
relink is known by its stamp and linked; a relinked one becomes its object as it is, the
build directory's file and the store's being one file (a hard link, when both are on one file
system), hashed once in a thread while the build is checked. Linkers replace their output,
never write into it, so a rebuild leaves the stored file as it was; a tool that writes into a
built library in place (``patchelf``, ``strip`` as root) writes into the store's object too.
That is not missed: its stamps change, so the next use of a build that has it reads it
again, finds the sha256 differs and builds it again.

A stored build survives its build directory being rebuilt for another commit.
``key = build_key(plan.hash, tree key)``: the same plan on a tree whose sources, CMake files
and submodules are the same is the same build. An object whose only link is its own name
is in no materialised build: ``gc.gc_objects`` packs it when a stored build still has it, else
removes it (and its pack).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from toolkit.builds.record import Artifact, BuildRecord
from toolkit.builds.source import python_dirs
from toolkit.errors import TkError, UserError
from toolkit.outputs import ENVIRONMENT, sha256_file
from toolkit.paths import cache_root

MANIFEST = "manifest.json"
LOCK = ".lock"  # held by the tk build that is building this entry
VERIFIED = ".verified"  # each library's (size, mtime, ctime) when its sha256 was last checked
PACKED = ".packed"  # the links packing removed: path in the entry -> sha256 of the object
ENV_STAMP = ".env"  # touched by tk env: a shell may use this build's lib/ (kept materialised)
ENV_DAYS = 1.0  # how long a build handed to a shell by tk env stays materialised
# built library path -> its (size, mtime, inode), sha256 and its object's mtime: a
# library rebuilt to the same file is not hashed again
BUILT = "built.json"


def temporary(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place: one name per process and
    thread (a bisection's build slots store from threads of one process, the same object at
    times)."""
    return path.with_name(f"{path.name}.{os.getpid()}.{threading.get_native_id()}.tmp")


TEMPORARY = re.compile(r"\.(\d+)\.\d+\.tmp$")  # temporary()'s names: the writer's pid


def is_temporary(name: str) -> bool:
    return TEMPORARY.search(name) is not None


def abandoned(path: Path) -> bool:
    """Is ``path`` a temporary file whose writer is gone (killed mid-write, or a tk that left
    it)? Nobody renames it into place any more."""
    m = TEMPORARY.search(path.name)
    if m is None:
        return False
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's live process
    return False


# Linking objects into entries and removing objects no entry links are one step each for
# the threads of one process (a bisection's build slots store, unpack and pack at once):
# else a new object, not yet linked, looks unused to another thread's packing.
_LINKS = threading.RLock()
T = TypeVar("T")


def serialised(fn: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(fn)
    def holding(*args: Any, **kwargs: Any) -> T:
        with _LINKS:
            return fn(*args, **kwargs)

    return holding


def builds_root() -> Path:
    return cache_root() / "builds"


def objects_root() -> Path:
    return cache_root() / "objects"


def wheels_root() -> Path:
    return cache_root() / "wheels"


def packs_root() -> Path:
    return cache_root() / "packs"


def object_path(sha: str) -> Path:
    return objects_root() / sha[:2] / sha


def pack_path(sha: str) -> Path:
    return packs_root() / sha[:2] / f"{sha}.xz"


def build_key(plan_hash: str, tree_key: str) -> str:
    """The store key of a plan built from a tree (``toolkit.builds.source.tree_key`` for a commit)."""
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
    packed = packed_links(record.id)
    for art in record.artifacts:
        stored = Path(art.path)
        if art.link is not None:
            continue
        if art.sha256 in packed.values():
            if not object_path(art.sha256).exists() and not pack_path(art.sha256).exists():
                return None
        elif not stored.exists() or stored.stat().st_size != art.size:
            return None
    if verify:
        try:
            if packed:
                materialise(record)
        except TkError:
            return None  # a damaged pack (now removed): the build is built again
        if damaged(record):
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
        try:
            st = os.stat(art.path)
        except FileNotFoundError:
            continue  # packed: checked against its sha256 when it is unpacked
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        if stamps.get(art.name) != stamp and sha256_file(Path(art.path)) != art.sha256:
            return art.path
        fresh[art.name] = stamp
    if fresh != stamps:
        try:
            tmp = temporary(stamps_path)
            tmp.write_text(json.dumps(fresh))
            tmp.replace(stamps_path)
        except OSError:
            pass  # a read-only store: verified again next time
    return None


def clear_entry(key: str) -> Path:
    """The entry directory, emptied of an earlier attempt (its lock file kept: it is held;
    the tvm-ffi package kept: ``python.install`` replaces it only when its wheel differs)."""
    entry = entry_dir(key)
    entry.mkdir(parents=True, exist_ok=True)
    (entry / MANIFEST).unlink(missing_ok=True)  # first: no longer a complete entry
    for path in entry.iterdir():
        if path.name in (LOCK, "python"):
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


@contextlib.contextmanager
def using(key: str) -> Iterator[None]:
    """Keep build ``key`` materialised while this process uses its ``lib/`` (a bisection's
    check while another build slot stores): packing passes over an entry whose lock is held,
    as over one being built. A shared hold: any number of users, and no build of ``key``."""
    entry = entry_dir(key)
    entry.mkdir(parents=True, exist_ok=True)
    with (entry / LOCK).open("a") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def packing(shared: bool) -> Iterator[None]:
    """Packing and collecting (exclusive) against unpacking (shared), across processes and a
    bisection's build-slot threads alike (each call opens the lock file anew)."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    try:
        f = (root / ".pack.lock").open("a")
    except OSError as e:
        if e.errno != errno.EROFS:
            raise
        yield  # a read-only store: no one packs or collects there, nothing to lock against
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save(record: BuildRecord) -> Path:
    return record.save(entry_dir(record.id) / MANIFEST)


def put_object(src: Path, sha: str | None = None) -> tuple[str, Path]:
    """Store a file by content (once); its sha256 (``sha`` when the caller knows it) and the
    object's path."""
    sha = sha or sha256_file(src)
    obj = object_path(sha)
    # An object damaged in place (root ignores its read-only mode) is replaced, not reused.
    if not obj.exists() or obj.stat().st_size != src.stat().st_size or sha256_file(obj) != sha:
        obj.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary(obj)
        try:
            shutil.copyfile(src, tmp)
            tmp.chmod(0o555)  # read-only: every build linking it shares these bytes
            tmp.replace(obj)
        except BaseException:
            tmp.unlink(missing_ok=True)  # a full store keeps no half object
            raise
    return sha, obj


def link_object(obj: Path, dst: Path) -> None:
    """``dst`` becomes a hard link to ``obj`` (a copy across file systems).

    The link is made under its own name at once (a link is whole from the start), and a
    ``dst`` that is ``obj`` already is left as it is: two processes materialising one build
    (two ``tk env ID``) find each other's links. Only another file in its place is replaced
    through a temporary; rename(2) of a link onto another link of the same file does nothing
    and leaves the temporary, so it is removed after (no stray file in the directory
    LD_LIBRARY_PATH names)."""
    try:
        os.link(obj, dst)
        return
    except FileExistsError:
        if is_link_of(dst, obj):
            return
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
    tmp = temporary(dst)
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(obj, tmp)
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                raise
            shutil.copyfile(obj, tmp)
        tmp.replace(dst)
    finally:
        tmp.unlink(missing_ok=True)  # a full store keeps no half copy either


def is_link_of(path: Path, obj: Path) -> bool:
    """Is ``path`` a hard link to ``obj`` (not a symlink, not a copy)?"""
    try:
        st, ob = os.lstat(path), os.stat(obj)
    except OSError:
        return False
    return not stat.S_ISLNK(st.st_mode) and (st.st_dev, st.st_ino) == (ob.st_dev, ob.st_ino)


def store_file(src: Path, dst: Path) -> tuple[str, int]:
    """Store ``src`` by content and link it at ``dst``: (sha256, size)."""
    with packing(shared=True):  # an object with no link yet is not collected meanwhile
        sha, obj = put_object(src)
        link_object(obj, dst)
        return sha, obj.stat().st_size


def _stamp(st: os.stat_result) -> list[int]:
    # Not the ctime: a library the store links is its object (one inode), and every link made
    # to it or taken from it (a build storing it, packing, tk env) changes its ctime.
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class Storing:
    """The libraries of a build being stored: all in the entry's ``lib/`` already (a check can
    load them), the relinked ones still being hashed in a thread; ``wait`` before the record
    names their sha256."""

    def __init__(self, key: str, artifacts: list[Artifact],
                 pending: list[tuple[Artifact, list[int]]], built: dict[str, list]) -> None:
        self.key = key
        self.artifacts = artifacts
        self._built = built
        self._error: BaseException | None = None
        self.seconds = 0.0  # how long the hashing took (overlapped with the caller's work)
        self._swapped: dict[tuple[int, int], Path] = {}  # a copy of bytes stored -> object
        self._unverified: set[str] = set()
        self.relinked = [art.name for art, _ in pending]  # what the build wrote anew
        self._thread = threading.Thread(target=self._hash, args=(pending,), daemon=True,
                                        name=f"tk-store-{key}")
        self._thread.start()

    def _hash(self, pending: list[tuple[Artifact, list[int]]]) -> None:
        start = time.monotonic()
        try:
            for art, stamp in pending:
                sha = sha256_file(art.path)  # the only time the store reads these bytes
                with _LINKS, packing(shared=True):
                    st = os.stat(art.path)
                    if not _adopt(Path(art.path), sha):
                        # Bytes the store had: linked to them, unread here (verified when
                        # the build is first served), and so are the entry's other links
                        # to this build's own copy (its Python package's libtvm_ffi.so).
                        self._swapped[(st.st_dev, st.st_ino)] = object_path(sha)
                        self._unverified.add(art.name)
                    obj = object_path(sha)
                    art.sha256 = sha
                    # The built file as it was linked (the build directory is another
                    # build's to write into now).
                    self._built[art.built] = [*stamp, sha, obj.stat().st_mtime_ns]
        except BaseException as e:  # noqa: BLE001 - raised again by wait(), in the builder
            self._error = e
        self.seconds = time.monotonic() - start

    def wait(self) -> list[Artifact]:
        """Every library's sha256 known and its object in place; then the stamps that let the
        next store hit and the next rebuild trust these files without reading them."""
        self._thread.join()
        if self._error is not None:
            raise store_error(self._error, self.key)
        with _LINKS:
            # What this build learnt, over what other builds wrote since (a bisection's build
            # slots store from threads of one process; other tk processes too).
            _write_json(cache_root() / BUILT, {**_read_json(cache_root() / BUILT), **self._built})
            if self._swapped:
                with packing(shared=True):
                    _relink(entry_dir(self.key), self._swapped)
        stamp_verified(self.key, [a for a in self.artifacts if a.name not in self._unverified])
        return self.artifacts


def _relink(entry: Path, swapped: dict[tuple[int, int], Path]) -> None:
    """Every file of ``entry`` that is one of ``swapped``'s files becomes a link to its
    object."""
    for dirpath, _dirs, names in os.walk(entry):
        for name in names:
            path = Path(dirpath) / name
            st = path.lstat()
            obj = swapped.get((st.st_dev, st.st_ino))
            if obj is not None and not is_temporary(name) and not path.is_symlink():
                link_object(obj, path)


def store_error(e: BaseException, name: str) -> BaseException:
    """What to raise for ``e``, met while storing ``name``: a full or read-only store is the
    user's to mend (``UserError``); any other error is raised as it is."""
    if isinstance(e, OSError) and e.errno in ENVIRONMENT:
        # Incomplete entries are what tk build gc removes: nothing half-stored stays.
        return UserError(f"the build store {cache_root()} cannot take {name}: {e.strerror} "
                         "(free room there, or set TK_CACHE)")
    return e


@serialised
def store_artifacts(key: str, files: list[Path]) -> Storing:
    """Put the built libraries in the entry's lib/ (symlinks stay symlinks); hash the ones the
    build relinked in a thread (``Storing.wait``), while the caller checks the build.

    A library whose (size, mtime, inode) are those it had when it was last stored (Ninja did
    not relink it) is not read: its sha256 is taken from ``built.json`` and its object linked.
    A relinked one is linked into lib/ as the very file the build wrote (linkers replace their
    output, never write into it), then read once for its sha256 and made that object: storing
    does nothing in proportion to the size of a library, but hash the ones that changed."""
    lib = entry_dir(key) / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    known, learnt = _read_json(cache_root() / BUILT), {}
    records, pending = [], []
    with packing(shared=True):  # an object with no link yet is not collected meanwhile
        for src in files:
            try:
                stamp = None if src.is_symlink() else _stamp(src.stat())
                art = _store_artifact(src, lib / src.name, known.get(str(src)), learnt)
            except OSError as e:
                raise store_error(e, src.name) from None
            records.append(art)
            if art.sha256 is None and art.link is None:
                pending.append((art, stamp))
    return Storing(key, records, pending, learnt)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store_artifact(src: Path, dst: Path, known: list | None,
                    learnt: dict[str, list]) -> Artifact:
    if src.is_symlink():
        dst.unlink(missing_ok=True)
        target = os.readlink(src)
        dst.symlink_to(target)
        return Artifact(name=src.name, path=str(dst), built=str(src), size=0, sha256=None,
                        link=target)
    st = src.stat()
    stamp = _stamp(st)
    sha = known[3] if known and len(known) == 5 and known[:3] == stamp else None
    obj = object_path(sha) if sha else None
    # The object as it was stored: the built file itself, or a copy nothing wrote into since.
    if obj is not None and obj.exists() and (
            os.path.samefile(obj, src)
            or [obj.stat().st_size, obj.stat().st_mtime_ns] == [stamp[0], known[4]]):
        link_object(obj, dst)
        return Artifact(name=src.name, path=str(dst), built=str(src), size=stamp[0], sha256=sha)
    if sha is not None:  # known bytes whose object is gone (collected): stored again
        sha, obj = put_object(src, sha)
        link_object(obj, dst)
        learnt[str(src)] = [*stamp, sha, obj.stat().st_mtime_ns]
        return Artifact(name=src.name, path=str(dst), built=str(src), size=stamp[0], sha256=sha)
    _link_built(src, st, dst)
    return Artifact(name=src.name, path=str(dst), built=str(src), size=stamp[0], sha256=None)


def _link_built(src: Path, st: os.stat_result, dst: Path) -> None:
    """``dst`` becomes the file the build wrote: a hard link when the store may own it (the
    build's file is this user's: under sudo, a tree's build directory is handed to its owner,
    whose files must not become the store's), else a copy of it."""
    if st.st_uid == os.geteuid():
        link_object(src, dst)  # a copy across file systems
        return
    tmp = temporary(dst)
    try:
        shutil.copyfile(src, tmp)
        tmp.replace(dst)
    finally:
        tmp.unlink(missing_ok=True)  # a full store keeps no half copy


def _adopt(path: Path, sha: str) -> bool:
    """Make the library at ``path``, just hashed to ``sha``, the store's object of ``sha``
    (True). When the store has that object already (the same bytes, from another build),
    ``path`` becomes a link to it instead (False): one file for both, as for any library."""
    obj = object_path(sha)
    obj.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(path, obj)
    except FileExistsError:
        if os.path.samefile(path, obj):
            return True
        link_object(obj, path)
        return False
    obj.chmod(0o555)  # read-only: every build linking it shares these bytes
    return True


def release_built(record: BuildRecord) -> None:
    """Let a damaged build be built again: each of its libraries whose bytes are not what was
    stored leaves the store's objects and the build directory, when it is the file there (a
    hard link). Else Ninja finds it up to date, and the store the object it already has: the
    damaged bytes would be stored again rather than relinked."""
    for art in record.artifacts:
        if art.link is not None or art.sha256 is None:
            continue
        try:
            if sha256_file(art.path) == art.sha256:
                continue
        except OSError:
            continue  # packed: checked against its sha256 when it is unpacked
        for path in (object_path(art.sha256), Path(art.built)):
            with contextlib.suppress(OSError):  # gone, or another file by now
                if os.path.samefile(path, art.path):
                    path.unlink()


def stamp_verified(key: str, artifacts: list[Artifact]) -> None:
    """Record that these libraries' bytes were just hashed (stored or unpacked): the next
    store hit need not read them again."""
    path = entry_dir(key) / VERIFIED
    try:
        stamps = json.loads(path.read_text())
    except (OSError, ValueError):
        stamps = {}
    for art in artifacts:
        if art.link is None:
            st = os.stat(art.path)
            stamps[art.name] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    _write_json(path, stamps)


def _write_json(path: Path, data: object) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary(path)
        tmp.write_text(json.dumps(data))
        tmp.replace(path)
    except OSError:
        pass  # a cache: without it the files are read again


def handed_out(key: str) -> None:
    """A shell or an extension is about to use this build's lib/: keep it unpacked a day. On
    a read-only store nothing packs it either: the stamp is not needed there."""
    with contextlib.suppress(OSError):
        (entry_dir(key) / ENV_STAMP).touch()


def packed_links(key: str) -> dict[str, str]:
    """The links packing removed from an entry (path relative to it -> sha256)."""
    try:
        data = json.loads((entry_dir(key) / PACKED).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


@serialised
def materialise(record: BuildRecord) -> None:
    """Put a packed build's libraries back in place (unpacked from ``packs/`` when no other
    build still links them), each checked against its sha256 while it is written."""
    entry = entry_dir(record.id)
    with packing(shared=True):
        links = packed_links(record.id)
        if not links:
            return  # in place already (and so on a read-only store, where nothing packs)
        unpacked = set()
        for rel, sha in links.items():
            obj = object_path(sha)
            if not obj.exists():
                unpack(sha)
                unpacked.add(sha)
            link_object(obj, entry / rel)
        (entry / PACKED).unlink(missing_ok=True)
        stamp_verified(record.id, [a for a in record.artifacts if a.sha256 in unpacked])


def unpack(sha: str) -> Path:
    import lzma

    obj = object_path(sha)
    obj.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary(obj)
    digest = hashlib.sha256()
    try:
        with lzma.open(pack_path(sha)) as src, tmp.open("wb") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                dst.write(chunk)
    except (lzma.LZMAError, EOFError):
        pass  # not a whole LZMA stream: its digest is not sha's either
    if digest.hexdigest() != sha:
        tmp.unlink()
        pack_path(sha).unlink()  # else kept: packing the rebuilt library would reuse it
        raise TkError(f"the stored pack of {sha[:12]} was damaged (sha256 differs; removed): "
                      "build it again")
    tmp.chmod(0o555)
    tmp.replace(obj)
    return obj


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


def find(build_id: str, use: bool = False) -> BuildRecord:
    """A stored build by id or unique id prefix, its libraries verified; a user error when none
    or several match. ``use`` (``tk env``: a shell is about to load it) materialises it and
    keeps it so for a day."""
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
    if use:
        materialise(found)
        handed_out(found.id)
    bad = damaged(found)
    if bad:
        raise TkError(f"stored build {found.id} is damaged: {bad} is not the library that was "
                      f"stored (sha256 differs); rebuild it with tk build --force -C "
                      f"{found.source.dir}")
    return found


class CheckFailed(TkError):
    """The build finished but does not work as asked in its own environment."""


def check_failure(record: BuildRecord) -> str | None:
    """What the build's post-build check found wrong, as one line, or None (it passed, or
    never ran: ``unchecked``)."""
    chk = record.check
    if chk is None or chk.ok:
        return None
    return (f"build {record.id} failed its post-build check: {'; '.join(chk.problems)} "
            f"(record: {entry_dir(record.id) / MANIFEST})")


def unchecked(record: BuildRecord) -> str | None:
    if record.check is not None:
        return None
    return (f"build {record.id} was never checked (built with --no-check, or by a bisection): "
            "nothing says it works")


def hand_out(build_id: str, ignore_check: bool = False) -> tuple[BuildRecord, str | None]:
    """A stored build for a shell to use (``tk env``): materialised, and kept so a day. One
    whose post-build check failed is refused (``CheckFailed``) unless ``ignore_check``: the
    record and what the user must be told (a failed check ignored, a build never checked)."""
    record = find(build_id)
    failed = check_failure(record)
    if failed and not ignore_check:
        raise CheckFailed(f"{failed}; to use it all the same: tk env {record.id} --ignore-check")
    find(record.id, use=True)
    return record, failed or unchecked(record)


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
