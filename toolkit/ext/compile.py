"""``tk ext build DIR``: configure and compile an extension, then write its manifest.

The build goes through the build capability (``toolkit.builds.backends``): an extension is a
``BuildPlan`` of recipe kind ``ext`` whose CMake arguments name the TVM to build against;
the native backend runs CMake and Ninja. Host-side: tvm is never imported here; what the
library registers is learnt by loading it in a subprocess of the target Python.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import libraries
from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Stage, ignore
from toolkit.ext import headers, manifest
from toolkit.process import run_probe

PACKAGES = {"libtvm_ffi": "apache-tvm-ffi", "libtvm_runtime": "apache-tvm",
            "libtvm_compiler": "apache-tvm", "libtvm": "apache-tvm"}


@dataclass
class Built:
    library: Path
    manifest_path: Path
    manifest: dict[str, Any]
    log: Path


def project_name(source_dir: Path) -> str:
    text = (source_dir / "CMakeLists.txt").read_text(errors="replace")
    m = re.search(r"^\s*project\(\s*([A-Za-z_][\w-]*)", text, re.M)
    if not m:
        raise UserError(f"{source_dir}/CMakeLists.txt has no project(NAME ...)")
    return m.group(1)


def target_python_facts(python: str, *modules: str) -> dict[str, Any]:
    """Where the target Python's tvm and tvm-ffi are, and their versions, without importing
    tvm (find_spec + metadata only); under ``modules``, where each of ``modules`` would be
    imported from (None: nowhere)."""
    ran = run_probe("extlibs", "where", *modules, python=python, timeout=120)
    where = ran.stage("where")
    if where is None:
        raise TkError(f"{python} could not report its tvm: {ran.last_error_line()}")
    return where


def build(source_dir: str | Path, python: str = sys.executable,
          tvm_prebuild: str | None = None, tvm_source: str | None = None,
          build_id: str | None = None, build_type: str = "RelWithDebInfo",
          jobs: int | None = None, events: Handler = ignore,
          headers_from: Path | None = None) -> Built:
    """Configure and build the extension in ``source_dir`` against ``python``'s TVM (or the
    given one), after checking its headers against its libraries; ``events`` hears a
    ``Stage`` and the compile's ``Progress``. ``headers_from``: with ``build_id``, the tree
    whose headers go with the stored build's libraries (default: the tree it was built in;
    either way, one whose build key is the build's)."""
    from toolkit import ownership
    from toolkit.builds.backends import BuildFailed, BuildJob, backend, empty_dir, foreign_cache
    from toolkit.builds.recipes import BuildPlan

    src = Path(source_dir).resolve()
    if not (src / "CMakeLists.txt").is_file():
        raise UserError(f"{src} has no CMakeLists.txt (make one with: tk ext new NAME)")
    if sum(x is not None for x in (tvm_prebuild, tvm_source, build_id)) > 1:
        raise UserError("pass one of --tvm-prebuild, --tvm-source, --build")
    name = project_name(src)
    facts = target_python_facts(python)
    against, env = resolve(facts, python, tvm_prebuild, tvm_source, build_id, headers_from)
    cmake = {"CMAKE_BUILD_TYPE": build_type, "Python_EXECUTABLE": python, **against.cmake}
    generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
    plan = BuildPlan(recipes=[f"ext:{name}"], options={}, cmake=cmake, env={},
                     generator=generator, targets=[name])
    build_dir = src / "build"
    # Root building someone's extension: what the build writes (the library lands in the
    # package, beside the sources) stays theirs.
    with ownership.handing_over(src, ownership.owner_of(src)):
        # A project copied with its build directory: CMake's cache there names the first copy.
        foreign = foreign_cache(build_dir, src)
        if foreign:
            empty_dir(build_dir)
            events(Stage(f"{build_dir} was configured for another copy ({foreign}): emptied, "
                         "configured afresh"))
        events(Stage(f"checking the headers of {against.origin} against its libraries"))
        headers.check(src, against, build_dir)
        build_dir.mkdir(exist_ok=True)
        log = build_dir / "tk-build.log"
        log.write_text("")
        job = BuildJob(plan=plan, source_dir=src, build_dir=build_dir, log=log, jobs=jobs,
                       events=events)
        job.config_cmake.write_text(plan.config_cmake())
        events(Stage(f"building {name} in {build_dir}; log: {log}"))
        try:
            result = backend("native").build(job)  # BuildFailed: the first error, explained
        except BuildFailed as e:
            missing = re.search(r"fatal error: (tvm/(?!runtime/|ffi/)[\w/.]+): No such file",
                                str(e))
            if missing and against.cmake.get("TVM_PREBUILD_PATH"):
                e.args = (e.args[0] + f"\n  {missing.group(1)} is a TVM compiler header: the "
                          "apache-tvm wheel ships include/tvm/runtime only; build against a "
                          "source tree's headers with --tvm-source DIR (or --build ID)",)
            raise
        library = find_library(src, build_dir, name)
        data = describe_build(library, src, python, facts, cmake, result.toolchain,
                              result.commands, env, against)
        data["tvm"]["against"] = against.origin
        path = manifest.write(library, data)
    return Built(library, path, data, log)


