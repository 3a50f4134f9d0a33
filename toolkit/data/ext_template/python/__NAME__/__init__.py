"""__NAME__: an out-of-tree TVM extension.

Importing it puts TVM in the process first (libtvm_runtime and libtvm_ffi mapped
RTLD_GLOBAL), then loads lib/lib__NAME__.so, whose static initialisers register its global
functions with tvm-ffi. Nothing here needs tk: the package ships as a wheel beside the
apache-tvm and apache-tvm-ffi wheels. Before shipping a build, `tk ext check` says whether it
would load into a given Python's TVM.
"""

import ctypes
from pathlib import Path

import tvm  # first: maps libtvm_runtime and libtvm_ffi RTLD_GLOBAL
import tvm_ffi

LIBRARY = Path(__file__).resolve().parent / "lib" / "lib__NAME__.so"

if not LIBRARY.exists():
    raise ImportError(f"{LIBRARY} is not built: run `tk ext build {Path(__file__).parents[2]}`")
_HANDLE = ctypes.CDLL(str(LIBRARY), ctypes.RTLD_GLOBAL)

add_one = tvm_ffi.get_global_func("__NAME__.add_one")
greet = tvm_ffi.get_global_func("__NAME__.greet")
add_inplace = tvm_ffi.get_global_func("__NAME__.add_inplace")
scratch_sum = tvm_ffi.get_global_func("__NAME__.scratch_sum")

__all__ = ["add_one", "greet", "add_inplace", "scratch_sum", "tvm"]
