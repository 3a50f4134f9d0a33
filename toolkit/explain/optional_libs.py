"""TVM's optional libraries: a symbol or function of one is missing because its USE_X was off.

TVM links NNPACK, cuBLAS, cuDNN, a BLAS, FlashInfer ... only when its CMake option is ON; a
library built with the option off (or with it on but the library not found or not linked)
misses the library's symbols at load, or the compiled model's calls into it at run time.
Which option builds which library in, and in which releases, comes from TVM's history
(toolkit/data/explain/optional_libs.json, by scripts/optional_libs.py).
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

# The C API prefix of each library TVM links through an option (the libraries' own headers:
# nnpack.h's nnp_*, cublas_api.h's cublas*, cudnn.h's cudnn*, ...), mapped to the name
# ``find_library`` or the contrib folder gives it in TVM's CMake.
SYMBOL_PREFIXES = (
    ("nnp_", "nnpack"), ("cublasLt", "cublas"), ("cublas", "cublas"), ("cudnn", "cudnn"),
    ("miopen", "miopen"), ("rocblas_", "rocblas"), ("hipblas", "hipblas"), ("cblas_", "cblas"),
    ("dnnl_", "dnnl"), ("mkl_", "mkl_rt"), ("curand", "curand"), ("cusparse", "cusparse"),
    ("thrust", "thrust"), ("Z3_", "z3"), ("ANeuralNetworks", "nnapi"),
)


def _options() -> dict[str, dict[str, object]]:
    return table("optional_libs")["options"]


def option_for(library: str) -> tuple[str, dict[str, object]] | None:
    """The USE_X option that links or builds ``library`` in (a library, contrib folder or
    the option's own name, case-insensitive)."""
    name = library.lower()
    options = _options()
    opt = f"USE_{name.upper()}"
    if opt in options:
        return opt, options[opt]
    return next(((opt, entry) for opt, entry in options.items()
                 if name in entry["libraries"] or name in entry["contrib"]), None)  # type: ignore[operator]


def _history(opt: str, entry: dict[str, object]) -> str:
    last = entry["last"]
    # v0.6.0 is the oldest release the table reads: the option may be older
    first = "v0.6.0 or earlier" if entry["first"] == "v0.6.0" else entry["first"]
    span = f"{first} to main" if last == "main" else f"{first} to {last}"
    where = f", {entry['module']}" if entry.get("module") else ""
    return (f"{opt} (TVM's CMake option{where}; default {entry['default']}; declared in "
            f"{span}, from TVM's history)")


def undefined_symbol(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``libtvm.so: undefined symbol: nnp_convolution_output``: a library TVM links only with
    its option on was compiled in (the option was ON) but not linked."""
    from toolkit.explain.toolchain import CUDA_SINCE

    sym, lib = groups.get("sym", ""), (groups.get("lib") or "").rsplit("/", 1)[-1]
    if re.sub(r"_v\d+$", "", sym) in CUDA_SINCE:
        return NOT_THIS  # a CUDA function of a known first version: an older CUDA (undefined-symbol)
    library = next((name for prefix, name in SYMBOL_PREFIXES if sym.startswith(prefix)), None)
    found = option_for(library) if library else None
    if found is None:
        return NOT_THIS
    opt, entry = found
    return (f"{lib or 'the library'} needs {sym}, a function of {library}, an optional library "
            f"TVM builds in only with {_history(opt, entry)}. The code that calls it was "
            f"compiled in (the option was on), but lib{library} was not linked into "
            f"{lib or 'it'} or is not on the loader path: CMake did not find it, or that "
            f"release's CMake module did not add it to the link.",
            f"check the link: ldd {lib or 'LIB.so'} | grep {library}, and CMake's output for "
            f"{library}; point CMake at it (set {opt} and the library's path), or build with {opt}=OFF if "
            f"it is not needed; if the module forgets it, use a newer TVM whose module links it")


def missing_function(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``Cannot find PackedFunc flashinfer.single_prefill``: the model was compiled to call an
    optional library's kernels, and the runtime was built without that library's option."""
    name = groups.get("name", "")
    parts = name.split(".")
    head = parts[2] if parts[:2] == ["tvm", "contrib"] and len(parts) > 2 else parts[0]
    found = option_for(head) if len(parts) > 1 else None
    if found is None:
        return NOT_THIS
    opt, entry = found
    return (f"the compiled model calls {name}, a function of {head}, which TVM registers only "
            f"when built with {_history(opt, entry)}: the runtime in use was built without it "
            f"(the model was compiled to use {head}; the runtime lacks it).",
            f"rebuild the TVM runtime with set({opt} ON) (and what {head} needs, e.g. the CUDA "
            f"architectures), or compile the model without {head} for this target")
