"""__NAME__: an out-of-tree TVM target, a "C-source accelerator" whose memory is host memory.

Importing it puts TVM in the process first (libtvm_runtime and libtvm_ffi mapped
RTLD_GLOBAL), then loads lib/lib__NAME__.so, whose static initialisers register the device
API (``device_api.ext_dev``); then registers the code generator (``target.build.ext_dev``,
codegen.py), the target ``"__NAME__"`` and its TIR pipeline (target.py). After that:

    ex = tvm.compile(mod, target=__NAME__.target(), tir_pipeline="__NAME__")
    tk run builtin:mlp --ext . --target __NAME__ --check

Nothing here needs tk.
"""

import ctypes
from pathlib import Path

import tvm  # first: maps libtvm_runtime and libtvm_ffi RTLD_GLOBAL
import tvm_ffi

LIBRARY = Path(__file__).resolve().parent / "lib" / "lib__NAME__.so"

if not LIBRARY.exists():
    raise ImportError(f"{LIBRARY} is not built: run `tk ext build {Path(__file__).parents[2]}`")
_HANDLE = ctypes.CDLL(str(LIBRARY), ctypes.RTLD_GLOBAL)

device_stats = tvm_ffi.get_global_func("__NAME__.device_stats")

from . import codegen, target  # noqa: E402  (need tvm, loaded above)

target.register()
device = tvm.device("ext_dev", 0)

__all__ = ["codegen", "device", "device_stats", "target", "tvm"]
