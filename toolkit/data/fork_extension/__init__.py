"""A fork's change, out of tree: written by `tk fork extract`, which says in fork.json beside
this file which commits of which fork it carries.

Importing it puts TVM in the process first, then loads lib/lib<name>.so when the change had
C++ (its static initialisers register the fork's global functions, and the _ffi_api modules
of tvm whose prefixes they use are bound again, as in the fork's own build), then puts the
fork's Python where the fork had it:

- each module under fork/ is importable under its name in tvm (fork/tvm/relax/transform/x.py
  is tvm.relax.transform.x), read from here;
- what the fork added to a module of tvm's (additions/tvm/relax/transform/__init__.py) runs
  in that module, as if the lines were there.

So code written against the fork runs unchanged against upstream TVM with this package
imported. Nothing here imports tk.
"""

import ctypes
import importlib
import importlib.abc
import importlib.util
import json
import sys
from pathlib import Path

import tvm  # noqa: F401 - first: the library binds to the TVM already loaded

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "lib" / f"lib{HERE.name}.so"
MODULES = HERE / "fork"
ADDITIONS = HERE / "additions"
# What tk fork extract carried: the fork's commits, whether there is C++ (a library), the
# prefixes of the global functions it registers (relax.transform.X: relax.transform).
FORK = json.loads((HERE / "fork.json").read_text())

if FORK["library"]:
    if not LIBRARY.exists():
        raise ImportError(f"{LIBRARY} is not built: run `tk ext build {HERE.parents[1]}`")
    _HANDLE = ctypes.CDLL(str(LIBRARY), ctypes.RTLD_GLOBAL)
    import tvm_ffi

    for _prefix in FORK["ffi_prefixes"]:
        try:
            _api = importlib.import_module(f"tvm.{_prefix}._ffi_api")
        except ImportError:
            continue
        tvm_ffi.init_ffi_api(_prefix, _api.__name__)


def _module_name(path, root):
    rel = path.relative_to(root).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


class _ForkModules(importlib.abc.MetaPathFinder):
    """The fork's own modules, found under their names in tvm."""

    def __init__(self):
        self.files = {_module_name(p, MODULES): p for p in MODULES.rglob("*.py")}

    def find_spec(self, name, path=None, target=None):
        file = self.files.get(name)
        if file is None:
            return None
        search = [str(file.parent)] if file.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(name, file,
                                                      submodule_search_locations=search)


_FINDER = _ForkModules()
sys.meta_path.insert(0, _FINDER)

for _path in sorted(ADDITIONS.rglob("*.py")):
    _module = importlib.import_module(_module_name(_path, ADDITIONS))
    exec(compile(_path.read_text(), str(_path), "exec"), _module.__dict__)

for _name in sorted(_FINDER.files):  # a package before its modules
    importlib.import_module(_name)
