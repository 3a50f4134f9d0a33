"""The GPU check's payload: what ``prepare`` packs here and ``run`` installs on a lent GPU
machine, which reaches no registry, and the record of what is in it.

Stdlib only: ``run`` imports this before anything is installed.

The payload folder (``.gpu-payload/`` in the repository root, git-ignored) holds:

* ``bundle.tar.xz`` - one tar: ``wheels/*.whl`` (everything to install with
  ``pip install --no-index --no-deps --target``) and ``tree/<name>/`` (a real TVM source tree
  for ``tk build``); or, when it cannot travel in one call, its bytes cut into
  ``bundle.tar.xz.1`` ... ``.N``, each carried by a call of its own (the device tool keeps a
  warm machine's ignored files between calls) and joined again by ``check``;
* ``manifest.json`` - a ``Manifest``, written last: a folder without one is unfinished.

Why one tar, and wheels stored without compression inside it: the tree's ``python/`` and
the apache-tvm wheel's Python files are nearly the same text, and so are the tree's
``3rdparty/tvm-ffi`` and the apache-tvm-ffi wheel; one xz stream over their raw bytes
stores the second copy almost for free. That is what lets the whole tree travel within the
device tool's 64 MiB.

Most of the payload is one file, apache-tvm's ``libtvm_compiler.so`` (260 MB, LLVM
inside). Its bytes, exactly, are compressed as an xz stream of their own (x86 branch filter,
LZMA2 at its strongest, a window larger than the file), cached by their sha256: concatenated
xz streams decompress as one, and the ten minutes that stream costs on two cores are then
spent once per apache-tvm version, not once per change to tk.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import os
import resource
import shutil
import site
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

BUNDLE = "bundle.tar.xz"
MANIFEST = "manifest.json"
# The device tool's limit on what one call carries, the working tree and the payload: "64
# MiB", but it refused 63.96 MiB counted in bytes (67.05 MB; 66.3 MiB counted in 4 KiB
# blocks) on 2026-11-27. Taken as the stricter of its readings: 64 MB, files counted in blocks.
LIMIT_BYTES = 64_000_000
BLOCK = 4096
MANIFEST_ROOM = 16 << 10  # counted for manifest.json (about 2.5 KiB), written after the fit
COMPILER = "tvm/lib/libtvm_compiler.so"
# x86 branch filter + LZMA2 preset 9e with a 256 MiB window: on apache-tvm 0.27's wheel,
# 57.8 MB against 61.9 MB for xz -6 (xz 5.4.1; docs/gpu-check.md says how it was measured).
FILTERS = [{"id": lzma.FILTER_X86},
           {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 256 << 20}]
FILTERS_ID = "x86+lzma2-9e-256m"


@dataclass
class Wheel:
    file: str  # the name under wheels/
    name: str
    version: str
    bytes: int  # the wheel as installed (stored, uncompressed members)
    dropped: list[str] = field(default_factory=list)  # top folders left out, and why


@dataclass
class Tree:
    name: str  # the folder under tree/
    source: str  # where it came from
    content: str  # "whole", or "runtime" (the sources a --runtime-only build needs)
    files: int
    bytes: int


@dataclass
class Manifest:
    created: str
    python: str  # the interpreter the wheels are for, e.g. "cp312"
    platform: str
    wheels: list[Wheel]
    tree: Tree | None
    bundle_bytes: int
    bundle_sha256: str
    repo_bytes: int  # what else travels: the repository's files, in blocks
    limit_bytes: int = LIMIT_BYTES
    parts: list[int] = field(default_factory=list)  # the sizes of bundle.tar.xz.1..N, if cut

    @property
    def call_bytes(self) -> int:
        """What the largest call carries: a part (or the bundle), the manifest, the repository."""
        return max(self.parts or [self.bundle_bytes]) + MANIFEST_ROOM + self.repo_bytes

    def save(self, folder: Path) -> Path:
        path = folder / MANIFEST
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, folder: Path) -> Manifest:
        doc = json.loads((folder / MANIFEST).read_text())
        doc["wheels"] = [Wheel(**w) for w in doc["wheels"]]
        doc["tree"] = Tree(**doc["tree"]) if doc.get("tree") else None
        return cls(**doc)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cpu_seconds() -> float:
    """User + system time of this process and the children it has waited for: the CPU time
    both scripts report beside wall time."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# -- prepare's side -------------------------------------------------------------------------

