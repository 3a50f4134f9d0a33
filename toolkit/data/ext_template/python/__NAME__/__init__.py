"""__NAME__: an out-of-tree TVM extension.

Importing it puts TVM in the process first, then loads lib/lib__NAME__.so through tk's
loader, which refuses (instead of crashing) when the library was built against another
TVM / tvm-ffi than the one this process maps. Set __UNAME___NO_TK=1 to load it with a bare
ctypes.CDLL where tk is not installed.
"""

import ctypes
import os
from pathlib import Path

import tvm  # first: maps libtvm_runtime and libtvm_ffi RTLD_GLOBAL
import tvm_ffi

LIBRARY = Path(__file__).resolve().parent / "lib" / "lib__NAME__.so"


def _load():
    if not LIBRARY.exists():
        raise ImportError(f"{LIBRARY} is not built: run `tk ext build {Path(__file__).parents[2]}`")
    if os.environ.get("__UNAME___NO_TK"):
        return ctypes.CDLL(str(LIBRARY), ctypes.RTLD_GLOBAL)
    from toolkit.ext.loader import load_extension

    return load_extension(LIBRARY)


_EXTENSION = _load()

add_one = tvm_ffi.get_global_func("__NAME__.add_one")
greet = tvm_ffi.get_global_func("__NAME__.greet")
add_inplace = tvm_ffi.get_global_func("__NAME__.add_inplace")
scratch_sum = tvm_ffi.get_global_func("__NAME__.scratch_sum")

from . import passes  # noqa: E402  (needs tvm, loaded above)

__all__ = ["add_one", "greet", "add_inplace", "scratch_sum", "passes", "tvm"]
