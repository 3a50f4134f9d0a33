"""Read what the dynamic loader reads from an ELF shared library, without loading it.

SONAME, DT_NEEDED, RPATH/RUNPATH, the GNU build id and the dynamic symbol table, parsed
with the standard library only: tk imports it as ``toolkit.probes.elfread`` and the probe
scripts beside it import it as ``elfread`` inside the interpreter under test.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 5, 10, 14, 15, 29
PT_LOAD, PT_DYNAMIC, PT_NOTE = 1, 2, 4
SHT_DYNSYM = 11
NT_GNU_BUILD_ID = 3
SHN_UNDEF = 0
STB_GLOBAL, STB_WEAK = 1, 2


class NotELF(ValueError):
    """The file is not an ELF object (or is truncated)."""


@dataclass
class ElfInfo:
    path: str
    machine: int
    bits: int
    soname: str | None = None
    needed: list[str] = field(default_factory=list)
    rpath: list[str] = field(default_factory=list)
    runpath: list[str] = field(default_factory=list)
    build_id: str | None = None

    def search_dirs(self) -> tuple[list[str], list[str]]:
        """(RPATH dirs, RUNPATH dirs) with $ORIGIN expanded; RPATH is ignored when RUNPATH
        is present, as ld.so does."""
        origin = os.path.dirname(os.path.realpath(self.path))

        def expand(entries: list[str]) -> list[str]:
            return [e.replace("${ORIGIN}", origin).replace("$ORIGIN", origin) for e in entries]

        return ([] if self.runpath else expand(self.rpath)), expand(self.runpath)


@contextmanager
def _mapped(path: str) -> Iterator[mmap.mmap | bytes]:
    """The file's bytes without reading them all: libtvm_compiler.so is ~250 MB."""
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            yield b""
            return
        try:
            yield data
        finally:
            data.close()


class _Reader:
    def __init__(self, data: bytes | mmap.mmap, path: str) -> None:
        if len(data) < 64 or data[:4] != b"\x7fELF":
            raise NotELF(f"{path}: not an ELF file")
        self.data = data
        self.bits = 64 if data[4] == 2 else 32
        self.end = "<" if data[5] == 1 else ">"
        if self.bits == 64:
            (self.machine, self.phoff, self.shoff, self.phentsize, self.phnum, self.shentsize,
             self.shnum) = self._unpack("H12xQQ6xHHHH", 18)
        else:
            (self.machine, self.phoff, self.shoff, self.phentsize, self.phnum, self.shentsize,
             self.shnum) = self._unpack("H8xII6xHHHH", 18)

    def _unpack(self, fmt: str, offset: int) -> tuple[int, ...]:
        try:
            return struct.unpack_from(self.end + fmt, self.data, offset)
        except (struct.error, OverflowError):  # offsets past the end, or absurdly large
            raise NotELF("truncated or damaged ELF file") from None

    def segments(self) -> list[tuple[int, int, int, int, int]]:
        """(type, offset, vaddr, filesz, memsz) of each program header."""
        out = []
        for i in range(self.phnum):
            base = self.phoff + i * self.phentsize
            if self.bits == 64:
                p_type, _flags, off, vaddr, _paddr, filesz, memsz = self._unpack("IIQQQQQ", base)
            else:
                p_type, off, vaddr, _paddr, filesz, memsz = self._unpack("IIIIII", base)
            out.append((p_type, off, vaddr, filesz, memsz))
        return out

    def sections(self) -> list[tuple[int, int, int, int, int]]:
        """(type, offset, size, link, entsize) of each section header."""
        out = []
        for i in range(self.shnum):
            base = self.shoff + i * self.shentsize
            if self.bits == 64:
                _n, sh_type, _f, _a, off, size, link, _i, _al, ent = self._unpack(
                    "IIQQQQIIQQ", base)
            else:
                _n, sh_type, _f, _a, off, size, link, _i, _al, ent = self._unpack(
                    "IIIIIIIIII", base)
            out.append((sh_type, off, size, link, ent))
        return out

    def vaddr_to_offset(self, vaddr: int) -> int:
        for p_type, off, start, filesz, _memsz in self.segments():
            if p_type == PT_LOAD and start <= vaddr < start + filesz:
                return off + (vaddr - start)
        raise NotELF("dynamic string table outside any loadable segment")

    def cstr(self, offset: int) -> str:
        if not 0 <= offset < len(self.data):
            raise NotELF("a string offset outside the file")
        end = self.data.find(b"\0", offset)
        return bytes(self.data[offset:end if end >= 0 else len(self.data)]).decode(
            errors="replace")