def repack(src: Path, folder: Path, drop: dict[str, str], last: str | None = None) -> Wheel:
    """``src`` rewritten into ``folder`` with every member stored, those under a ``drop``
    prefix (the value says why) left out, RECORD too, and ``last`` written last.

    RECORD keeps each path without its hash and size: 4,000 sha256 digests do not compress
    (0.1 MiB of the 64), pip installs without checking them, and the bundle's own sha256 is
    checked against the manifest before anything is unpacked."""
    dst = folder / src.name
    with zipfile.ZipFile(src) as zin:
        infos = [i for i in zin.infolist() if not any(i.filename.startswith(p) for p in drop)]
        gone = {i.filename for i in zin.infolist()} - {i.filename for i in infos}
        infos.sort(key=lambda i: i.filename == last)
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
            for info in infos:
                data = zin.read(info)
                if info.filename.endswith(".dist-info/RECORD"):
                    paths = (line.split(b",", 1)[0] for line in data.splitlines())
                    data = b"".join(p + b",,\n" for p in paths if p and p.decode() not in gone)
                out = zipfile.ZipInfo(info.filename, info.date_time)
                out.external_attr = info.external_attr
                zout.writestr(out, data, zipfile.ZIP_STORED)
    name, version = dst.name.split("-")[:2]
    return Wheel(dst.name, name, version, dst.stat().st_size,
                 [f"{p} ({why})" for p, why in drop.items()])


def member_data_span(wheel: Path, member: str) -> tuple[int, int]:
    """Where ``member``'s bytes lie in the stored wheel: (offset, length)."""
    with zipfile.ZipFile(wheel) as zf:
        info = zf.getinfo(member)
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"{member} is compressed in {wheel.name}")
    with wheel.open("rb") as f:
        f.seek(info.header_offset)
        header = f.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len, info.compress_size


def write_tar(out: Path, wheels: list[Path], tree: Path | None, tree_files: list[Path],
              big: str | None) -> tuple[int, int] | None:
    """The bundle's tar, uncompressed: the tree first, the wheels after it (the largest one
    last). Returns the span of ``big`` (a member of the last wheel) in the tar, if given."""
    span = None
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tf:
        if tree is not None:
            for path in tree_files:
                tf.add(path, f"tree/{tree.name}/{path.relative_to(tree).as_posix()}",
                       recursive=False, filter=_plain)
        for wheel in wheels:
            info = _plain(tf.gettarinfo(wheel, f"wheels/{wheel.name}"))
            data_at = tf.offset + len(info.tobuf(tf.format, tf.encoding, tf.errors))
            with wheel.open("rb") as f:
                tf.addfile(info, f)
            if big is not None and wheel == wheels[-1]:
                offset, length = member_data_span(wheel, big)
                span = (data_at + offset, length)
    return span


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def compress_range(src: Path, start: int, length: int, out: io.BufferedWriter,
                   progress: Callable[[str], None]) -> None:
    comp = lzma.LZMACompressor(format=lzma.FORMAT_XZ, filters=FILTERS)
    done, last = 0, time.monotonic()
    with src.open("rb") as f:
        f.seek(start)
        while done < length:
            block = f.read(min(8 << 20, length - done))
            if not block:
                raise ValueError(f"{src} ends before byte {start + length}")
            out.write(comp.compress(block))
            done += len(block)
            if time.monotonic() - last > 30:
                progress(f"  {done >> 20} of {length >> 20} MiB")
                last = time.monotonic()
    out.write(comp.flush())


def compress_tar(tar: Path, bundle: Path, span: tuple[int, int] | None, cache: Path,
                 progress: Callable[[str], None]) -> None:
    """``tar`` as ``bundle``: concatenated xz streams, the ``span`` bytes as one stream of
    their own taken from (or put into) ``cache``."""
    size = tar.stat().st_size
    start, length = span if span else (size, 0)
    with bundle.open("wb") as out:
        compress_range(tar, 0, start, out, progress)
        if length:
            h = hashlib.sha256()
            with tar.open("rb") as f:
                f.seek(start)
                left = length
                while left:
                    block = f.read(min(8 << 20, left))
                    h.update(block)
                    left -= len(block)
            cached = cache / f"{h.hexdigest()}.{FILTERS_ID}.xz"
            if not cached.is_file():
                progress(f"compressing {length >> 20} MiB of {COMPILER} once "
                         f"(about 10 minutes on 2 cores; cached as {cached})")
                cache.mkdir(parents=True, exist_ok=True)
                part = cached.with_suffix(".part")
                with part.open("wb") as f:
                    compress_range(tar, start, length, f, progress)
                part.replace(cached)
            with cached.open("rb") as f:
                while block := f.read(8 << 20):
                    out.write(block)
        compress_range(tar, start + length, size - start - length, out, progress)


