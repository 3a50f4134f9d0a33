"""The package layout keeps its promises (ARCHITECTURE.md says why; this test is the rule).

Rooms: the bottom (``toolkit/*.py`` and ``toolkit/probes``), the compile stack
(``toolkit.stack``), one folder per chore (``toolkit.builds``, ``toolkit.dumpir``, ...), each
chore's in-TVM half (``toolkit.<chore>.in_tvm``), and the CLI. Imports run down the layers
only, never up and never sideways; no circle, between rooms or between modules.

- Host modules (every chore outside its ``in_tvm``) import neither tvm nor the stack nor any
  ``in_tvm`` package, even inside a function: the TVM under test may not be this process's,
  and a loaded libtvm cannot be unloaded.
- ``in_tvm`` code imports only the stack, the bottom and its own chore's plain modules - never
  pandas, docker, git or another chore's host half - so the servers tk starts inside a build's
  environment load only what they need.
- Probes import nothing of toolkit: they run by path in another interpreter.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "toolkit"
BOTTOM = ("toolkit", "toolkit.probes")
STACK = "toolkit.stack"
CLI = "toolkit.cli"
IN_TVM = "in_tvm"
# Lowest first. A room imports rooms of lower layers only.
LAYERS = [
    {"toolkit.probes"},
    {"toolkit"},
    {"toolkit.stack", "toolkit.explain"},
    {"toolkit.doctor", "toolkit.dumpir", "toolkit.profile"},
    {"toolkit.trace", "toolkit.builds"},
    {"toolkit.ext"},
    {"toolkit.bisect"},
    {"toolkit.fork"},
    {"toolkit.bisect.in_tvm", "toolkit.dumpir.in_tvm", "toolkit.profile.in_tvm",
     "toolkit.trace.in_tvm"},
    {"toolkit.cli"},
]
# The only host modules that may pull in these packages, and why: reports are DataFrames
# inside; the container backend and its images speak to the Docker engine.
MAY_IMPORT = {
    "pandas": {"toolkit.reports", "toolkit.profile.report", "toolkit.profile.compare"},
    "docker": {"toolkit.builds.image", "toolkit.builds.backends.docker"},
}
# Run as scripts, not imported by the host: ``python -m toolkit``, and the probes (run by path
# inside the interpreter under test, where they import its tvm).
SCRIPTS = {"toolkit.__main__"} | {f"toolkit.probes.{p.stem}" for p in (PACKAGE / "probes").glob("*.py")
                                  if p.stem != "__init__"}
# The loader puts extension libraries into this process's TVM: importing tvm is its job.
LOADS_TVM = {"toolkit.ext.loader"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_modules() -> list[Path]:
    """Every module of the package (no folder skipped), but the extension templates."""
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if "data" not in p.relative_to(PACKAGE).parts[:1])


MODULES = {module_name(p): p for p in python_modules()}


def room_of(name: str) -> str:
    """The room a module lives in: the bottom (``toolkit``), a package of toolkit, or a
    chore's ``in_tvm`` half."""
    if name == "toolkit.__main__":
        return CLI
    parts = name.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not (PACKAGE / parts[1]).is_dir()):
        return "toolkit"
    if len(parts) > 2 and parts[2] == IN_TVM:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def layer_of(room: str) -> int:
    return next(i for i, rooms in enumerate(LAYERS) if room in rooms)


def imports_of(path: Path) -> list[tuple[str, int]]:
    """Every module an import statement anywhere in ``path`` names (function-local too),
    resolved to the module (``from toolkit import stack`` names ``toolkit.stack``)."""
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
            for a in node.names:
                full = f"{base}.{a.name}"
                found.append((full if full in MODULES else base, node.lineno))
    return found


