"""The manifest ``tk ext build`` writes beside an extension library.

It records what the library was built against (the TVM and tvm-ffi libraries it links:
path, version, build id, sha256) and the global functions it registers, so that a loader
can refuse a library built for another TVM before dlopen-ing it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = "tk-ext-manifest/1"
SUFFIX = ".tk.json"


def ffi_abi(version: str | None) -> str | None:
    """The tvm-ffi ABI a version promises: 'major.minor' while major is 0 (a 0.x minor
    release may change the C ABI and object layouts), else the major: '0.1.15.post2' -> '0.1'."""
    if not version:
        return None
    parts = version.split(".")
    if not parts[0].isdigit():
        return None
    return ".".join(parts[:2]) if parts[0] == "0" and len(parts) > 1 else parts[0]


def path_for(library: str | Path) -> Path:
    """``libfoo.so`` -> ``libfoo.so.tk.json`` beside it."""
    lib = Path(library)
    return lib.with_name(lib.name + SUFFIX)


def read(library: str | Path) -> dict[str, Any] | None:
    """The manifest beside ``library``, or None when it has none; a user error when one is
    there but damaged (a loader must not trust half of one)."""
    from toolkit.errors import UserError

    path = path_for(library)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: the extension's manifest is corrupt ({type(e).__name__}: "
                        f"{e}); rebuild the extension with tk ext build, or delete it") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None
    problem = shape_problem(data)
    if problem:
        raise UserError(f"{path}: the extension's manifest is corrupt ({problem}); rebuild the "
                        "extension with tk ext build, or delete it")
    return data


def shape_problem(data: dict[str, Any]) -> str | None:
    """What in a manifest is not what ``tk ext build`` writes, or None."""
    for key in ("tvm", "tvm_ffi", "built"):
        if not isinstance(data.get(key, {}), dict):
            return f"'{key}' is not an object"
    for key in ("sha256", "build_id"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"'{key}' is not a string"
    if not isinstance(data.get("globals", []), list):
        return "'globals' is not a list"
    links = data.get("links", [])
    if not isinstance(links, list) or not all(isinstance(x, dict) for x in links):
        return "'links' is not a list of objects"
    for link in links:
        if not isinstance(link.get("path"), str):
            return "a link without a 'path'"
        for key in ("build_id", "sha256", "soname", "version", "package", "needed"):
            if link.get(key) is not None and not isinstance(link[key], str):
                return f"a link's '{key}' is not a string"
    return None


def write(library: str | Path, data: dict[str, Any]) -> Path:
    path = path_for(library)
    path.write_text(json.dumps({"schema": SCHEMA, **data}, indent=2, sort_keys=True) + "\n")
    return path


def links(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The TVM-related libraries the extension was linked against, with their identity."""
    return list(data.get("links", []))