def resolve(facts: dict[str, Any], python: str, tvm_prebuild: str | None,
            tvm_source: str | None, build_id: str | None, headers_from: Path | None = None
            ) -> tuple[headers.Against, dict[str, str] | None]:
    """Where the headers and libraries come from, and the environment (None: the caller's)
    in which ``python`` imports that TVM."""
    package_ffi = Path(facts["tvm_ffi_dir"]) if facts.get("tvm_ffi_dir") else None
    ffi_lib = package_ffi / "lib" / "libtvm_ffi.so" if package_ffi else None
    # The package's libtvm_ffi is as new as the headers it ships (its c_api.h version; the
    # distribution's version can lag it: apache-tvm-ffi 0.1.15.post2 ships 0.1.16 headers).
    ffi_version = headers.ffi_header_version(package_ffi) if package_ffi else None
    if build_id is not None:
        from toolkit.builds import store
        from toolkit.builds.source import inspect

        record = store.find(build_id, use=True)  # linked against: its lib/ must be there
        tree = Path(headers_from or record.source.dir)
        if not tree.is_dir():
            raise UserError(f"--build {record.id}: its source tree {tree} is gone (its headers "
                            "are needed)")
        # The headers must still be the ones the stored libraries were built from.
        now = inspect(tree).key
        stale = (None if now == record.source.tree_key else
                 f"headers: {tree} changed since build {record.id} was made from it (tree key "
                 f"{record.source.tree_key}, now {now})")
        lib_dir = record.lib_dir
        own_ffi = lib_dir / "libtvm_ffi.so"
        if own_ffi.is_file():  # the tree's tvm-ffi, built with it
            ffi_lib, ffi_version = own_ffi, headers.ffi_header_version(tree / headers.TREE_FFI)
        against = headers.Against(
            tvm_root=tree, ffi_root=headers.tree_ffi_root(tree, package_ffi),
            library_dir=lib_dir, ffi_library=ffi_lib,
            library_tvm=record.check.tvm_version if record.check else None,
            library_ffi=ffi_version, origin=f"--build {record.id}", stale=stale,
            cmake={"TVM_SOURCE_DIR": str(tree), "TVM_LIBRARY_DIR": str(lib_dir),
                   **({"TVM_FFI_LIBRARY": str(ffi_lib)} if ffi_lib else {})})
        return against, {**os.environ, **store.env_of(record)}
    if tvm_source is not None:
        tree = Path(tvm_source).resolve()
        built = next((tree / d for d in ("build/lib", "build")
                      if (tree / d / "libtvm_runtime.so").is_file()), None)
        wheel = Path(facts["tvm_dir"]) if facts.get("tvm_dir") else None
        if built is None and wheel is None:
            raise UserError(f"--tvm-source {tree} has no built libraries (build/lib) and "
                            f"{python} imports no tvm whose libraries to use")
        lib_dir = built or wheel / "lib"
        cmake = {"TVM_SOURCE_DIR": str(tree), "TVM_LIBRARY_DIR": str(lib_dir)}
        return headers.Against(
            tvm_root=tree, ffi_root=headers.tree_ffi_root(tree, package_ffi),
            library_dir=lib_dir, ffi_library=ffi_lib,
            library_tvm=headers.tvm_version(tree if built else wheel),
            library_ffi=ffi_version, origin=f"--tvm-source {tree}", cmake=cmake), None
    prebuild = tvm_prebuild or facts["tvm_dir"]
    if not prebuild:
        raise UserError(f"{python} imports no tvm: pip install apache-tvm, or pass "
                        "--tvm-prebuild DIR / --tvm-source DIR / --build ID")
    root = Path(prebuild).resolve()
    if package_ffi is None:
        raise UserError(f"{python} imports no tvm_ffi: pip install apache-tvm-ffi")
    return headers.Against(
        tvm_root=root, ffi_root=package_ffi, library_dir=root / "lib", ffi_library=ffi_lib,
        library_tvm=headers.tvm_version(root), library_ffi=ffi_version,
        origin=f"--tvm-prebuild {root}" if tvm_prebuild else f"the tvm of {python}",
        cmake={"TVM_PREBUILD_PATH": str(root)}), None