def calls_needed(bundle_bytes: int, repo_bytes: int) -> int:
    """How many device calls carry a bundle of this size, one part each, beside the
    repository and the manifest (which the last call carries)."""
    room = LIMIT_BYTES - MANIFEST_ROOM - repo_bytes
    return -(-bundle_bytes // room)


def cut(bundle: Path, parts: int) -> list[int]:
    """``bundle`` cut into ``parts`` files of nearly equal size beside it (``bundle.tar.xz.1``
    ...), removed itself; the parts' sizes."""
    size = bundle.stat().st_size
    sizes = [size // parts + (i < size % parts) for i in range(parts)]
    with bundle.open("rb") as f:
        for i, n in enumerate(sizes, 1):
            with part_path(bundle.parent, i).open("wb") as out:
                left = n
                while left:
                    block = f.read(min(8 << 20, left))
                    out.write(block)
                    left -= len(block)
    bundle.unlink()
    return sizes


def part_path(folder: Path, i: int) -> Path:
    return folder / f"{BUNDLE}.{i}"


# -- run's side -----------------------------------------------------------------------------

def check(folder: Path) -> Manifest:
    """The payload's manifest, once its bundle is the one the manifest names."""
    if not (folder / MANIFEST).is_file():
        raise FileNotFoundError(f"{folder / MANIFEST} is missing: run benchmarks/gpu/prepare")
    manifest = Manifest.load(folder)
    bundle = folder / BUNDLE
    if manifest.parts and not bundle.is_file():
        _join(folder, manifest.parts)
    if not bundle.is_file() or bundle.stat().st_size != manifest.bundle_bytes:
        raise ValueError(f"{bundle} is not the bundle {MANIFEST} describes: run prepare again")
    if sha256_file(bundle) != manifest.bundle_sha256:
        raise ValueError(f"{bundle}'s sha256 differs from {MANIFEST}'s: run prepare again")
    return manifest


def _join(folder: Path, sizes: list[int]) -> None:
    parts = [part_path(folder, i) for i in range(1, len(sizes) + 1)]
    for part, n in zip(parts, sizes):
        if not part.is_file() or part.stat().st_size != n:
            state = "not the part the manifest describes" if part.is_file() else "missing"
            raise FileNotFoundError(
                f"{part} is {state}: carry it in a call just before this one, while the machine "
                "is still warm (its ignored files stay only until it is given back)")
    joined = folder / f"{BUNDLE}.joined"
    with joined.open("wb") as out:
        for part in parts:
            with part.open("rb") as f:
                shutil.copyfileobj(f, out, 8 << 20)
    joined.replace(folder / BUNDLE)


def unpack(folder: Path, into: Path) -> None:
    """The bundle's wheels/ and tree/ into ``into`` (every xz stream, every CRC checked)."""
    with tarfile.open(folder / BUNDLE, "r:xz") as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(into, filter="data")
        else:  # Python < 3.12 without the backport: the members are our own
            tf.extractall(into)


def make_env(folder: Path, wheels: Iterable[Path]) -> tuple[Path, Path]:
    """A virtual environment in ``folder`` holding ``wheels`` (pip, offline), layered over this
    interpreter's packages: (its python, its site-packages).

    Why an environment rather than ``pip --target`` and PYTHONPATH: tk's tests and tk env's
    shells set PYTHONPATH themselves, and must still find apache-tvm-ffi where a user's
    install has it. Why layered: the machine's numpy, pandas, cuda-bindings, pytest and build
    tools are the ones to use, and ``--system-site-packages`` would reach those of the base
    interpreter, not of the environment this one may itself be (the GPU machine's python3 is
    /opt/torch/.venv's). A .pth file in the new site-packages appends this interpreter's.
    Nothing of the machine's is changed.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True,
                   capture_output=True)
    python = folder / "bin" / "python"
    site_dir = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    (site_dir / "_machine.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    argv = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
            "--no-compile", "--no-cache-dir", "--disable-pip-version-check", "--target",
            str(site_dir), *map(str, wheels)]
    proc = subprocess.run(argv, capture_output=True, text=True,
                          env={**os.environ, "PIP_NO_INPUT": "1"})
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv[:10])} ...: {proc.stderr.strip()[-2000:]}")
    return python, site_dir
