"""TVM's shared libraries: which are mapped in a process, what they are, what a library
would bind to.

The crash tk exists to prevent is two copies of libtvm / libtvm_runtime / libtvm_ffi in one
process (two registries, or one registry whose objects two ABIs disagree about). This module
answers the questions that decide it, without loading anything: which TVM libraries
``/proc/<pid>/maps`` shows, their SONAME / build id / sha256, and, for a library not yet
loaded, which file each of its DT_NEEDED entries would resolve to, the way ld.so does.

Host-side safe: no tvm import.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from toolkit.outputs import sha256_file
from toolkit.probes import elfread

# Library families whose two copies in one process crash it. The CUDA/extra runtimes are
# TVM-related too, but they register nothing twice on their own.
CORE_FAMILIES = ("libtvm_ffi", "libtvm_runtime", "libtvm_compiler", "libtvm")
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


FFI_VERSION_H = Path("include/tvm/ffi/c_api.h")


def ffi_header_version(include_root: Path) -> str | None:
    """major.minor.patch of tvm-ffi's ``include/tvm/ffi/c_api.h`` under ``include_root`` (a
    tvm-ffi source tree, or its Python package): the C ABI the library built with it has."""
    path = include_root / FFI_VERSION_H
    if not path.is_file():
        return None
    text = path.read_text(errors="replace")
    parts = [re.search(rf"#define\s+TVM_FFI_VERSION_{k}\s+(\d+)", text)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def family(name: str) -> str | None:
    """'libtvm_runtime' for '/x/libtvm_runtime.so.0.27', None for a non-TVM library."""
    base = os.path.basename(name)
    m = re.match(r"^(libtvm[A-Za-z0-9_]*)\.so(?:\.[\d.]+)?$", base)
    return m.group(1) if m else None


def is_core(name: str) -> bool:
    return family(name) in CORE_FAMILIES


@dataclass
class Library:
    """One TVM-related shared library file, as the loader sees it."""

    path: str
    soname: str | None
    build_id: str | None
    needed: list[str] = field(default_factory=list)
    runpath: list[str] = field(default_factory=list)
    rpath: list[str] = field(default_factory=list)
    sha256: str | None = None
    machine: int | None = None  # ELF e_machine and class: what it can be loaded into
    bits: int | None = None

    @property
    def family(self) -> str | None:
        return family(os.path.realpath(self.path)) or family(self.soname or "")

    def sha256_(self) -> str:
        if self.sha256 is None:
            self.sha256 = sha256_file(self.path)
        return self.sha256

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "family": self.family}


def describe(path: str | os.PathLike[str], with_sha256: bool = False) -> Library:
    """Read a library's ELF facts (not loading it)."""
    info = elfread.read(path)
    lib = Library(str(path), info.soname, info.build_id, info.needed, info.runpath, info.rpath,
                  machine=info.machine, bits=info.bits)
    if with_sha256:
        lib.sha256_()
    return lib


def describe_user_library(path: str | os.PathLike[str]) -> Library:
    """``describe`` for a path the user gave: a missing or non-ELF file is their mistake."""
    from toolkit.errors import UserError

    if not Path(path).is_file():
        raise UserError(f"no such library: {path}")
    try:
        return describe(path)
    except elfread.NotELF as e:
        raise UserError(f"{path} is not an ELF shared library ({e})") from None


MACHINES = {3: "x86", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "S/390", 40: "ARM",
            62: "x86-64", 183: "AArch64", 243: "RISC-V", 258: "LoongArch"}


def architecture(machine: int | None, bits: int | None) -> str:
    return f"{bits}-bit {MACHINES.get(machine or 0, f'machine {machine}')}"


def foreign_architecture(lib: Library, executable: str | os.PathLike[str]) -> str | None:
    """Why ``lib`` cannot be loaded into the process of ``executable`` (another architecture
    or word size: dlopen would only say "wrong ELF class"), or None; None too when the
    interpreter's own ELF header cannot be read."""
    try:
        host = elfread.read(os.path.realpath(executable))
    except (OSError, elfread.NotELF):
        return None
    if lib.machine is None or (lib.machine, lib.bits) == (host.machine, host.bits):
        return None
    return (f"{Path(lib.path).name} is a {architecture(lib.machine, lib.bits)} library; "
            f"{executable} is {architecture(host.machine, host.bits)}")


def mapped_paths(pid: int | str = "self") -> list[str]:
    """TVM-related library files mapped in a process, in first-mapped order."""
    paths: list[str] = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if "libtvm" not in line:
                continue
            parts = line.split(maxsplit=5)
            if len(parts) < 6:
                continue
            path = parts[5].strip()
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            if path.startswith("/") and family(path) and path not in paths:
                paths.append(path)
    return paths


