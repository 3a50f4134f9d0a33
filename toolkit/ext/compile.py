"""``tk ext build DIR``: configure and compile an extension, then write its manifest.

The build goes through the build capability (``toolkit.build.backends``): an extension is a
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
from toolkit.ext import manifest
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


def target_python_facts(python: str) -> dict[str, Any]:
    """Where the target Python's tvm and tvm-ffi are, and their versions, without importing
    tvm (find_spec + metadata only)."""
    ran = run_probe("extlibs", "where", python=python, timeout=120)
    where = ran.stage("where")
    if where is None:
        raise TkError(f"{python} could not report its tvm: {ran.last_error_line()}")
    return where


def build(source_dir: str | Path, python: str = sys.executable,
          tvm_prebuild: str | None = None, tvm_source: str | None = None,
          build_type: str = "RelWithDebInfo", jobs: int | None = None,
          events: Handler = ignore) -> Built:
    """Configure and build the extension in ``source_dir`` against ``python``'s TVM (or the
    given one); ``events`` hears a ``Stage`` and the compile's ``Progress``."""
    from toolkit.build import ownership
    from toolkit.build.backends import BuildFailed, BuildJob, backend
    from toolkit.build.recipes import BuildPlan

    src = Path(source_dir).resolve()
    if not (src / "CMakeLists.txt").is_file():
        raise UserError(f"{src} has no CMakeLists.txt (make one with: tk ext new NAME)")
    if tvm_prebuild and tvm_source:
        raise UserError("pass --tvm-prebuild or --tvm-source, not both")
    name = project_name(src)
    facts = target_python_facts(python)
    cmake = {"CMAKE_BUILD_TYPE": build_type, "Python_EXECUTABLE": python}
    if tvm_source:
        source = Path(tvm_source).resolve()
        cmake["TVM_SOURCE_DIR"] = str(source)
        built_tree = any((source / d / "libtvm_runtime.so").exists()
                         for d in ("build/lib", "build"))
        if not built_tree and facts["tvm_dir"]:
            cmake["TVM_PREBUILD_PATH"] = facts["tvm_dir"]  # the library: the Python's wheel
        check_headers(source, source if built_tree else facts["tvm_dir"], facts["tvm_ffi_dir"])
    else:
        prebuild = tvm_prebuild or facts["tvm_dir"]
        if not prebuild:
            raise UserError(f"{python} imports no tvm: pip install apache-tvm, or pass "
                            "--tvm-prebuild DIR / --tvm-source DIR")
        cmake["TVM_PREBUILD_PATH"] = str(Path(prebuild).resolve())
    generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
    plan = BuildPlan(recipes=[f"ext:{name}"], options={}, cmake=cmake, env={},
                     generator=generator, targets=[name])
    build_dir = src / "build"
    # Root building someone's extension: what the build writes (the library lands in the
    # package, beside the sources) stays theirs.
    with ownership.handing_over(src, ownership.owner_of(src)):
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
            if missing and not tvm_source:
                e.args = (e.args[0] + f"\n  {missing.group(1)} is a TVM compiler header: the "
                          "apache-tvm wheel ships include/tvm/runtime only; build against a "
                          "source tree's headers with --tvm-source DIR",)
            raise
        library = find_library(src, build_dir, name)
        data = describe_build(library, src, python, facts, cmake, result.toolchain,
                              result.commands)
        path = manifest.write(library, data)
    return Built(library, path, data, log)


def check_headers(source: Path, library_tvm: str | Path | None,
                  ffi_package: str | None) -> None:
    """Refuse, before compiling, headers that do not match the library and tvm-ffi used."""
    from toolkit.ext.headers import mismatches

    problems = mismatches(source, Path(library_tvm) if library_tvm else None,
                          Path(ffi_package) if ffi_package else None)
    if problems:
        raise UserError("the TVM headers and the libraries this build would use do not match:"
                        + "".join(f"\n  {p}" for p in problems)
                        + "\n  build with the Python whose apache-tvm / apache-tvm-ffi match "
                          "that tree (--python), or point --tvm-source at the matching tree")


def find_library(src: Path, build_dir: Path, name: str) -> Path:
    candidates = [p for p in (*src.glob(f"python/*/lib/lib{name}.so"),
                              *build_dir.rglob(f"lib{name}.so")) if p.is_file()]
    if not candidates:
        raise TkError(f"the build finished but produced no lib{name}.so under {src}")
    return max(candidates, key=lambda p: p.stat().st_mtime)


def describe_build(library: Path, src: Path, python: str, facts: dict[str, Any],
                   cmake: dict[str, str], toolchain: dict[str, str],
                   commands: list[str]) -> dict[str, Any]:
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
        links.append({"needed": b.needed, "path": b.path, "found_by": b.how,
                      "soname": linked.soname, "build_id": linked.build_id,
                      "sha256": linked.sha256, "package": package,
                      "version": facts.get(package) if package and owned else None})
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
                "source_dir": cmake.get("TVM_SOURCE_DIR"), "version": facts.get("apache-tvm")},
        "tvm_ffi": {"package_dir": facts.get("tvm_ffi_dir"),
                    "version": facts.get("apache-tvm-ffi"),
                    "abi": manifest.ffi_abi(facts.get("apache-tvm-ffi"))},
        "links": links,
        "globals": registered_globals(library, python),
        "built": {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds"),
                  "cmake": cmake, "toolchain": toolchain, "commands": commands},
    }


def registered_globals(library: Path, python: str = sys.executable) -> list[str]:
    """Load the library in a fresh ``python`` after import tvm; the names it added."""
    ran = run_probe("extlibs", "globals", str(library), python=python)
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
