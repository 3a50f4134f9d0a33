"""The artifact store: one directory per build, keyed by plan and build-relevant tree content.

``$TK_CACHE/builds/<key>/`` (``~/.cache/tk`` by default) holds ``manifest.json``, the build
log and ``lib/`` with copies of the built libraries, so a stored build survives its build
directory being rebuilt for another commit. ``key = build_key(plan.hash, tree key)``: the
same plan on a tree whose sources, CMake files and submodules are the same is the same build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from toolkit.build.source import python_dirs
from toolkit.errors import TkError, UserError

MANIFEST = "manifest.json"


def cache_root() -> Path:
    return Path(os.environ.get("TK_CACHE") or Path.home() / ".cache" / "tk")


def builds_root() -> Path:
    return cache_root() / "builds"


def build_key(plan_hash: str, tree_key: str) -> str:
    """The store key of a plan built from a tree (``toolkit.build.source.tree_key`` for a commit)."""
    return hashlib.sha256(f"{plan_hash}:{tree_key}".encode()).hexdigest()[:16]


def entry_dir(key: str) -> Path:
    return builds_root() / key


def load(key: str, verify: bool = False) -> dict[str, Any] | None:
    """The manifest of a complete stored build, or None (absent, or its libraries are gone).

    ``verify`` (for a build about to be served) also compares each library's sha256 with the
    manifest's: a library damaged in place keeps its size, and would load and crash, or worse.
    """
    path = entry_dir(key) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text())
        arts = manifest["artifacts"]
        for art in arts:
            stored = Path(art["path"])
            if not stored.exists() or stored.stat().st_size != art["size"]:
                return None
    except (ValueError, TypeError, KeyError, OSError):
        return None  # a manifest tk did not write whole: no build
    if verify and damaged(manifest):
        return None
    return manifest


def damaged(manifest: dict[str, Any]) -> str | None:
    """The first stored library whose content is not what was stored, or None."""
    for art in manifest.get("artifacts", []):
        if sha256_file(Path(art["path"])) != art.get("sha256"):
            return str(art["path"])
    return None


def save(manifest: dict[str, Any]) -> Path:
    """Write the manifest last, atomically: a manifest present means a complete entry."""
    path = entry_dir(manifest["id"]) / MANIFEST
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def store_artifacts(key: str, files: list[Path]) -> list[dict[str, Any]]:
    """Copy built libraries into the entry's lib/; their sha256 is of the stored copy."""
    lib = entry_dir(key) / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    records = []
    for src in files:
        dst = lib / src.name
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copy2(src, tmp)
        tmp.replace(dst)
        records.append({"name": src.name, "path": str(dst), "built": str(src),
                        "size": dst.stat().st_size, "sha256": sha256_file(dst)})
    return records


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def all_builds() -> list[dict[str, Any]]:
    """Every complete stored build, newest first."""
    root = builds_root()
    found = []
    if root.is_dir():
        for entry in root.iterdir():
            manifest = load(entry.name)
            if manifest is not None:
                found.append(manifest)
    return sorted(found, key=lambda m: m.get("created", ""), reverse=True)


def find(build_id: str) -> dict[str, Any]:
    """A stored build by id or unique id prefix, its libraries verified; a user error when none
    or several match."""
    if not build_id or "/" in build_id:
        raise UserError(f"{build_id!r} is not a build id (see tk build ls)")
    found = load(build_id)
    if found is None:
        root = builds_root()
        matches = sorted(p.name for p in root.glob(f"{build_id}*")) if root.is_dir() else []
        complete = [m for m in (load(name) for name in matches) if m is not None]
        if not complete:
            raise UserError(f"no stored build {build_id!r} in {root} (see tk build ls)")
        if len(complete) > 1:
            ids = ", ".join(m["id"] for m in complete[:5])
            raise UserError(f"build id {build_id!r} is ambiguous: {ids}")
        found = complete[0]
    bad = damaged(found)
    if bad:
        raise TkError(f"stored build {found['id']} is damaged: {bad} is not the library that was "
                      f"stored (sha256 differs); rebuild it with tk build --force -C "
                      f"{found['source']['dir']}")
    return found


def env_of(manifest: dict[str, Any], source_dir: Path | str | None = None) -> dict[str, str]:
    """The variables that put a stored build in use: its libraries, its tree's Python package.

    ``source_dir`` replaces the tree recorded in the manifest (a checkout of a later commit
    whose changes are Python-only can use this build's libraries with its own Python code).
    """
    lib = str(entry_dir(manifest["id"]) / "lib")
    root = Path(source_dir) if source_dir else Path(manifest["source"]["dir"])
    python = [str(d) for d in python_dirs(root)]
    env = {"TVM_LIBRARY_PATH": lib, "LD_LIBRARY_PATH": lib}
    if python:
        env["PYTHONPATH"] = os.pathsep.join(python)
    return env


def shell_exports(env: dict[str, str]) -> str:
    """``export`` lines that prepend to path-like variables already set in the shell."""
    lines = []
    for name, value in env.items():
        if name in ("PYTHONPATH", "LD_LIBRARY_PATH"):
            lines.append(f"export {name}={shlex.quote(value)}${{{name}:+:${name}}}")
        else:
            lines.append(f"export {name}={shlex.quote(value)}")
    return "\n".join(lines)
