"""__NAME__: out-of-tree TVM compiler passes in C++ (a TIR pass and a Relax pass).

Importing it puts TVM in the process first (libtvm_compiler, libtvm_runtime, libtvm_ffi), then
loads lib/lib__NAME__.so, which binds to those same copies (ld.so finds them loaded by their
sonames) and whose static initialisers register
``__NAME__.transform.CountStores`` and ``__NAME__.transform.CountCalls`` with tvm-ffi; the
wrappers in ``transform`` return them as ``tvm.transform.Pass`` objects, which run in a
``tvm.transform.Sequential`` / ``tvm.compile(..., relax_pipeline=...)`` like TVM's own, and
which ``tk dump-ir`` records like TVM's own. Nothing here imports tk.
"""

import ctypes
from pathlib import Path

import tvm  # first: the library's TVM dependencies are then the ones already loaded

LIBRARY = Path(__file__).resolve().parent / "lib" / "lib__NAME__.so"

if not LIBRARY.exists():
    raise ImportError(f"{LIBRARY} is not built: run `tk ext build {Path(__file__).parents[2]} "
                      "--tvm-source TVM_TREE`")
_HANDLE = ctypes.CDLL(str(LIBRARY), ctypes.RTLD_GLOBAL)

from . import transform  # noqa: E402  (its functions are the library's, registered above)
from .pipeline import pipeline  # noqa: E402

__all__ = ["transform", "pipeline", "tvm"]
