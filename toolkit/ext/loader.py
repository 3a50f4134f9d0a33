"""Load out-of-tree TVM extension libraries into this process, safely.

``load_extension(path)`` does what MLC-LLM and TVM's own extension examples do (import tvm
first, so libtvm_runtime and libtvm_ffi are mapped RTLD_GLOBAL; then dlopen the extension
so its static initialisers register its global functions), after checking, without loading
anything, the things that otherwise end in an abort or a segfault:

- a second copy of libtvm_ffi / libtvm_runtime / libtvm_compiler / libtvm already mapped;
- a DT_NEEDED of the extension that would map a second copy (a TVM library without a
  matching SONAME in the process, found through the extension's RUNPATH);
- a manifest (``tk ext build``) that describes another library (the sha256 and build id it
  records are not this file's: replaced or rebuilt since), or says it was built against
  another tvm-ffi ABI
  (tvm-ffi's major.minor while it is 0.x: what its C ABI and object layouts promise);
- tvm:: / TVMFFI symbols it needs that the libraries it binds to do not define;
- a global function it registers that is already registered (tvm-ffi aborts at static init).

Another build of the same TVM (another build id, even another TVM release) is no reason
to refuse: an extension that imports only symbols this process defines, through the same
tvm-ffi ABI, loads and runs (``ctypes.CDLL`` proves it). The ABI and symbol checks can be
overridden (``force=True``, ``tk ext load --force`` or ``TK_EXT_FORCE=1``): the library is
then loaded with a warning. A second copy of a TVM library never is: that aborts the process.

Each refusal is a ``LoadRefused`` with one line: what is wrong, then the fix.
"""

from __future__ import annotations

import ctypes
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit import libraries, reproduce
from toolkit.errors import TkError, UserError
from toolkit.ext import manifest as manifest_mod
from toolkit.probes import elfread

FORCE_ENV = "TK_EXT_FORCE"


class ForcedLoad(UserWarning):
    """An extension was loaded although a compatibility check failed (force / TK_EXT_FORCE)."""


def forced(force: bool = False) -> bool:
    return force or os.environ.get(FORCE_ENV, "") not in ("", "0")


