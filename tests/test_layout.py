"""The package layout keeps its promises: the host side never needs the TVM under test.

``toolkit.tvm_side`` is the code that runs inside the TVM under test; every other module is
host side. Host modules must import without tvm (a bisect step's TVM, a container's TVM or a
fork's may not be this process's, and a loaded libtvm cannot be unloaded), and without pandas
or docker where the chore does not need them (``tk --help`` and the build path stay fast).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "toolkit"
SIDE = "toolkit.tvm_side"
# Stdlib-only scripts run by path inside the interpreter under test; the host needs their
# paths, and the ELF reader is shared with it.
PROBES = "toolkit.tvm_side.probes"
# The only host modules that may pull in these packages, and why.
MAY_IMPORT = {
    "pandas": {"toolkit.reports", "toolkit.profile.report", "toolkit.profile.compare"},
    "docker": {"toolkit.build.image", "toolkit.build.backends.docker"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if "data" not in p.relative_to(PACKAGE).parts[:1]
                  and "workloads" not in p.parts)


HOST = [module_name(p) for p in python_modules()
        if not module_name(p).startswith(SIDE) and module_name(p) != "toolkit.__main__"]


def imports_of(path: Path) -> list[tuple[str, int]]:
    """Every module an import statement anywhere in ``path`` names (function-local too)."""
    tree = ast.parse(path.read_text())
    me = module_name(path).split(".")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = me if path.name == "__init__.py" else me[:-1]
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([base] if base else []))
            found += [(f"{base}.{a.name}", node.lineno) for a in node.names]
    return found


def test_host_modules_import_neither_tvm_nor_what_they_do_not_need():
    code = (
        "import importlib, json, sys\n"
        "name = sys.argv[1]\n"
        "importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tvm', 'tvm_ffi', 'pandas', 'docker', 'toolkit'))))\n"
    )
    problems = []
    for name in HOST:
        proc = subprocess.run([sys.executable, "-c", code, name], capture_output=True,
                              text=True, cwd=REPO)
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
        loaded = json.loads(proc.stdout)
        for mod in loaded:
            top = mod.split(".")[0]
            if top in ("tvm", "tvm_ffi"):
                problems.append(f"{name} imports {mod}")
            elif top in MAY_IMPORT and name not in MAY_IMPORT[top]:
                problems.append(f"{name} imports {top}")
            elif mod.startswith(SIDE + ".") and not mod.startswith(PROBES):
                problems.append(f"{name} imports {mod}")
    assert not sorted(set(problems)), "\n".join(sorted(set(problems)))


def test_host_code_never_reaches_into_tvm_side_even_lazily():
    """The layers run one way: cli -> tvm_side -> host chores -> base. A host module that
    imported the in-TVM side, even inside a function, would draw an arrow back up."""
    offenders = []
    for path in python_modules():
        name = module_name(path)
        if name.startswith(SIDE) or name.startswith("toolkit.cli") or name == "toolkit.__main__":
            continue
        for mod, line in imports_of(path):
            if (mod == "tvm" or mod.startswith(("tvm.", "tvm_ffi"))) and name != "toolkit.ext.loader":
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {mod}")
            if mod.startswith(SIDE) and not mod.startswith(PROBES):
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {mod}")
    assert not offenders, "\n".join(offenders)


def test_the_probes_import_nothing_of_toolkit():
    """Probes run by path in another interpreter, where toolkit may not be importable."""
    for path in (PACKAGE / "tvm_side" / "probes").glob("*.py"):
        for mod, line in imports_of(path):
            assert not mod.startswith("toolkit") or path.name == "__init__.py", \
                f"{path.name}:{line} imports {mod}"


def package_of(name: str) -> str:
    """The node a structure drawing shows: toolkit.X, or toolkit.tvm_side.X."""
    parts = name.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["tvm_side"] and len(parts) > 2 else parts[:2])


def test_no_import_circle_between_packages():
    edges: dict[str, set[str]] = {}
    for path in python_modules():
        src = package_of(module_name(path))
        for mod, _ in imports_of(path):
            if mod.startswith("toolkit.") and package_of(mod) != src:
                edges.setdefault(src, set()).add(package_of(mod))

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    return trail + [start]
                if nxt not in trail:
                    stack.append((nxt, trail + [nxt]))
        return None

    for node in sorted(edges):
        cycle = cycle_from(node)
        assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("name", ["toolkit.cli"])
def test_help_path_imports_only_click(name):
    proc = subprocess.run([sys.executable, "-c", f"import sys, {name}; print(sorted(sys.modules))"],
                          capture_output=True, text=True, cwd=REPO)
    loaded = eval(proc.stdout)  # noqa: S307 - our own repr of a list of strings
    assert not [m for m in loaded if m.split(".")[0] in ("tvm", "pandas", "docker", "git", "numpy")]
