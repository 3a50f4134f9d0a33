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

import hashlib
import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from toolkit.probes import elfread

# Library families whose two copies in one process crash it. The CUDA/extra runtimes are
# TVM-related too, but they register nothing twice on their own.
CORE_FAMILIES = ("libtvm_ffi", "libtvm_runtime", "libtvm_compiler", "libtvm")
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


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

    @property
    def family(self) -> str | None:
        return family(os.path.realpath(self.path)) or family(self.soname or "")

    def identity(self) -> str:
        """What makes two files the same build: the build id, else the content hash."""
        return f"build-id:{self.build_id}" if self.build_id else f"sha256:{self.sha256_()}"

    def sha256_(self) -> str:
        if self.sha256 is None:
            self.sha256 = sha256_of(self.path)
        return self.sha256

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "family": self.family}


def sha256_of(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def describe(path: str | os.PathLike[str], with_sha256: bool = False) -> Library:
    """Read a library's ELF facts (not loading it)."""
    info = elfread.read(path)
    lib = Library(str(path), info.soname, info.build_id, info.needed, info.runpath, info.rpath)
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
    except elfread.NotELF:
        raise UserError(f"{path} is not an ELF shared library") from None


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


# --- tk doctor: facts from the interpreter under test, and the checks over them ----------


def doctor_facts(python: str, env: dict[str, str] | None = None,
                 timeout: float = 300) -> dict[str, Any]:
    """Which library registers which global functions: the owners probe, in a fresh process
    of ``python`` (it loads TVM's libraries one by one, which may abort it)."""
    from toolkit.probes import path_of

    try:
        proc = subprocess.run([python, str(path_of("extlibs")), "owners"], capture_output=True,
                              text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"ext_owners_exit": {"code": None, "stderr": str(e)}}
    records = []
    for line in proc.stdout.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "stage" in record:
            records.append(record)
    return {"ext_owners": records,
            "ext_owners_exit": {"code": proc.returncode, "stderr": proc.stderr[-4000:]}}


def soname_problem(path: str, soname: str | None) -> str | None:
    """Why a core TVM library's SONAME lets a second copy be mapped, or None."""
    fam = family(os.path.realpath(path))
    if fam in CORE_FAMILIES and soname != f"{fam}.so":
        return (f"a {fam} whose SONAME is not {fam}.so is not recognised by ld.so as the one "
                "extensions link: a second copy can get mapped; rebuild TVM with the default "
                "SONAME")
    return None


def check_redirects(facts: dict[str, Any]) -> list[Any]:
    """sys.path entries and env vars that point at another tvm (the vendored-TVM pattern)."""
    from toolkit.doctor import PASS, WARN, Check

    envf = facts.get("environment")
    if not envf:
        return []
    imported = envf.get("imported_tvm")
    rows = []
    for r in envf["redirects"]:
        if r.get("tvm") and r["tvm"] == imported:
            continue
        if r.get("tvm"):
            rows.append(Check(
                "vendored tvm", WARN,
                f"{r['where']} ({r['entry']}) holds another tvm package: {r['tvm']} "
                f"(imported: {imported})",
                "keep one TVM per interpreter: drop that entry (a project's 3rdparty/tvm/python "
                "belongs in its own environment), or make it the only tvm"))
        elif r.get("libraries"):
            lib_dir = os.path.join(imported, "lib") if imported else None
            if lib_dir and same_file(r["entry"], lib_dir):
                continue
            rows.append(Check(
                "vendored tvm", WARN,
                f"{r['where']} entry {r['entry']} holds TVM libraries "
                f"({', '.join(r['libraries'][:3])}) other than the imported tvm's",
                f"unset {r['where']} or point it at {lib_dir or 'the imported tvm'}/"))
    mapped_facts = facts.get("mapped") or {}
    ffi_pkg = mapped_facts.get("tvm_ffi_file")
    ffi_lib = next((lib["path"] for lib in mapped_facts.get("libraries", [])
                    if family(os.path.realpath(lib["path"])) == "libtvm_ffi"), None)
    if ffi_pkg and ffi_lib and not os.path.realpath(ffi_lib).startswith(
            os.path.realpath(os.path.dirname(ffi_pkg)) + os.sep):
        rows.append(Check(
            "vendored tvm", WARN,
            f"tvm_ffi is imported from {os.path.dirname(ffi_pkg)} but its libtvm_ffi.so is "
            f"mapped from {ffi_lib} (tvm_ffi looks in the installed apache-tvm-ffi's RECORD "
            "first)",
            "use the pip-installed tvm_ffi with it, or uninstall apache-tvm-ffi where a "
            "vendored tvm_ffi must load its own library"))
    if not rows:
        rows.append(Check("vendored tvm", PASS, "no sys.path entry or environment variable "
                          "points at another tvm"))
    return rows


def check_dist_infos(facts: dict[str, Any]) -> list[Any]:
    """Stale tvm dist-infos: two versions of one project, or records of deleted files."""
    from toolkit.doctor import WARN, Check

    envf = facts.get("environment")
    if not envf:
        return []
    rows = []
    by_project: dict[str, list[dict[str, Any]]] = {}
    for d in envf["dist_infos"]:
        by_project.setdefault(d["project"], []).append(d)
        if d["missing_files"]:
            rows.append(Check("stale dist-info", WARN,
                              f"{d['path']} lists {d['missing_files'][0]}, which is gone",
                              f"pip uninstall {d['project'].replace('_', '-')} and reinstall, "
                              f"or delete {d['path']}"))
    for project, dists in by_project.items():
        if len(dists) > 1:
            rows.append(Check("stale dist-info", WARN,
                              f"{len(dists)} installs of {project}: "
                              + ", ".join(f"{d['version']} ({d['path']})" for d in dists),
                              "delete the dist-info directories of the versions not in use"))
    return rows


def check_global_owners(facts: dict[str, Any]) -> list[Any]:
    """Which library registered how many global functions; a duplicate registration fails."""
    from toolkit.doctor import FAIL, PASS, Check
    from toolkit.explain import best

    records = facts.get("ext_owners")
    if records is None:
        return []
    rows = []
    owners: dict[str, str] = {}
    last_loading = None
    for r in records:
        if r["stage"] == "loading":
            last_loading = r["library"]
        elif r["stage"] == "owner":
            last_loading = None
            name = os.path.basename(r["library"])
            if r.get("ok") is False:
                missing = re.search(r"(\S+): cannot open shared object file", r["error"])
                why = f"{missing.group(1)} not found" if missing else r["error"][-120:]
                rows.append(Check("globals", PASS, f"{name}: not loadable here ({why}); "
                                  "registers nothing"))
                continue
            for g in r["registered"]:
                owners.setdefault(g, r["library"])
            sample = ", ".join(r["registered"][:3])
            rows.append(Check("globals", PASS, f"{name} registers {len(r['registered'])}"
                              + (f" (e.g. {sample})" if sample else "")))
    ended = facts.get("ext_owners_exit", {})
    if last_loading is not None and ended.get("code"):
        finding = best(ended.get("stderr", ""))
        if finding is not None and finding.id == "duplicate-global-function":
            dup = finding.groups["name"]
            first = owners.get(dup, "an earlier library")
            rows.append(Check("globals", FAIL, f"{last_loading} registers {dup}, already "
                              f"registered by {first}: loading it aborts the process",
                              "two builds of TVM (or an extension and TVM) define the same "
                              "global; keep one of them"))
        else:
            rows.append(Check("globals", FAIL, f"loading {last_loading} ended the process "
                              f"(exit {ended['code']})",
                              finding.one_line() if finding else "run tk doctor --debug"))
    return rows


DOCTOR_CHECKS = [check_redirects, check_dist_infos, check_global_owners]