class LoadRefused(TkError):
    """Loading would put two TVMs (or mismatched ABIs) in this process."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}. Fix: {fix}")
        self.problem = problem
        self.fix = fix


@dataclass
class Extension:
    path: str
    handle: Any
    registered: list[str]
    manifest: dict[str, Any] | None
    bindings: list[libraries.Binding] = field(default_factory=list)


_LOADED: dict[str, Extension] = {}


def ensure_tvm() -> list[libraries.Library]:
    """Import tvm (mapping libtvm_ffi and libtvm_runtime RTLD_GLOBAL) and refuse to go on
    when the process already holds two copies of a TVM library; the mapped TVM libraries."""
    import tvm  # noqa: F401 - imported for its side effect: the libraries get mapped

    mapped = libraries.mapped()
    dups = libraries.duplicates(mapped)
    if dups:
        fam, paths = next(iter(dups.items()))
        raise LoadRefused(
            f"two copies of {fam} are mapped in this process: {' and '.join(paths)}",
            "run in a fresh process that imports one TVM only; look for a vendored tvm on "
            "sys.path / PYTHONPATH and for TVM_LIBRARY_PATH (tk doctor lists them)")
    return mapped


def global_names() -> set[str]:
    import tvm_ffi

    return set(tvm_ffi.registry.list_global_func_names())


def plan(path: str | Path, mapped: list[libraries.Library] | None = None,
         env: dict[str, str] | None = None, versions: dict[str, str] | None = None,
         executable: str | None = None, force: bool = False
         ) -> tuple[libraries.Library, list[libraries.Binding], dict[str, Any] | None]:
    """Everything ``load_extension`` checks before dlopen, as data; raises LoadRefused.

    ``mapped`` defaults to this process's TVM libraries (``tk ext check`` passes the ones a
    subprocess of the current Python maps after ``import tvm``, and that process's tvm /
    tvm-ffi ``versions`` by family; by default they are read from this process's modules).
    ``force`` turns the ABI and symbol refusals into ForcedLoad warnings.
    """
    lib_path = Path(path)
    lib = libraries.describe_user_library(lib_path)
    foreign = libraries.foreign_architecture(lib, executable or sys.executable)
    if foreign:
        raise LoadRefused(f"{foreign}: it cannot be loaded there",
                          "build it for this machine and Python (tk ext build)")
    mapped = libraries.mapped() if mapped is None else mapped
    if lib.family in libraries.CORE_FAMILIES:
        where = next((m.path for m in mapped if m.family == lib.family), None)
        raise LoadRefused(
            f"{lib_path} is a TVM library ({lib.family}), not an extension"
            + (f"; this process already maps {where}" if where else ""),
            "import exactly one tvm per process (put the build you want first on "
            "PYTHONPATH / TVM_LIBRARY_PATH, e.g. eval \"$(tk env ID)\")")
    bindings = _check_bindings(lib, mapped, env)
    data = manifest_mod.read(lib_path)
    if data is not None:
        _refuse_unless_forced(_check_identity(lib_path, lib, data), force)
        _refuse_unless_forced(_check_manifest(lib_path, data, mapped, versions), force)
    providers = [b.path for b in bindings if b.path and libraries.family(b.path)]
    providers += [m.path for m in mapped if m.family == "libtvm_ffi" and m.path not in providers]
    try:
        missing = libraries.missing_symbols(str(lib_path), providers)
    except elfread.NotELF as e:
        raise UserError(f"{lib_path}: a damaged ELF file ({e})") from None
    if missing:
        from toolkit.explain import hint

        sample = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3
                                           else "")
        text = f"{lib_path}: undefined symbol: {missing[0]}"
        _refuse_unless_forced(LoadRefused(
            f"{lib_path.name} needs symbols no TVM library in this process defines ({sample}); "
            "it was built against another TVM / tvm-ffi",
            (hint(text) or "rebuild it against this TVM") + f" (tk ext check {lib_path})"),
            force)
    return lib, bindings, data


def _refuse_unless_forced(refusal: LoadRefused | None, force: bool) -> None:
    """A refusal the user may override: raised, or (forced) a ForcedLoad warning."""
    if refusal is None:
        return
    if not force:
        raise LoadRefused(refusal.problem, refusal.fix + "; to load it anyway: force=True, "
                          f"tk ext load --force, or {FORCE_ENV}=1")
    warnings.warn(f"loading anyway ({FORCE_ENV} / force): {refusal.problem}", ForcedLoad,
                  stacklevel=4)  # the caller of load_extension


def _check_bindings(lib: libraries.Library, mapped: list[libraries.Library],
                    env: dict[str, str] | None, seen: set[str] | None = None
                    ) -> list[libraries.Binding]:
    """Refuse when a DT_NEEDED would bring a second copy of a core TVM library."""
    seen = set() if seen is None else seen
    bindings = libraries.resolve(lib, mapped, env, tvm_only=True)
    for b in bindings:
        fam = libraries.family(b.needed) or (libraries.family(b.path) if b.path else None)
        if fam is None or b.how == "already loaded":
            continue
        if b.path is None:
            raise LoadRefused(
                f"{Path(lib.path).name} needs {b.needed}, which the loader cannot find "
                f"(RUNPATH {lib.runpath or '-'}, RPATH {lib.rpath or '-'})",
                "import tvm first (tk's loader does) or rebuild it with tk ext build so its "
                "RUNPATH names the TVM it was built against")
        other = next((m for m in mapped if m.family == libraries.family(b.path)
                      and not libraries.same_file(m.path, b.path)), None)
        if other is not None:
            raise LoadRefused(
                f"loading {Path(lib.path).name} would map a second {fam}: its {b.needed} "
                f"resolves (by {b.how}) to {b.path}, while this process already maps "
                f"{other.path}, which ld.so knows as {other.soname or 'its path only'}: a "
                "second copy would be loaded and abort in its static initialisers",
                "rebuild the extension against the TVM this process uses (tk ext build DIR "
                "with this Python), or run it in a process that imports the TVM it was "
                "built for")
        if b.path not in seen and libraries.is_core(b.path):
            seen.add(b.path)
            bindings += [x for x in _check_bindings(libraries.describe(b.path), mapped, env,
                                                    seen) if x.needed != b.needed]
    return bindings


def _check_identity(lib_path: Path, lib: libraries.Library, data: dict[str, Any]
                    ) -> LoadRefused | None:
    """The refusal when the manifest beside the library records another library: what it says
    the library was built against is then not known."""
    from toolkit.outputs import sha256_file

    differs = []
    if data.get("build_id") and data["build_id"] != lib.build_id:
        differs.append(f"build id {data['build_id'][:12]} recorded, {lib_path.name} is "
                       f"{(lib.build_id or 'without one')[:12]}")
    if data.get("sha256"):
        sha = sha256_file(lib_path)
        if sha != data["sha256"]:
            differs.insert(0, f"sha256 {data['sha256'][:12]} recorded, {lib_path.name} is "
                              f"{sha[:12]}")
    if not differs:
        return None
    return LoadRefused(
        f"{lib_path.name} is not the library its manifest describes ({'; '.join(differs)}): "
        "it was replaced or rebuilt after tk ext build, so what it was built against is not "
        f"known ({manifest_mod.path_for(lib_path).name})",
        f"rebuild it with tk ext build {data.get('source_dir') or 'DIR'} (which writes its "
        "manifest anew)")


def _check_manifest(lib_path: Path, data: dict[str, Any], mapped: list[libraries.Library],
                    versions: dict[str, str] | None = None) -> LoadRefused | None:
    """The refusal when the extension was built against another tvm-ffi ABI than the mapped one.

    Build ids are not compared: another build of the same TVM / tvm-ffi (a rebuild, another
    release keeping the ABI) serves the extension as well, and the symbol check catches what
    it lacks."""
    built = next((link.get("version") for link in manifest_mod.links(data)
                  if libraries.family(link.get("soname") or link["path"]) == "libtvm_ffi"),
                 None) or (data.get("tvm_ffi") or {}).get("version")
    now = _version("libtvm_ffi", versions)
    abi_built, abi_now = manifest_mod.ffi_abi(built), manifest_mod.ffi_abi(now)
    if not built or not now or abi_built == abi_now:
        return None
    where = next((m.path for m in mapped if m.family == "libtvm_ffi"), "this process")
    return LoadRefused(
        f"{lib_path.name} was built against tvm-ffi {built} (ABI {abi_built}), but this "
        f"process maps {where} (tvm-ffi {now}, ABI {abi_now}): object layouts and calling "
        "conventions may differ",
        f"rebuild it with this Python's TVM: tk ext build {data.get('source_dir') or 'DIR'}"
        " (or run it with the tvm-ffi it was built for)")


def _version(fam: str, versions: dict[str, str] | None) -> str | None:
    """The version of ``fam`` the process imported (given, or read from its modules)."""
    if versions is not None:
        return versions.get(fam)
    module = sys.modules.get("tvm_ffi" if fam == "libtvm_ffi" else "tvm")
    return getattr(module, "__version__", None)


def load_extension(path: str | Path, expect_globals: list[str] | None = None,
                   force: bool = False) -> Extension:
    """Load an extension library after ``import tvm``; refuse rather than crash.

    ``expect_globals`` (else the manifest's ``globals``) must appear in the registry.
    Loading the same file twice returns the first Extension. ``force`` (or TK_EXT_FORCE=1)
    loads despite a tvm-ffi ABI or symbol mismatch, with a ForcedLoad warning.
    """
    real = str(Path(path).resolve())
    if real in _LOADED:
        return _LOADED[real]
    lib, bindings, data = plan(real, mapped=ensure_tvm(), force=forced(force))
    for other in _LOADED.values():
        if Path(other.path).name == Path(real).name:
            raise LoadRefused(
                f"another {Path(real).name} is already loaded from {other.path}",
                "load each extension from one place; remove the other copy from the path")
    declared = list(expect_globals if expect_globals is not None else
                    (data or {}).get("globals", []))
    before = global_names()
    taken = sorted(set(declared) & before)
    if taken:
        owner = next((e.path for e in _LOADED.values() if taken[0] in e.registered), None)
        raise LoadRefused(
            f"{Path(real).name} registers {taken[0]}, which is already registered"
            + (f" by {owner}" if owner else " (another copy of this extension, or TVM itself)")
            + "; tvm-ffi would abort the process",
            "rename the function in the extension, or do not load both")
    handle = _dlopen(real, lib)
    registered = sorted(global_names() - before)
    absent = [g for g in declared if g not in registered and g not in before]
    if absent:
        raise TkError(f"{Path(real).name} loaded but did not register {', '.join(absent)}: "
                      "its static initialisers (TVM_FFI_STATIC_INIT_BLOCK) did not run or "
                      "use other names; rebuild it (tk ext build)")
    ext = Extension(real, handle, registered, data, bindings)
    _LOADED[real] = ext
    return ext


def _dlopen(path: str, lib: libraries.Library) -> Any:
    """tvm_ffi.load_module for a library that exports FFI module symbols, else a global
    dlopen so the registrations of its static initialisers see libtvm's symbols."""
    from toolkit.probes import elfread

    defined, _ = elfread.dynamic_symbols(path)
    try:
        if "__tvm_ffi__library_ctx" in defined or any(s.startswith("__tvm_ffi_")
                                                      for s in defined):
            import tvm_ffi

            return tvm_ffi.load_module(path)
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:  # only a forced load gets here with what dlopen then refuses
        from toolkit.explain import hint

        extra = hint(str(e))
        raise TkError(f"dlopen refused {Path(path).name}: {e}"
                      + (f"\n  {extra}" if extra else "")) from None


def use(spec: str | Path) -> list[str]:
    """Load an extension for a command (``--ext``); the global functions it registered.

    ``spec`` is a library (loaded by ``load_extension``), or a Python package: a ``tk ext new``
    project (its ``python/<name>/``) or the package directory itself. A package's library
    (``lib/lib<name>.so``), when it has one, goes through ``load_extension`` first - checked,
    then mapped - and then the package is imported, so that what it registers in Python (a
    code generator, a target, passes) is there too. ``TK_EXT_FORCE=1`` overrides the library's
    ABI and symbol checks as for ``load_extension``.
    """
    path = Path(spec).resolve()
    if not path.exists():
        raise UserError(f"--ext {spec}: no such file or directory")
    if path.is_file():
        registered = load_extension(path).registered
        reproduce.note_extension(str(path))
        return registered
    package = _package_dir(path, spec)
    name = package.name
    ensure_tvm()
    before = global_names()
    library = package / "lib" / f"lib{name}.so"
    if library.is_file():
        load_extension(library)
    elif (package.parent.parent / "CMakeLists.txt").is_file():
        raise UserError(f"--ext {spec}: {library} is not built; run: tk ext build "
                        f"{package.parent.parent}")
    loaded = sys.modules.get(name)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        if origin is None or Path(origin).parent != package:
            raise UserError(f"--ext {spec}: a module named {name} is already imported from "
                            f"{Path(origin).parent if origin else 'elsewhere'}; rename the "
                            "extension")
    else:
        import importlib

        sys.path.insert(0, str(package.parent))
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - the extension's own code failed
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise UserError(f"--ext {spec}: importing {name} failed: {first}") from e
    reproduce.note_extension(str(path))
    return sorted(global_names() - before)


def _package_dir(path: Path, spec: str | Path) -> Path:
    """The Python package a directory is, or the one a project holds under python/."""
    if (path / "__init__.py").is_file():
        return path
    found = sorted(p.parent for p in (path / "python").glob("*/__init__.py"))
    if len(found) != 1:
        raise UserError(f"--ext {spec}: not an extension (expected a package directory, a "
                        "project with one package under python/ as 'tk ext new' makes, or a "
                        "library .so)")
    return found[0]