def toolkit_imports() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of a toolkit module by a toolkit module."""
    return [(name, mod, line) for name, path in MODULES.items()
            for mod, line in imports_of(path) if mod.startswith("toolkit") and mod != name]


def test_every_room_has_a_layer():
    assert {room_of(n) for n in MODULES} <= set().union(*LAYERS), \
        "a new package needs its place in LAYERS (and in ARCHITECTURE.md)"


def test_imports_run_down_the_layers_only():
    """No import runs up or sideways: a room imports only rooms of lower layers."""
    wrong = []
    for src, dst, line in toolkit_imports():
        a, b = room_of(src), room_of(dst)
        if a != b and layer_of(b) >= layer_of(a):
            wrong.append(f"{MODULES[src].relative_to(REPO)}:{line} imports {dst} ({a} -> {b})")
    assert not wrong, "\n".join(wrong)


def test_host_code_never_reaches_into_tvm_or_the_stack_even_lazily():
    offenders = []
    for src, path in MODULES.items():
        room = room_of(src)
        if room in (STACK, CLI) or room.endswith(IN_TVM) or src in SCRIPTS:
            continue
        for mod, line in imports_of(path):
            if (mod == "tvm" or mod.startswith(("tvm.", "tvm_ffi"))) and src not in LOADS_TVM:
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {mod}")
            if mod.startswith("toolkit") and (room_of(mod) == STACK or room_of(mod).endswith(IN_TVM)):
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {mod}")
    assert not offenders, "\n".join(offenders)


def test_in_tvm_code_imports_the_stack_the_bottom_and_its_own_chore_only():
    offenders = []
    for src, path in MODULES.items():
        room = room_of(src)
        if not room.endswith(IN_TVM):
            continue
        chore = room.rsplit(".", 1)[0]
        allowed = {*BOTTOM, STACK, chore, room}
        for mod, line in imports_of(path):
            top = mod.split(".")[0]
            if top in ("pandas", "docker", "git") or (
                    mod.startswith("toolkit") and room_of(mod) not in allowed):
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {mod}")
    assert not offenders, "\n".join(offenders)


def test_no_import_circle_between_rooms_or_modules():
    for of in (room_of, lambda name: name):
        edges: dict[str, set[str]] = {}
        for src, dst, _ in toolkit_imports():
            if of(src) != of(dst):
                edges.setdefault(of(src), set()).add(of(dst))

        def cycle_from(start: str) -> list[str] | None:
            stack = [(start, [start])]
            seen = set()
            while stack:
                node, trail = stack.pop()
                for nxt in sorted(edges.get(node, ())):  # noqa: B023 - this loop's edges
                    if nxt == start:
                        return trail + [start]
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, trail + [nxt]))
            return None

        for node in sorted(edges):
            cycle = cycle_from(node)
            assert cycle is None, " -> ".join(cycle)


LOADED = (
    "import importlib, json, sys\n"
    "importlib.import_module(sys.argv[1])\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
    "('tvm', 'tvm_ffi', 'pandas', 'docker', 'git', 'toolkit'))))\n"
)


def loaded_by(name: str) -> list[str]:
    """What importing ``name`` loads, in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", LOADED, name], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, f"{name}: {proc.stderr}"
    return json.loads(proc.stdout)


HOST = [n for n in MODULES if room_of(n) not in (STACK, CLI) and not room_of(n).endswith(IN_TVM)
        and n not in SCRIPTS]


def test_host_modules_load_neither_tvm_nor_what_they_do_not_need():
    problems = []
    for name in HOST:
        for mod in loaded_by(name):
            top = mod.split(".")[0]
            if top in ("tvm", "tvm_ffi"):
                problems.append(f"{name} loads {mod}")
            elif top in MAY_IMPORT and name not in MAY_IMPORT[top]:
                problems.append(f"{name} loads {top}")
    assert not sorted(set(problems)), "\n".join(sorted(set(problems)))


# The servers tk starts inside a build's environment (``python -m ...``), and what each may
# load of toolkit besides the bottom and the stack.
SERVERS = {
    "toolkit.bisect.in_tvm.passes": {"toolkit.bisect", "toolkit.bisect.protocol",
                                     "toolkit.bisect.in_tvm", "toolkit.bisect.in_tvm.passes"},
    "toolkit.bisect.in_tvm.functions": {"toolkit.bisect", "toolkit.bisect.protocol",
                                        "toolkit.bisect.in_tvm",
                                        "toolkit.bisect.in_tvm.functions"},
}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_a_server_in_a_builds_environment_loads_only_what_it_needs(server):
    loaded = [m for m in loaded_by(server) if m.startswith("toolkit")]
    extra = [m for m in loaded if room_of(m) not in (*BOTTOM, STACK) and m not in SERVERS[server]]
    assert not extra, f"{server} loads {extra}"
    assert not [m for m in loaded_by(server) if m.split(".")[0] in ("pandas", "docker", "git")]
    # The count, for the record: the bottom and the stack are what the work needs.
    assert len(loaded) <= 20, loaded


def test_the_probes_import_nothing_of_toolkit():
    """Probes run by path in another interpreter, where toolkit may not be importable."""
    for path in (PACKAGE / "probes").glob("*.py"):
        for mod, line in imports_of(path):
            assert not mod.startswith("toolkit") or path.name == "__init__.py", \
                f"{path.name}:{line} imports {mod}"


def test_no_source_folder_is_named_like_build_output():
    assert not [p for p in PACKAGE.rglob("*") if p.is_dir() and p.name in ("build", "dist")]


def test_the_boundary_test_catches_a_violation(tmp_path):
    """A host module that reaches into the stack, planted in a copy of the package, fails the
    rules above (the test would not notice a wrong rule otherwise)."""
    copy = tmp_path / "repo"
    shutil.copytree(PACKAGE, copy / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "toolkit" / "dumpir" / "sneaky.py").write_text(
        "def f():\n    from toolkit.stack import workload\n    return workload\n")
    (copy / "tests").mkdir()
    (copy / "tests" / "test_layout.py").write_text(Path(__file__).read_text())
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-k", "reaches_into or down_the_layers",
                           str(copy / "tests" / "test_layout.py")],
                          capture_output=True, text=True, cwd=copy)
    assert proc.returncode == 1, proc.stdout
    assert "dumpir/sneaky.py:2 imports toolkit.stack.workload" in proc.stdout


def test_help_path_imports_only_click():
    proc = subprocess.run([sys.executable, "-c", "import sys, toolkit.cli; print(sorted(sys.modules))"],
                          capture_output=True, text=True, cwd=REPO)
    loaded = eval(proc.stdout)  # noqa: S307 - our own repr of a list of strings
    assert not [m for m in loaded if m.split(".")[0] in ("tvm", "pandas", "docker", "git", "numpy")]
