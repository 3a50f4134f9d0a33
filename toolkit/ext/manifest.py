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


def path_for(library: str | Path) -> Path:
    """``libfoo.so`` -> ``libfoo.so.tk.json`` beside it."""
    lib = Path(library)
    return lib.with_name(lib.name + SUFFIX)


def read(library: str | Path) -> dict[str, Any] | None:
    """The manifest beside ``library``, or None when it has none."""
    path = path_for(library)
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if data.get("schema") != SCHEMA:
        return None
    return data


def write(library: str | Path, data: dict[str, Any]) -> Path:
    path = path_for(library)
    path.write_text(json.dumps({"schema": SCHEMA, **data}, indent=2, sort_keys=True) + "\n")
    return path


def links(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The TVM-related libraries the extension was linked against, with their identity."""
    return list(data.get("links", []))
