"""``tk ext new NAME``: write an out-of-tree extension project from the bundled template."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from toolkit.errors import UserError

TEMPLATE = Path(__file__).resolve().parent.parent / "data" / "ext_template"
PLACEHOLDER = "__NAME__"
UPPER_PLACEHOLDER = "__UNAME__"  # for environment variable names
RESERVED = {"tvm", "tvm_ffi", "toolkit", "test", "tests", "lib"}


def validate(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise UserError(f"extension name {name!r}: use a lowercase Python identifier, "
                        "e.g. my_ext (it names the C++ namespace, the library and the package)")
    if name in RESERVED:
        raise UserError(f"extension name {name!r} would shadow a package; pick another")
    return name


def new(name: str, directory: str | Path | None = None) -> Path:
    """Create ``<directory>/<name>/`` from the template; refuse to touch an existing one."""
    validate(name)
    root = Path(directory or ".").resolve() / name
    if root.exists() and any(root.iterdir()):
        raise UserError(f"{root} already exists and is not empty; pick another --dir or name")
    for src in sorted(TEMPLATE.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        rel = Path(*(part.replace(PLACEHOLDER, name) for part in src.relative_to(TEMPLATE).parts))
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text().replace(UPPER_PLACEHOLDER, name.upper())
        dst.write_text(text.replace(PLACEHOLDER, name))
    return root
