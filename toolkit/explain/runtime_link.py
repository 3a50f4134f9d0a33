"""TVM's runtime library failing to link because a runtime source needs compiler symbols.

libtvm_runtime (tvm_runtime.dll/.lib) holds src/runtime only; the compiler's symbols
(``tvm::parser::SourceMap``, ``tvm::Target``, IR and passes) are in libtvm. A runtime source
that includes a compiler header (``<tvm/target/target.h>``, ``<tvm/ir/...>``) compiles, and
with GCC/Clang links as long as no compiler symbol is used out of line; on MSVC TVM_DLL marks
the header's declarations dllimport/dllexport, so the runtime object needs them and the link
of tvm_runtime fails. Which runtime folder an object comes from is read from TVM's file list
(the error-site index).
"""

from __future__ import annotations

import functools
import re
from pathlib import PurePosixPath

from toolkit.explain.refine import NOT_THIS

_OBJ = re.compile(r"(?P<obj>\w+)\.(?:obj|o) : error LNK\d+")


@functools.lru_cache(maxsize=1)
def _runtime_folders() -> dict[str, set[str]]:
    """A runtime source's stem -> the folders of TVM's file list that hold it (once a process)."""
    from toolkit.explain.history import DATA, sites

    folders: dict[str, set[str]] = {}
    for f in sites(DATA).by_file:
        if "runtime" in f:
            path = PurePosixPath(f)
            folders.setdefault(path.stem, set()).add(str(path.parent))
    return folders


@functools.lru_cache(maxsize=2)
def _objects(text: str) -> frozenset[str]:
    """The objects a log's MSVC link errors name: read once per log, not once per error."""
    return frozenset(m.group("obj") for m in _OBJ.finditer(text))


def compiler_symbol_in_runtime(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``vulkan_instance.obj : error LNK2001: unresolved external symbol ... tvm::parser::...``
    while tvm_runtime links."""
    if "tvm_runtime" not in text:
        return NOT_THIS
    by_stem = _runtime_folders()
    folders = sorted({folder for stem in _objects(text) for folder in by_stem.get(stem, ())})
    if not folders:
        return NOT_THIS
    # src/runtime/vulkan (older trees) or src/backend/vulkan/runtime: the backend's name
    backend = [p for p in PurePosixPath(folders[-1]).parts if p not in ("src", "runtime",
                                                                         "backend")][-1:]
    backend = backend[0] if backend else "TVM"
    sym = groups.get("sym", "")
    return (f"tvm_runtime's objects from {' / '.join(folders)} (the {backend} runtime) need "
            f"{sym}, a compiler symbol that lives in libtvm, not in the runtime library: a "
            f"{backend} runtime source of this tree includes a compiler header (such as "
            f"<tvm/target/target.h> or <tvm/ir/...>); with MSVC, TVM_DLL turns that header's "
            f"declarations into imports the runtime must resolve, so GCC builds of the same "
            f"tree may link.",
            f"update TVM if a newer tree no longer includes it there, or remove the compiler header "
            f"from {folders[-1]} (git grep -n '#include <tvm/\\(target\\|ir\\|parser\\)' "
            f"{folders[-1]})")


_DLL = re.compile(r"(?:Creating library \S*?(?P<lib>\w+)\.lib|(?P<dll>\w+)\.dll : fatal error "
                  r"LNK1120)")


def not_exported(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``graph_runtime.obj : error LNK2019: unresolved external symbol ... dmlc::Registry<...>``
    while a DLL other than TVM's runtime links against TVM's."""
    names = [m.group("lib") or m.group("dll") for m in _DLL.finditer(text)]
    target = names[0] if names else ""
    if target == "tvm_runtime":
        return NOT_THIS  # the runtime's own link: compiler-symbol-in-runtime's case
    sym = groups.get("sym", "")
    whose = f"{target}.dll" if target else "the DLL being linked"
    return (f"{whose} needs {sym} from TVM's DLL; where TVM's sources define it, the DLL does "
            f"not export it: on Windows a DLL exports only what is marked "
            f"__declspec(dllexport) (TVM_DLL in TVM's headers), while Linux shared libraries "
            f"export every symbol, so the same code links with GCC. A class or template member "
            f"without TVM_DLL (a registry's static Get, a library TVM links statically such as "
            f"dmlc-core) stays private to tvm.dll.",
            "export it: mark its declaration TVM_DLL (or reach it through a function TVM "
            "exports), or build the two into one library; a newer TVM may export it already")
