"""Whether a rebuild imports as the build checked before it: the post-build check's shortcut
for the edit-rebuild loop.

Editing one source of a Debug compiler build and building again relinks one library; the full
check's ``import tvm`` then costs seconds (a Debug tvm-ffi resolving hundreds of object types,
one failed lookup symbolising a backtrace through a gigabyte of DWARF). What the import meets
of a build is its libraries loading, the functions and types they register, the tree's Python
code and the tvm-ffi package: the *surface* (``record.Surface``). When all of that is the same
as for the previous build of the same build directory and plan, whose import passed, the new
build's check says so and names that build instead of importing again; any difference, or any
doubt (a library that does not load here, a tvm-ffi that lists nothing), is a full check.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from toolkit.builds import store
from toolkit.builds.record import BuildRecord, PostBuildCheck, Surface
from toolkit.probes import elfread

FFI = "libtvm_ffi.so"


def registers_with_ffi(record: BuildRecord) -> bool:
    """Does any stored library link tvm-ffi (TVM >= 0.21)? Older TVMs have no registry
    that lists what a library added, so no surface."""
    for a in record.artifacts:
        if a.link is None and a.name != FFI:
            try:
                if FFI in elfread.read(a.path).needed:
                    return True
            except (OSError, elfread.NotELF):
                continue
    return False


def load_order(record: BuildRecord) -> list[str]:
    """The stored libraries but tvm-ffi's own (the package's is the one loaded), runtimes
    first: what each needs of another is then already there."""
    libs = [a for a in record.artifacts if a.link is None and a.name != FFI]
    return [a.path for a in sorted(libs, key=lambda a: ("runtime" not in a.name, a.name))]


def python_sources(env: dict[str, str]) -> str:
    """sha256 of every .py file (path and bytes) on the build's PYTHONPATH."""
    digest = hashlib.sha256()
    for top in filter(None, env.get("PYTHONPATH", "").split(os.pathsep)):
        for path in sorted(Path(top).rglob("*.py")):
            digest.update(f"{path.relative_to(top)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()


def surface(record: BuildRecord, env: dict[str, str]) -> Surface | None:
    """The build's surface, measured in its own environment; None when there is none to
    compare (no tvm-ffi registry, a library that does not load, the probe failing)."""
    if not registers_with_ffi(record):
        return None
    from toolkit.probes import path_of

    proc = subprocess.run([sys.executable, str(path_of("registry")), *load_order(record)],
                          capture_output=True, text=True, env=env, timeout=300)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not rows or not rows[-1]["ok"] or not rows[-1]["functions"]:
        return None
    row = rows[-1]
    return Surface(registry=row["digest"], functions=row["functions"], types=row["types"],
                   python_sources=python_sources(env))


def imported_before(record: BuildRecord, now: Surface) -> BuildRecord | None:
    """The newest earlier build of the same directory and plan whose check imported TVM (or
    stood on such an import) with this surface, the same libraries by name, the same tvm-ffi
    package and the same runtimes."""
    def names(r: BuildRecord) -> list[tuple[str, str | None]]:
        return sorted((a.name, a.link) for a in r.artifacts)

    earlier = [r for r in store.all_builds()
               if r.id != record.id and r.pulled is None and r.build_dir == record.build_dir
               and r.plan_hash == record.plan_hash and r.check is not None and r.check.ok
               and not r.check.load_only and r.check.surface == now
               and names(r) == names(record) and r.runtimes == record.runtimes
               and (r.python and r.python.sha256) == (record.python and record.python.sha256)]
    return max(earlier, key=lambda r: r.created, default=None)


def stands_on(earlier: BuildRecord, now: Surface, problems: list[str]) -> PostBuildCheck:
    """The check of a rebuild whose surface is ``earlier``'s: its import's findings, this
    build's own problems (provenance, runtimes), and the build the import ran for."""
    chk = earlier.check
    assert chk is not None
    return PostBuildCheck(
        ok=not problems, problems=problems, cuda=chk.cuda, tvm_file=chk.tvm_file,
        tvm_version=chk.tvm_version, libinfo=chk.libinfo, doctor=chk.doctor, surface=now,
        import_from=chk.import_from or earlier.id)