def find_library(src: Path, build_dir: Path, name: str) -> Path:
    candidates = [p for p in (*src.glob(f"python/*/lib/lib{name}.so"),
                              *build_dir.rglob(f"lib{name}.so")) if p.is_file()]
    if not candidates:
        raise TkError(f"the build finished but produced no lib{name}.so under {src}")
    return max(candidates, key=lambda p: p.stat().st_mtime)


def describe_build(library: Path, src: Path, python: str, facts: dict[str, Any],
                   cmake: dict[str, str], toolchain: dict[str, str],
                   commands: list[str], env: dict[str, str] | None = None,
                   against: headers.Against | None = None) -> dict[str, Any]:
    lib = libraries.describe(library, with_sha256=True)
    links = []
    for b in libraries.resolve(lib, loaded=[]):
        fam = libraries.family(b.path or b.needed)
        if fam is None or b.path is None:
            continue
        linked = libraries.describe(b.path, with_sha256=True)
        package = PACKAGES.get(fam)
        # A version only when the library is that installed distribution's own file (a
        # source tree's libtvm_runtime is not "apache-tvm 0.27").
        home = facts.get("tvm_ffi_dir" if fam == "libtvm_ffi" else "tvm_dir")
        owned = bool(home) and b.path.startswith(os.path.realpath(home) + os.sep)
        version = facts.get(package) if package and owned else None
        if (version is None and fam == "libtvm_ffi" and against and against.ffi_library
                and libraries.same_file(b.path, str(against.ffi_library))):
            version = against.library_ffi  # a stored build's own: its tree's c_api.h says
        links.append({"needed": b.needed, "path": b.path, "found_by": b.how,
                      "soname": linked.soname, "build_id": linked.build_id,
                      "sha256": linked.sha256, "package": package, "version": version})
    # The tvm-ffi the library links (not the Python's, when it links a stored build's own).
    ffi_version = next((link["version"] for link in links
                        if libraries.family(link["path"]) == "libtvm_ffi" and link["version"]),
                       facts.get("apache-tvm-ffi"))
    return {
        "name": library.name,
        "library": str(library),
        "sha256": lib.sha256,
        "build_id": lib.build_id,
        "needed": lib.needed,
        "runpath": lib.runpath,
        "rpath": lib.rpath,
        "source_dir": str(src),
        "python": python,
        "tvm": {"package_dir": cmake.get("TVM_PREBUILD_PATH") or facts.get("tvm_dir"),
                "source_dir": cmake.get("TVM_SOURCE_DIR"),
                "library_dir": cmake.get("TVM_LIBRARY_DIR"), "version": facts.get("apache-tvm")},
        "tvm_ffi": {"package_dir": facts.get("tvm_ffi_dir"), "version": ffi_version,
                    "abi": manifest.ffi_abi(ffi_version)},
        "links": links,
        "globals": registered_globals(library, python, env),
        "built": {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds"),
                  "cmake": cmake, "toolchain": toolchain, "commands": commands},
    }


def registered_globals(library: Path, python: str = sys.executable,
                       env: dict[str, str] | None = None) -> list[str]:
    """Load the library in a fresh ``python`` (in ``env``) after import tvm; the names it
    added."""
    ran = run_probe("extlibs", "globals", str(library), python=python, env=env)
    record = ran.stage("globals")
    if record is not None:
        if not record["ok"]:
            raise TkError(f"{library.name} built but does not load: {record['error']}")
        return record["registered"]
    from toolkit.explain import hint

    why = ran.last_error_line()
    extra = hint(ran.stderr)
    raise TkError(f"loading {library.name} after import tvm ended the process ({why})"
                  + (f"\n  {extra}" if extra else ""))