def mapped(pid: int | str = "self", with_sha256: bool = False) -> list[Library]:
    """Every mapped TVM-related library with its SONAME, build id (and sha256)."""
    out = []
    for path in mapped_paths(pid):
        try:
            out.append(describe(path, with_sha256))
        except (OSError, elfread.NotELF):
            out.append(Library(path, None, None))  # replaced or deleted on disk since mapped
    return out


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def duplicates(libs: list[Library]) -> dict[str, list[str]]:
    """Core families mapped from more than one file: family -> paths."""
    by_family: dict[str, list[str]] = {}
    for lib in libs:
        fam = lib.family
        if fam not in CORE_FAMILIES:
            continue
        paths = by_family.setdefault(fam, [])
        if not any(same_file(lib.path, p) for p in paths):
            paths.append(lib.path)
    return {fam: paths for fam, paths in by_family.items() if len(paths) > 1}


@dataclass
class Binding:
    """Where one DT_NEEDED entry of a library would resolve."""

    needed: str
    path: str | None
    how: str  # "already loaded", "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so.cache", ...


def resolve(lib: Library, loaded: list[Library] | None = None,
            env: dict[str, str] | None = None, tvm_only: bool = False) -> list[Binding]:
    """Emulate ld.so for ``lib``'s DT_NEEDED entries.

    An object already in the process whose SONAME equals the entry satisfies it, wherever
    the entry's search path points: that is the silent rebind two TVMs fall into.
    ``tvm_only`` skips the system directories (ld.so.cache, /lib...) for names that are not
    TVM's: libc and libstdc++ are found there, and a TVM library under another SONAME is
    found through RPATH/RUNPATH/LD_LIBRARY_PATH, which are still searched.
    """
    env = dict(os.environ if env is None else env)
    names = loaded_names(loaded or [], env)
    out = []
    for name in lib.needed:
        hit = names.get(name)
        if hit is not None:
            out.append(Binding(name, hit.path, "already loaded"))
            continue
        out.append(_search(lib, name, env, system=not tvm_only or bool(family(name))))
    return out


def loaded_names(loaded: list[Library], env: dict[str, str]) -> dict[str, Library]:
    """The names ld.so knows each loaded TVM library by: its SONAME, plus every DT_NEEDED
    name another loaded library resolved to it (ld.so remembers those too)."""
    names: dict[str, Library] = {}
    for m in loaded:
        if m.soname:
            names.setdefault(m.soname, m)
    for m in loaded:
        for name in m.needed:
            if name in names or not family(name):
                continue
            found = _search(m, name, env)
            hit = next((x for x in loaded if found.path and same_file(x.path, found.path)), None)
            if hit is not None:
                names[name] = hit
    return names


def _search(lib: Library, name: str, env: dict[str, str], system: bool = True) -> Binding:
    """Where ld.so's search (no already-loaded object matching) finds ``name`` for ``lib``."""
    rpath_dirs, runpath_dirs = elfread.ElfInfo(
        lib.path, 0, 64, lib.soname, lib.needed, lib.rpath, lib.runpath).search_dirs()
    ld_dirs = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    if "/" in name:
        return Binding(name, name if os.path.exists(name) else None, "path")
    for how, dirs in (("RPATH", rpath_dirs), ("LD_LIBRARY_PATH", ld_dirs),
                      ("RUNPATH", runpath_dirs)):
        for d in dirs:
            if (Path(d) / name).exists():
                return Binding(name, os.path.realpath(Path(d) / name), how)
    if not system:
        return Binding(name, None, "system (not searched)")
    cached = ld_cache().get(name)
    if cached:
        return Binding(name, cached, "ld.so.cache")
    for d in DEFAULT_DIRS:
        if (Path(d) / name).exists():
            return Binding(name, os.path.realpath(Path(d) / name), "default path")
    return Binding(name, None, "not found")


@cache
def ld_cache() -> dict[str, str]:
    """soname -> path from ``ldconfig -p`` (first entry wins, as in ld.so)."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    table: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if not m or (os.uname().machine == "x86_64" and "x86-64" not in m.group(2)):
            continue  # a 32-bit entry never satisfies a 64-bit library
        table.setdefault(m.group(1), m.group(3))
    return table


def missing_symbols(lib_path: str, providers: list[str]) -> list[str]:
    """tvm:: / TVMFFI symbols ``lib_path`` needs that none of ``providers`` defines.

    What would make dlopen fail with 'undefined symbol' (or, if lazily bound, crash on
    the first call) - found without loading the library.
    """
    _, undefined = elfread.dynamic_symbols(lib_path)
    wanted = {s for s in undefined if s.startswith(("_ZN3tvm", "_ZNK3tvm", "TVMFFI", "TVM"))}
    for provider in providers:
        if not wanted:
            break
        defined, _ = elfread.dynamic_symbols(provider)
        wanted -= defined
    return sorted(wanted)
