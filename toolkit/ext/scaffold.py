"""``tk ext new NAME``: write an out-of-tree extension project from the bundled template."""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

from toolkit.errors import UserError

DATA = Path(__file__).resolve().parent.parent / "data"
# One template per kind: runtime (C++ global functions, a wheel), pass (a C++ TIR pass and a
# C++ Relax pass, their Python wrappers, a pipeline and a workload that runs them), target (a
# device: its C++ device API, its code generator, its target and pipeline). codegen is the
# target scaffold: TVM reaches a code generator only through a target kind
# (target.build.<kind>), and a target kind compiles nothing without one. Every kind also gets
# COMMON: the CMake module that picks the TVM to build against.
TEMPLATES = {"runtime": DATA / "ext_template", "pass": DATA / "ext_template_pass",
             "target": DATA / "ext_template_target", "codegen": DATA / "ext_template_target"}
COMMON = DATA / "ext_common"
PLACEHOLDER = "__NAME__"
DEPENDENCIES = '"__DEPENDENCIES__"'  # the quoted item of pyproject.toml's dependency list
RESERVED = {"tvm", "tvm_ffi", "toolkit", "test", "tests", "lib"}


def validate(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise UserError(f"extension name {name!r}: use a lowercase Python identifier, "
                        "e.g. my_ext (it names the C++ namespace, the library and the package)")
    if name in RESERVED:
        raise UserError(f"extension name {name!r} would shadow a package; pick another")
    return name


def dependency_ranges(python: str = sys.executable) -> list[str]:
    """The wheel's requirements, from the TVM ``python`` has (the one the extension will be
    built against): apache-tvm of the same minor release, apache-tvm-ffi of the same ABI (0.x:
    the same minor) and at least this patch level (the extension may use what it added). Read
    from package metadata: no tvm import."""
    from toolkit.ext.compile import target_python_facts

    facts = target_python_facts(python)
    out = []
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        version = facts.get(dist)
        if not version:
            out.append(dist)
            continue
        nums = [int(x) for x in re.findall(r"\d+", version)[:3]] + [0, 0]
        major, minor, patch = nums[:3]
        low = f"{major}.{minor}" + (f".{patch}" if dist == "apache-tvm-ffi" else "")
        high = f"{major}.{minor + 1}" if major == 0 or dist == "apache-tvm" else f"{major + 1}"
        out.append(f"{dist}>={low},<{high}")
    return out


def new(name: str, directory: str | Path | None = None, kind: str = "runtime",
        python: str = sys.executable) -> Path:
    """Create ``<directory>/<name>/`` from the template of ``kind`` (dependency ranges from
    ``python``'s TVM); refuse to touch an existing one."""
    validate(name)
    if kind not in TEMPLATES:
        raise UserError(f"extension kind {kind!r}: tk scaffolds {', '.join(TEMPLATES)}")
    template = TEMPLATES[kind]
    root = Path(directory or ".").resolve() / name
    if root.exists() and any(root.iterdir()):
        raise UserError(f"{root} already exists and is not empty; pick another --dir or name")
    for base, src in sorted((b, f) for b in (COMMON, template) for f in b.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        rel = Path(*(part.replace(PLACEHOLDER, name) for part in src.relative_to(base).parts))
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text()
        if DEPENDENCIES in text:
            text = text.replace(DEPENDENCIES, ", ".join(f'"{d}"' for d in dependency_ranges(python)))
        dst.write_text(text.replace(PLACEHOLDER, name))
    return root
