"""``tk ext new NAME``: write an out-of-tree extension project from the bundled template."""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path
from typing import Any

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
# The name is the extension's C++ namespace too: a keyword (C++20's included) does not
# compile there, nor a name GCC and Clang predefine as a macro in their GNU modes (CMake's
# default), nor std.
CXX_RESERVED = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    "linux", "unix", "i386", "errno", "std",
}


def validate(name: str) -> str:
    """Refuse, before anything is written, a name the project could not build or import with."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise UserError(f"extension name {name!r}: use a lowercase Python identifier, "
                        "e.g. my_ext (it names the C++ namespace, the library and the package)")
    if name in RESERVED:
        raise UserError(f"extension name {name!r} would shadow a package; pick another")
    if name in CXX_RESERVED:
        raise UserError(f"extension name {name!r} is a C++ keyword (or a name C++ compilers "
                        "predefine), and it names the extension's C++ namespace; pick another")
    return name


def refuse_shadowing(name: str, python: str, facts: dict[str, Any]) -> None:
    """The extension's package would hide a module ``python`` imports (numpy, json) from
    every process that puts the project on its path, tvm's imports included."""
    origin = (facts.get("modules") or {}).get(name)
    if origin:
        where = " (built in)" if origin == "built in" else f" from {origin}"
        raise UserError(f"extension name {name!r} would shadow the module {name} that {python} "
                        f"imports{where}; pick another")


def dependency_ranges(facts: dict[str, Any]) -> list[str]:
    """The wheel's requirements, from the TVM the target Python has (``facts`` of
    ``target_python_facts``: the one the extension will be built against): apache-tvm of the
    same minor release, apache-tvm-ffi of the same ABI (0.x: the same minor) and at least this
    patch level (the extension may use what it added). Read from package metadata: no tvm
    import."""
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
    from toolkit.ext.compile import target_python_facts

    validate(name)
    if kind not in TEMPLATES:
        raise UserError(f"extension kind {kind!r}: tk scaffolds {', '.join(TEMPLATES)}")
    facts = target_python_facts(python, name)
    refuse_shadowing(name, python, facts)
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
            text = text.replace(DEPENDENCIES, ", ".join(f'"{d}"' for d in dependency_ranges(facts)))
        dst.write_text(text.replace(PLACEHOLDER, name))
    return root