def read(path: str | os.PathLike[str]) -> ElfInfo:
    """SONAME, NEEDED, RPATH/RUNPATH and build id of ``path``; raises NotELF."""
    path = os.fspath(path)
    with _mapped(path) as data:
        return _read(_Reader(data, path), path)


def _read(r: _Reader, path: str) -> ElfInfo:
    info = ElfInfo(path=path, machine=r.machine, bits=r.bits)
    dyn_entries: list[tuple[int, int]] = []
    for p_type, off, _vaddr, filesz, _memsz in r.segments():
        if p_type == PT_DYNAMIC:
            size = 16 if r.bits == 64 else 8
            fmt = "qQ" if r.bits == 64 else "iI"
            for i in range(filesz // size):
                tag, val = r._unpack(fmt, off + i * size)
                if tag == 0:
                    break
                dyn_entries.append((tag, val))
        elif p_type == PT_NOTE:
            info.build_id = info.build_id or _build_id(r, off, filesz)
    strtab = next((v for t, v in dyn_entries if t == DT_STRTAB), None)
    if strtab is not None:
        base = r.vaddr_to_offset(strtab)
        for tag, val in dyn_entries:
            if tag == DT_NEEDED:
                info.needed.append(r.cstr(base + val))
            elif tag == DT_SONAME:
                info.soname = r.cstr(base + val)
            elif tag == DT_RPATH:
                info.rpath = [e for e in r.cstr(base + val).split(":") if e]
            elif tag == DT_RUNPATH:
                info.runpath = [e for e in r.cstr(base + val).split(":") if e]
    return info


def _build_id(r: _Reader, off: int, size: int) -> str | None:
    pos, end = off, off + size
    while pos + 12 <= end:
        namesz, descsz, n_type = r._unpack("III", pos)
        name_start = pos + 12
        desc_start = name_start + ((namesz + 3) & ~3)
        if n_type == NT_GNU_BUILD_ID and r.data[name_start:name_start + namesz] == b"GNU\0":
            return bytes(r.data[desc_start:desc_start + descsz]).hex()
        pos = desc_start + ((descsz + 3) & ~3)
    return None


def dynamic_symbols(path: str | os.PathLike[str]) -> tuple[set[str], set[str]]:
    """(defined, undefined) global/weak names of the dynamic symbol table."""
    with _mapped(os.fspath(path)) as data:
        return _symbols(_Reader(data, os.fspath(path)))


def _symbols(r: _Reader) -> tuple[set[str], set[str]]:
    sections = r.sections()
    defined: set[str] = set()
    undefined: set[str] = set()
    for sh_type, off, size, link, ent in sections:
        if sh_type != SHT_DYNSYM or not ent:
            continue
        if link >= len(sections):
            raise NotELF("the dynamic symbol table links to no section")
        str_off = sections[link][1]
        for i in range(size // ent):
            base = off + i * ent
            if r.bits == 64:
                name, info, _other, shndx, _value, _size = r._unpack("IBBHQQ", base)
            else:
                name, _value, _size, info, _other, shndx = r._unpack("IIIBBH", base)
            if not name or (info >> 4) not in (STB_GLOBAL, STB_WEAK):
                continue
            (undefined if shndx == SHN_UNDEF else defined).add(r.cstr(str_off + name))
    return defined, undefined
