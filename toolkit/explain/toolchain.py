"""Toolchains, vendored code and packaging: what a build or load failure says about them.

Rules (:mod:`toolkit.explain.rules`) match the wording of compilers, linkers, the loader, LLVM,
CUDA, ROCm, Vulkan, pip and importlib; the tables here turn what they matched into a cause:

- ``DEPENDENCIES``: a compile error in a TVM source or header, by the path and the names in
  it, is an API change of one dependency (LLVM, CUDA, ROCm, Vulkan, OpenCL, Metal) against
  the TVM tree, or a vendored submodule (dlpack, dmlc-core, tvm-ffi, cutlass, ...) that is
  older or newer than the tree expects;
- ``LLVM_TARGETS``: an LLVM triple's architecture and the LLVM target that compiles for it;
- ``SYMBOLS``: what a symbol a loader or linker misses belongs to;
- ``TVM_LIBRARIES``, ``LIBRARY_OWNERS``: which TVM generation ships which of its libraries,
  and which GPU stack or toolkit another library belongs to (a library the loader misses);
- ``BUILD_GATED``: Python modules TVM imports only when the library was built with an option;
- ``PYTHON_DEPENDENCIES``: the Python packages TVM imports (a missing attribute of one is a
  version of it that TVM was not written for);
- ``DISTRIBUTIONS``, ``TOOLS``, ``GLIBCXX``, ``VK_RESULTS``: pip distributions, programs TVM
  runs, libstdc++ symbol versions and Vulkan result codes.

Every function here takes a rule's matched groups and the text near the match and returns
``(cause, fix)``, or None to keep the rule's own words.
"""

from __future__ import annotations

import posixpath
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

if TYPE_CHECKING:  # the history loads on first use, not with the rules
    from toolkit.explain.history import ApiHistory

# (name, what it is, path or name patterns, the fix) - the first whose pattern is in the
# error's file path or message names the dependency. Vendored code comes first: a header of
# a stale submodule fails inside TVM's own files.
DEPENDENCIES: list[tuple[str, str, re.Pattern[str], str]] = [
    ("dlpack", "vendored", re.compile(r"\bkDL\w+|\bDL(?:Tensor|Device|DataType|Managed\w*|PackVersion"
                                      r"|DeviceType)\b|dlpack"),
     "git submodule update --init --recursive (3rdparty/dlpack, and 3rdparty/tvm-ffi's own "
     "3rdparty/dlpack), then rebuild from a clean build directory"),
    ("dmlc-core", "vendored", re.compile(r"\bdmlc::|dmlc-core|dmlc/"),
     "git submodule update --init --recursive (3rdparty/dmlc-core), then rebuild"),
    ("tvm-ffi", "vendored", re.compile(r"\bTVMFFI\w+|tvm::ffi::|3rdparty/tvm-ffi|tvm/ffi/"),
     "git submodule update --init --recursive (3rdparty/tvm-ffi must be the commit the tree "
     "records), then rebuild; a pip-installed apache-tvm-ffi must match it too"),
    ("cutlass", "vendored", re.compile(r"\bcutlass::|3rdparty/cutlass|cute::"),
     "git submodule update --init --recursive (3rdparty/cutlass), then rebuild"),
    ("libbacktrace", "vendored", re.compile(r"\bbacktrace_\w+|libbacktrace"),
     "git submodule update --init --recursive (libbacktrace), or build with "
     "USE_LIBBACKTRACE OFF"),
    ("3rdparty", "vendored", re.compile(r"3rdparty/[\w.-]+/"),
     "git submodule update --init --recursive, then rebuild from a clean build directory"),
    ("LLVM", "toolchain", re.compile(r"src/target/llvm/|\bllvm::|llvm[-/]\d*/?include|/llvm/"),
     "use a TVM release that supports this LLVM (update TVM: newer TVM follows LLVM's API), or "
     "build with an older LLVM: set(USE_LLVM /path/to/older/llvm-config)"),
    # TensorRT 10 removed what TensorRT 8 deprecated (addConvolution, IFullyConnectedLayer,
    # IBuilder::setMaxBatchSize), which TVM's TensorRT runtime called until apache/tvm#19789
    ("TensorRT", "toolchain", re.compile(r"src/runtime/contrib/tensorrt|\bnvinfer1::|NvInfer"),
     "build against TensorRT 8 (USE_TENSORRT_RUNTIME pointing at it) for a TVM before v0.25.0: "
     "TensorRT 10 removed the APIs TensorRT 8 deprecated (addConvolution, "
     "IFullyConnectedLayer, IBuilder::setMaxBatchSize) that its TensorRT runtime calls; or use "
     "TVM v0.25.0 or newer, whose TensorRT runtime is written for TensorRT 10 "
     "(apache/tvm#19789)"),
    ("CUDA", "toolchain", re.compile(r"src/runtime/(?:cuda|contrib/(?:cublas|cudnn|thrust|"
                                     r"cutlass|nvshmem|curand))|codegen_cuda|/cuda[-\d.]*/|"
                                     r"\bcu(?:da|blas|dnn|rand|Launch)\w*\b|nvrtc"),
     "use a CUDA toolkit this TVM supports (a newer TVM for a newer CUDA, or an older CUDA), "
     "and set USE_CUDA to its path"),
    ("ROCm", "toolchain", re.compile(r"src/runtime/(?:rocm|contrib/(?:miopen|rocblas|hipblas))|"
                                     r"codegen_amdgpu|/rocm[-\d.]*/|\bhip\w+|\brocblas"),
     "use the ROCm version this TVM supports (or a newer TVM), and set USE_ROCM to its path"),
    ("Vulkan / SPIR-V", "toolchain", re.compile(r"src/runtime/vulkan|src/target/spirv|\bVk\w+|"
                                                r"\bvk[A-Z]\w*|spirv|SPIRV"),
     "install a Vulkan SDK (headers, SPIRV-Tools) of the version this TVM supports and set "
     "USE_VULKAN to it"),
    ("OpenCL", "toolchain", re.compile(r"src/runtime/opencl|\bcl[A-Z]\w+|CL/cl"),
     "use the OpenCL headers from 3rdparty/OpenCL-Headers (git submodule update --init) or "
     "your SDK's, matching USE_OPENCL"),
    ("Metal", "toolchain", re.compile(r"src/runtime/metal|\bMTL\w+"),
     "build on macOS with the Xcode SDK this TVM supports"),
]

# An LLVM triple's architecture -> the LLVM target that must be built (LLVM_TARGETS_TO_BUILD).
LLVM_TARGETS = {
    "wasm32": "WebAssembly", "wasm64": "WebAssembly", "nvptx": "NVPTX", "nvptx64": "NVPTX",
    "amdgcn": "AMDGPU", "r600": "AMDGPU", "aarch64": "AArch64", "arm64": "AArch64",
    "aarch64_be": "AArch64", "arm": "ARM", "armv7": "ARM", "armv7a": "ARM", "thumb": "ARM",
    "thumbv7": "ARM", "riscv32": "RISCV", "riscv64": "RISCV", "x86_64": "X86", "i386": "X86",
    "i686": "X86", "hexagon": "Hexagon", "spirv": "SPIRV", "spirv32": "SPIRV",
    "spirv64": "SPIRV", "powerpc64le": "PowerPC", "powerpc64": "PowerPC", "ppc64le": "PowerPC",
    "mips": "Mips", "mipsel": "Mips", "xtensa": "Xtensa", "loongarch64": "LoongArch",
    "s390x": "SystemZ",
}

# What a missing symbol belongs to: (pattern on the symbol, its owner, the fix).
SYMBOLS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"_ZN\w*4llvm|\bllvm::|LLVM\w*_\d"), "LLVM",
     "the library was built against another LLVM than the one it now meets (another "
     "llvm-config at build time, or a second LLVM loaded first): rebuild it against the LLVM "
     "in use, or link LLVM statically into libtvm (USE_LLVM=\"llvm-config --link-static\", "
     "HIDE_PRIVATE_SYMBOLS=ON)"),
    (re.compile(r"_ZN\w*3c10|_ZN\w*2at\d|_ZN\w*5torch|\btorch::|\bat::|\bc10::"), "PyTorch",
     "the extension was built against another PyTorch (or C++ ABI): rebuild it with the torch "
     "installed now (pip install --no-build-isolation), or install the torch it was built for"),
    (re.compile(r"_ZNSt7__cxx11|std::__cxx11|_ZNKSt7__cxx11"), "the C++ standard library",
     "two libraries disagree on _GLIBCXX_USE_CXX11_ABI (a PyTorch wheel built with the old "
     "ABI beside a library built with the new one): build both with the same "
     "-D_GLIBCXX_USE_CXX11_ABI value"),
    (re.compile(r"^(?:cu[A-Z]\w+|cuda\w+|nvrtc\w+|cublas\w+|cudnn\w+)"), "CUDA",
     "the library calls CUDA, and no CUDA library that defines it is linked or loaded, or the "
     "CUDA loaded is older than the CUDA the library was built with (a newer CUDA added the "
     "symbol): put the libcuda/libcudart/nvrtc of that CUDA version (or newer) on the loader "
     "path and update the driver, or rebuild the library against the CUDA here"),
    (re.compile(r"^(?:hip\w+|rocblas\w+|miopen\w+|hsa_\w+)"), "ROCm",
     "the library calls ROCm (HIP), and the ROCm libraries it was built with are not on the "
     "loader path: export LD_LIBRARY_PATH=/opt/rocm/lib, or rebuild against the ROCm here"),
    (re.compile(r"^vk[A-Z]\w+"), "Vulkan",
     "the library calls Vulkan and no libvulkan is loaded: install the Vulkan loader "
     "(libvulkan1) or rebuild with the Vulkan SDK here"),
    (re.compile(r"^cl[A-Z]\w+"), "OpenCL",
     "the library calls OpenCL and no libOpenCL is loaded: install an OpenCL ICD loader"),
    # glibc before 2.34 keeps these out of libc: a link that names libtvm_runtime (which calls
    # them) but not them fails, most often with clang or a hand-written g++ line
    (re.compile(r"^dl(?:open|sym|close|error|addr|vsym)$"), "glibc's libdl (outside libc "
     "before glibc 2.34)",
     "add -ldl after the libraries that call it (CMake: ${CMAKE_DL_LIBS}); apache/tvm#2957 made "
     "TVM's own targets link it"),
    (re.compile(r"^pthread_\w+$"), "glibc's libpthread (outside libc before glibc 2.34)",
     "add -pthread (CMake: find_package(Threads) and Threads::Threads) after the libraries "
     "that call it"),
    # OpenBLAS's internal kernels (interface/lapack/getrs.c: sgetrs_N_single), which a LAPACK
    # built against OpenBLAS calls: the libblas/liblapack pair loaded is not one OpenBLAS
    (re.compile(r"^[sdcz][a-z]+\d*_[A-Z]{1,4}_(?:single|parallel)$|^openblas_\w+|^gotoblas"),
     "OpenBLAS (a LAPACK built for it calls its kernels)",
     "the liblapack loaded was built for OpenBLAS but another libblas is loaded beside it (the "
     "system's libblas.so.3/liblapack.so.3 alternatives disagree); in TVM's Python it is numpy "
     "that loads them: check that `python -c 'import numpy'` alone fails, then reinstall numpy "
     "(pip install --force-reinstall numpy: its wheels bundle their own OpenBLAS) or make both "
     "alternatives OpenBLAS's (update-alternatives --config liblapack.so.3)"),
]

# TVM's own shared libraries, by generation (apache/tvm's CMakeLists.txt at each release tag):
# name -> (first release that builds it or "" for the earliest, last release or "" for main,
# what it is). An
# extension links the libraries of the TVM it was built against; meeting another generation,
# the loader misses a library that generation never ships.
TVM_LIBRARIES = {
    "libtvm": ("", "v0.23.0", "TVM's single library (compiler and runtime in one)"),
    "libtvm_runtime": ("", "", "TVM's runtime"),
    "libtvm_compiler": ("v0.24.0", "", "TVM's compiler (libtvm.so split into it and "
                        "libtvm_runtime.so in v0.24.0)"),
    "libtvm_runtime_extra": ("v0.25.0", "", "TVM's optional runtime parts (disco, NCCL, ...)"),
    "libtvm_runtime_cuda": ("v0.25.0", "", "TVM's CUDA runtime (a USE_CUDA build)"),
    "libtvm_ffi": ("v0.21.0", "", "TVM's FFI (in-tree ffi/ in v0.21.0; from v0.22.0 the "
                   "3rdparty/tvm-ffi submodule, shipped by the apache-tvm-ffi wheel)"),
}

# Other libraries a TVM build or package loads: (pattern on the file name, the GPU stack or
# toolkit it belongs to, what provides it). A missing GPU library means the package was built
# for that stack; on a machine of the other vendor the fix is another build, not a path.
LIBRARY_OWNERS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"^lib(?:nvrtc|cudart|cublas(?:Lt)?|cufft|curand|cusparse|cusolver|nvJitLink|"
                r"nvToolsExt|cupti)\b"), "CUDA",
     "the CUDA toolkit's runtime libraries (or pip install nvidia-cuda-runtime-cu12 / "
     "nvidia-cuda-nvrtc-cu12 ...)"),
    (re.compile(r"^libcudnn\b"), "CUDA", "cuDNN (the NVIDIA cuDNN package for that CUDA)"),
    (re.compile(r"^libnccl\b"), "CUDA", "NCCL (libnccl2, or pip install nvidia-nccl-cu12)"),
    (re.compile(r"^lib(?:amdhip64|hiprtc|rocblas|hipblas(?:lt)?|miopen|MIOpen|hsa-runtime64|"
                r"rccl|rocm_smi64)\b"), "ROCm",
     "ROCm (its lib directory, /opt/rocm/lib, on the loader path)"),
    (re.compile(r"^libvulkan\b"), "Vulkan", "the Vulkan loader (libvulkan1)"),
    (re.compile(r"^libOpenCL\b"), "OpenCL", "an OpenCL ICD loader (ocl-icd-libopencl1)"),
    (re.compile(r"^libLLVM"), "LLVM", "the LLVM shared library TVM was linked against"),
]
_OTHER_VENDOR = {"CUDA": "ROCm (an AMD GPU)", "ROCm": "CUDA (an NVIDIA GPU)"}
# The CMake option that makes TVM's runtime load a stack's library.
OWNER_OPTIONS = {"CUDA": "USE_CUDA", "ROCm": "USE_ROCM", "Vulkan": "USE_VULKAN",
                 "OpenCL": "USE_OPENCL"}


# Python modules ``import tvm`` loads only when the library was built with an option
# (python/tvm/__init__.py: ``if support.libinfo().get("USE_MICRO") == "ON": from . import
# micro``, v0.8.0-v0.18.0 (apache/tvm#8715 to #17554); no other top-level module is gated so):
# module -> (option, first release, last release).
BUILD_GATED = {"tvm.micro": ("USE_MICRO", "v0.8.0", "v0.18.0")}


# Python packages TVM's own code imports (python/tvm's requirements) -> what TVM uses them for.
PYTHON_DEPENDENCIES = {
    "numpy": "arrays and dtypes", "ml_dtypes": "the low-precision dtypes (bfloat16, float8, "
    "float4)", "scipy": "the frontends and tests", "psutil": "RPC and MetaSchedule",
    "cloudpickle": "MetaSchedule's workers", "decorator": "older TVM's decorators",
    "attrs": "older TVM's objects", "typing_extensions": "type hints", "tornado": "the RPC "
    "tracker's web proxy", "packaging": "version checks", "onnx": "the ONNX frontend",
    "torch": "the PyTorch frontend", "tensorflow": "the TensorFlow frontend",
}


# pip distribution -> (what it provides, how to install it).
DISTRIBUTIONS = {
    "apache-tvm-ffi": ("TVM's FFI (the tvm_ffi package and libtvm_ffi.so; TVM >= 0.22 imports "
                       "it)", "pip install apache-tvm-ffi (the version TVM was built with), or "
                       "from a source tree: pip install ./3rdparty/tvm-ffi"),
    "tvm-ffi": ("TVM's FFI", "pip install apache-tvm-ffi, or pip install ./3rdparty/tvm-ffi"),
    "apache-tvm": ("TVM", "pip install apache-tvm, or from a source tree: pip install -e "
                   "./python (after building libtvm)"),
    "tvm": ("TVM built from source", "pip install -e ./python in the TVM tree after building "
            "libtvm (or pip install apache-tvm)"),
    "mlc-ai-nightly": ("MLC's build of TVM", "install the MLC wheels MLC-LLM's docs name for "
                       "your platform (pip install --pre -f https://mlc.ai/wheels ...)"),
    "mlc-llm": ("MLC-LLM", "pip install the mlc-llm wheel for your platform, or pip install -e "
                "./python in its tree"),
    "tilelang": ("TileLang", "pip install tilelang, or pip install -e . in its tree"),
}

# Programs TVM (or a project on it) runs -> what provides them.
TOOLS = {
    "emcc": "Emscripten (WebAssembly/WebGPU builds): install emsdk and `source emsdk_env.sh` so "
            "emcc is on PATH",
    "emcmake": "Emscripten: install emsdk and `source emsdk_env.sh`",
    "nvcc": "the CUDA toolkit: put its bin/ on PATH (export PATH=/usr/local/cuda/bin:$PATH) or "
            "set CUDA_HOME",
    "hipcc": "ROCm: put /opt/rocm/bin on PATH",
    "ld.lld": "LLVM's linker lld (ROCm code objects are linked with it): install lld or ROCm's "
              "llvm (/opt/rocm/llvm/bin)",
    "lld": "LLVM's linker lld: install lld",
    "llvm-config": "LLVM's development package (llvm-dev / llvm-NN-dev): install it, or give "
                   "USE_LLVM the path of an llvm-config",
    "xcrun": "Xcode's command line tools (Metal/iOS builds run on macOS only)",
    "metal": "Xcode's Metal toolchain (xcrun -sdk macosx metal)",
    "glslangValidator": "the Vulkan SDK's glslang",
    "spirv-val": "SPIRV-Tools (the Vulkan SDK)",
    "adb": "the Android SDK platform tools",
    "clang++": "clang: install it, or point the compiler setting at another C++ compiler",
    "g++": "a C++ compiler (build-essential)",
    "ninja": "pip install ninja (or apt-get install ninja-build)",
}
_TOOL_NAMES = "|".join(re.escape(t) for t in sorted(TOOLS, key=len, reverse=True))
TOOL_PATTERN = (rf"(?:(?P<tool>{_TOOL_NAMES}): (?:command )?not found|No such file or directory:? "
                rf"'(?:[^'\n]*/)?(?P<tool2>{_TOOL_NAMES})'|(?P<tool3>[\w.+-]*(?:android|linux-gnu)"
                rf"\w*-(?:clang\+\+|clang|g\+\+|gcc)): (?:command )?not found)")

# libstdc++ symbol version -> the GCC release that first ships it.
GLIBCXX = {"3.4.21": "5", "3.4.22": "6", "3.4.23": "7", "3.4.24": "8", "3.4.25": "9",
           "3.4.26": "9.2", "3.4.27": "9.3", "3.4.28": "10", "3.4.29": "11", "3.4.30": "12",
           "3.4.31": "13", "3.4.32": "13.2", "3.4.33": "14"}

# VkResult codes TVM's Vulkan runtime prints, and what each means for a user.
VK_RESULTS = {
    "VK_ERROR_INCOMPATIBLE_DRIVER": "no Vulkan driver (ICD) for a GPU is installed, or the "
    "loader does not find it: install the GPU's Vulkan driver (mesa-vulkan-drivers, the NVIDIA "
    "driver's ICD) and check `vulkaninfo`; in a container, mount the ICD json (VK_ICD_FILENAMES)",
    "VK_ERROR_INITIALIZATION_FAILED": "the Vulkan driver failed to initialise (driver and loader "
    "out of step, or no GPU visible): check `vulkaninfo` and the driver installation",
    "VK_ERROR_EXTENSION_NOT_PRESENT": "the driver lacks an extension TVM's Vulkan runtime asks "
    "for: update the driver, or build for a target without that feature",
    "VK_ERROR_FEATURE_NOT_PRESENT": "the device lacks a feature the kernel needs (int64, "
    "float16, 8-bit storage): give the vulkan target only what `vulkaninfo` lists",
    "VK_ERROR_LAYER_NOT_PRESENT": "a requested validation layer is not installed: unset "
    "TVM_VULKAN_ENABLE_VALIDATION_LAYERS or install the Vulkan SDK's layers",
    "VK_ERROR_OUT_OF_DEVICE_MEMORY": "the GPU ran out of memory: what was placed on it (a "
    "model's weights and KV cache, a batch's buffers) needs more device memory than it has - "
    "use a smaller model (fewer parameters, fewer bits per weight), a shorter context or "
    "smaller batches, or a GPU with more memory",
    "VK_ERROR_OUT_OF_HOST_MEMORY": "the host ran out of memory",
    "VK_ERROR_DEVICE_LOST": "the GPU reset or a kernel faulted (out-of-bounds access, a "
    "watchdog timeout on a display GPU): rerun with validation layers, shorter kernels",
}


def dependency(file: str, message: str) -> tuple[str, str, str] | None:
    """(name, kind, fix) of the dependency a compile error in ``file`` saying ``message``
    is about, or None."""
    for name, kind, pattern, fix in DEPENDENCIES:
        if pattern.search(message) or pattern.search(file):
            return name, kind, fix
    return None


_LLVM_SHOWN = re.compile(r"(?:llvm[-/]|LLVM[ _]?(?:version )?|llvm-config-|libLLVM-?)(\d{2})\b")
# The LLVM the build was configured with: CMake passes it to every compile command (201 is
# LLVM 20.1).
_LLVM_CONFIGURED = re.compile(r"-DTVM_LLVM_VERSION=(\d{2,3})\b")


def llvm_shown(text: str) -> int | None:
    """The LLVM major version a build log shows (``-DTVM_LLVM_VERSION=201`` on a compile
    command, ``/usr/lib/llvm-20/include``, ``LLVM 20.1``)."""
    m = _LLVM_CONFIGURED.search(text)
    if m:
        return int(m.group(1)) // 10
    m = _LLVM_SHOWN.search(text)
    return int(m.group(1)) if m and 7 <= int(m.group(1)) <= 40 else None


def llvm_support(major: int | None) -> str:
    """What TVM's history says of LLVM ``major``: the first release whose LLVM codegen tests
    for it, or the newest LLVM main tests for."""
    from toolkit.explain.history import api

    history = api()
    known = history.llvm_known()
    if not known:
        return ""
    v = history.versions
    newest = max(known)
    if major is not None and major in known:
        return (f" TVM's LLVM codegen adapts to LLVM {major}'s API from {v.first(known[major])} "
                "on (TVM's history).")
    if major is not None and major > newest:
        return (f" No TVM release's LLVM codegen tests for LLVM {major} yet (main knows up to "
                f"LLVM {newest}; TVM's history): use LLVM {newest} or older.")
    return f" TVM main's LLVM codegen knows LLVM up to {newest} (TVM's history)."


# The name a compiler says is missing: ‘X’ was not declared, ‘X’ is not a member of ‘Y’, ‘X’
# does not name a type, no member named 'X', use of undeclared identifier 'X', unknown type
# name 'X', identifier "X" is undefined.
_MISSING_NAME = re.compile(
    r"[‘'\"](?:[\w:]+::)?(?P<name>\w+)[’'\"] (?:was not declared|has not been declared|"
    r"is not a member of|is not a class|(?:in namespace "
    r"[‘'][\w:]+[’'] )?does not name a type|is undefined)|(?:no member named|undeclared "
    r"identifier|unknown type name|no type named) [‘'](?P<name2>\w+)[’']|"
    # MSVC: "error C2039: 'X': is not a member of 'Y'", "error C2065: 'X': undeclared identifier"
    r"[‘'](?:[\w:]+::)?(?P<name3>\w+)[’']: (?:is not a member of|undeclared identifier)")


def missing_name(message: str) -> str | None:
    """The name a compile error says the headers do not declare, if it says so."""
    m = _MISSING_NAME.search(message)
    return m and (m.group("name") or m.group("name2") or m.group("name3"))


# What TVM's FFI refactor put in place of the runtime's calling types (apache/tvm#17923,
# "PackedFunc => ffi::Function", v0.21.0; NDArray became ffi::Tensor in v0.22.0): the names
# tvm-ffi's headers declare (include/tvm/ffi/function.h, any.h, container/tensor.h).
FFI_REPLACEMENTS = {"PackedFunc": "tvm::ffi::Function", "TypedPackedFunc": "tvm::ffi::TypedFunction",
                    "TVMArgs": "tvm::ffi::PackedArgs", "TVMRetValue": "tvm::ffi::Any",
                    "TVMArgValue": "tvm::ffi::AnyView", "NDArray": "tvm::ffi::Tensor"}


def tvm_name(message: str, file: str = "") -> tuple[str, str] | None:
    """(cause, fix) when the name a compile error misses is one TVM's own headers declared in
    some versions and not in others: code written for another TVM than the headers in use;
    or, when ``file`` is TVM's own and stood beside the declaration, TVM's file that names it
    without its namespace."""
    from toolkit.explain.history import api

    name = missing_name(message)
    if not name:
        return None
    history = api()
    hit = history.get("H", name)
    if hit is None:
        return None
    mask, header = hit
    v = history.versions
    # the file lived only in releases that declare the name: no release skew explains it
    beside = (history.get("P", file) or (0, ""))[0]
    if beside and not beside & ~mask and file != header:
        space = "::".join(["tvm", *Path(header).parent.parts[2:]])  # include/tvm/runtime/x.h
        return (f"{name} is TVM's own: {header} declares it (in {v.span(mask)}), in namespace "
                f"{space} by its folder; {file} of the same TVM ({v.span(beside)}) names it "
                f"unqualified, where that namespace is not open (or without including "
                f"{header}): a bug of that TVM's own file, not of the code that includes it.",
                f"qualify it ({space}::{name}) in {file}, or use a TVM release whose file "
                "does")
    gone = v.after_last(mask)
    if gone:
        instead = FFI_REPLACEMENTS.get(name)
        now = f" ({instead} in its place)" if instead else ""
        return (f"{name} is TVM's own: {header} declares it in {v.span(mask)}, and it was removed "
                f"in {gone}{now} (TVM's history). This source was written for an older TVM than "
                "the headers it is compiled against (a contrib file, deployment code or a "
                "project on TVM that was not updated).",
                "port the code to the API of the TVM in use ("
                + (f"{instead} for {name}" if instead else
                   f"what replaced {name}: the TVM release notes of {gone}")
                + f"), or build against a TVM of {v.span(mask)}")
    first = v.first(mask)
    if first != v.labels[0]:
        return (f"{name} is TVM's own: {header} declares it from {first} on (TVM's history); the "
                "headers this build uses are older than the code that needs it.",
                f"build against TVM {first} or newer (update the TVM submodule or "
                "TVM_SOURCE_DIR), or use the code's release that matches your TVM")
    return None  # in every version: the history says nothing about this error


# Backends whose code TVM compiles only with an option: a token of an undeclared name -> (the
# option, the backend). The names follow TVM's own (CreateLLVMCrtMetadataModule, BuildCUDA).
_GATED_TOKENS = [("LLVM", "USE_LLVM", "LLVM"), ("CUDA", "USE_CUDA", "CUDA"),
                 ("NVRTC", "USE_CUDA", "CUDA"), ("ROCM", "USE_ROCM", "ROCm"),
                 ("AMDGPU", "USE_ROCM", "ROCm"), ("Vulkan", "USE_VULKAN", "Vulkan"),
                 ("SPIRV", "USE_VULKAN", "Vulkan"), ("Metal", "USE_METAL", "Metal"),
                 ("OpenCL", "USE_OPENCL", "OpenCL"), ("Hexagon", "USE_HEXAGON", "Hexagon")]


def _gated_name(message: str) -> tuple[str, str, str] | None:
    """(name, option, backend) when the name a compile error misses is a backend's code by its
    name (a CamelCase part such as ``LLVM`` in ``CreateLLVMCrtMetadataModule``)."""
    name = missing_name(message)
    if not name:
        return None
    for token, option, backend in _GATED_TOKENS:
        # inside the name (CreateLLVM..., BuildCUDA): LLVMInitialize* and cudaMalloc are the
        # libraries' own API, which a dependency's version explains instead
        if re.search(rf"[a-z_]{token}(?:[A-Z_]|$)", name):
            return name, option, backend
    return None


def _tree_path(path: str) -> str:
    """``path`` from its TVM tree's root: the first ``src/``, ``include/`` or ``3rdparty/``
    that starts a TVM source directory (``/home/u/src/tvm/src/target/x.cc`` ->
    ``src/target/x.cc``), else the first one at all."""
    starts = [m.start() for m in re.finditer(r"(?:^|/)(?:src|include|3rdparty)/", path)]
    tails = [path[i + (path[i] == "/"):] for i in starts]
    return next((t for t in tails if _tvm_directory(t)), tails[0] if tails else "")


@cache
def _tvm_directories() -> frozenset[str]:
    from toolkit.explain.history import sites

    return frozenset(f.rsplit("/", 1)[0] for f in sites().by_file if "/" in f)


def _tvm_directory(path: str) -> bool:
    """Whether ``path`` (relative to a tree) lies in a directory of TVM's own sources - a
    user's ``src/my_pass.cc`` does not (TVM keeps no source file in ``src/`` itself)."""
    return "/" in path and path.rsplit("/", 1)[0] in _tvm_directories()


# A virtual function the base class does not declare: clang's "only virtual member functions
# can be marked 'final'", "marked 'override' but does not override", GCC's "marked 'final',
# but is not virtual", "marked 'override', but does not override"
_OVERRIDES = re.compile(r"can be marked '(?:final|override)'|marked '?(?:final|override)'?,? but "
                        r"(?:does not override|is not virtual)")
# C++17 class template argument deduction failing: clang's "no viable constructor or deduction
# guide for deduction of template arguments", GCC's "class template argument deduction failed"
_DEDUCTION = re.compile(r"deduction guide for deduction of template arguments|class template "
                        r"argument deduction failed")


def compile_error(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A compile error in TVM's sources, or in code built on TVM's headers (a deployment
    program): a TVM name of another version, or (in a source tree) which dependency's API or
    vendored code moved; None when nothing names TVM or the dependency (the user's own code)."""
    file, message = groups.get("file") or groups.get("file2") or "", groups.get("msg", "")
    # The path inside the TVM tree: a TVM vendored by another project (mlc-llm/3rdparty/tvm)
    # is still TVM's own source, not a vendored library.
    in_tree = file.split("/3rdparty/tvm/")[-1]
    tree = _tree_path(in_tree)
    if not tree and "tvm::" not in text and "tvm/" not in text:
        return None  # a file of no source tree, in a log that shows nothing of TVM
    known = tvm_name(message, tree or "")
    if known is not None:
        return f"{tree or file} does not compile: {message.strip()[:160]}. " + known[0], known[1]
    if not tree:
        return None  # what follows reads a source tree's layout
    where = tree
    gated = _gated_name(message)
    if gated is not None and _tvm_directory(where):
        name, option, backend = gated
        return (f"{where} does not compile: {message.strip()[:160]}. {name} is TVM's {backend} "
                f"code, which TVM compiles only in a build with {option} (its definition sits "
                f"under src/target/ or src/runtime/ files CMake adds for {option}, or an #ifdef): "
                f"this build, without {backend} ({option} OFF), reaches a call to it that is not "
                "guarded.",
                f"build with {option} ON (if {backend} is wanted); otherwise the unguarded call is "
                "a TVM bug of this tree - update TVM (a newer TVM guards it)")
    found = dependency(in_tree, message)
    if found is None:
        if not _tvm_directory(where):
            return None  # not a file of TVM's: a user's own code (a typo, not a toolchain)
        if _OVERRIDES.search(message):
            return (f"{where} does not compile: {message.strip()[:200]}. The source overrides a "
                    "virtual function its base class (declared in another header: a vendored "
                    "submodule under 3rdparty/, or a header of another checkout) does not "
                    "declare: the submodules are older than this tree, as after a git pull or "
                    "checkout that did not update them.",
                    "update the submodules to the tree's commit (git submodule update --init "
                    "--recursive) and rebuild")
        if _DEDUCTION.search(message):
            return (f"{where} does not compile: {message.strip()[:200]}. The code leaves a class "
                    "template's arguments to C++17 class template argument deduction, which an "
                    "older compiler than the tree was tested with does not do for it.",
                    "upgrade the compiler (a newer GCC or clang), or spell the template's "
                    "arguments in that line (Array<ObjectRef>{...})")
        return (f"{where} does not compile: {message.strip()[:200]}. TVM's sources meet a "
                "compiler or header they were not written for (a compiler too old for the C++ "
                "standard TVM uses, or another version of a dependency's headers).",
                "build with a compiler TVM supports (GCC >= 7 / clang >= 5, newer for newer "
                "TVM), and check that the submodules match the tree: git submodule update "
                "--init --recursive")
    name, kind, fix = found
    if kind == "vendored":
        return (f"{where} does not compile against the {name} headers it found: "
                f"{message.strip()[:160]}. The submodule ({name}) is older or newer than this "
                "TVM tree expects - a checkout or pull that did not update it.", fix)
    history = llvm_support(llvm_shown(text)) if name == "LLVM" else ""
    return (f"{where} does not compile against this {name}: {message.strip()[:160]}. The "
            f"{name} API it calls changed: the {name} installed is newer (or older) than the "
            f"ones this TVM's sources were written for.{history}", fix)


def llvm_target(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    triple = groups.get("triple") or groups.get("triple2") or ""
    arch = triple.split("-", 1)[0]
    target = LLVM_TARGETS.get(arch) or LLVM_TARGETS.get(re.sub(r"v\d.*$", "", arch))
    if not target:
        return None
    return (f"the LLVM that TVM links was built without the {target} target, which "
            f"compiles for {triple}.",
            f"use an LLVM built with {target} in LLVM_TARGETS_TO_BUILD (check with "
            "`llvm-config --targets-built`; apt.llvm.org and conda's llvmdev packages include "
            f"the common ones) and rebuild TVM with USE_LLVM pointing at its llvm-config")


# CUDA API functions and the CUDA release that added them (NVIDIA's CUDA Driver/Runtime API
# reference of each release): a library calling one meets an older CUDA when it is undefined.
CUDA_SINCE = {"cuTensorMapEncodeTiled": "12.0", "cuTensorMapEncodeIm2col": "12.0",
              "cuTensorMapReplaceAddress": "12.0", "cuLaunchKernelEx": "12.0",
              "cudaLaunchKernelExC": "12.0", "cuLibraryLoadData": "12.0",
              "cudaGetDriverEntryPointByVersion": "12.5"}


def missing_symbol(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    sym = groups.get("sym", "")
    lib = (groups.get("lib") or "").rsplit("/", 1)[-1]
    for pattern, owner, fix in SYMBOLS:
        if pattern.search(sym):
            whose = f"{lib} needs" if lib else "the link needs"
            since = CUDA_SINCE.get(re.sub(r"_v\d+$", "", sym)) if owner == "CUDA" else None
            if since:
                return (f"{whose} {sym}, which CUDA {since} added: the CUDA this process loads (the "
                        f"driver's libcuda or the toolkit's libraries) is older than CUDA {since}, "
                        f"the CUDA the library was built with.",
                        f"use CUDA {since} or newer (toolkit and an NVIDIA driver that supports "
                        f"it), or rebuild the library against the older CUDA here")
            return (f"{whose} {sym}, a symbol of {owner}, and nothing loaded or linked defines "
                    f"it in that version.", fix)
    if sym.startswith("tvm::"):
        return _tvm_symbol_file(sym, _text)
    return None


def _mobile(text: str, sym: str) -> bool:
    """Whether the line that quotes ``sym`` is a mobile app's build (its paths: jni/, the
    NDK, Xcode); one line, as a log of thousands of undefined references asks for each."""
    at = max(text.find(sym), 0)
    end = text.find("\n", at)
    line = text[text.rfind("\n", 0, at) + 1:end if end >= 0 else len(text)]
    return any(w in line for w in ("jni/", "ndk", "NDK", "android", "Android", "ios_rpc",
                                   "xcode", "Xcode"))


@cache
def _files_by_function() -> dict[str, dict[str, int]]:
    """The first part of each function an error site of TVM's stands in (``ThreadGroup`` of
    ``ThreadGroup::Impl::Impl``) -> {file: versions}; built once."""
    from toolkit.explain.history import sites

    out: dict[str, dict[str, int]] = {}
    for site in sites().sites:
        if site.function and "/sgx/" not in site.file:  # SGX enclaves keep runtime copies
            files = out.setdefault(site.function.split("::", 1)[0], {})
            files[site.file] = files.get(site.file, 0) | site.mask
    return out


def _tvm_symbol_file(sym: str, text: str) -> tuple[str, str] | None:
    """``tvm::runtime::threading::ThreadGroup::~ThreadGroup()``: the TVM source file that
    defines its class or function, from the functions TVM's error sites stand in."""
    bare = sym.split("(", 1)[0]
    parts = [p for p in re.sub(r"<[^<>]*>", "", bare).split("::") if p]
    # the first component named like a class or function (namespaces are lower case)
    head = next((p.lstrip("~") for p in parts[1:] if p[:1].isupper() or p.startswith("~")), None)
    if head is None or head not in _files_by_function():
        return None
    return _defined_in(head, _mobile(text, sym))


@cache
def _defined_in(head: str, mobile: bool) -> tuple[str, str]:
    """The answer for TVM's ``head`` (a class or function), once per head: a link that
    misses a file misses many of its symbols, and they make one answer."""
    from toolkit.explain.history import sites

    files = _files_by_function()[head]
    file = max(files, key=lambda f: files[f].bit_length())
    v = sites().versions
    return (f"the link needs TVM's own {head} (as the symbol the log quotes), defined in {file} "
            f"(TVM {v.span(files[file])}), and no object or library in the link defines it: "
            f"the build compiles TVM's runtime from a list of its sources that lacks {file}, or "
            "does not link libtvm_runtime.",
            f"add {file} to what the build compiles (or link libtvm_runtime)"
            + ("; a mobile app that compiles the runtime from one file (the Android/iOS apps' "
               "tvm_runtime.h, which #includes TVM's runtime sources one by one) needs an "
               f"#include of {file} there" if mobile else ""))


def distribution(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    dist = groups.get("dist", "").strip("'\"")
    what, fix = DISTRIBUTIONS.get(dist.lower().replace("_", "-"), (None, None))
    if what is None:
        return None
    return (f"importlib.metadata asked for the {dist} distribution ({what}) and found none: "
            "its package may be importable (a source tree on PYTHONPATH) but it was never "
            "pip-installed, so the code that reads its version or locates its library through "
            "the package metadata fails.", fix)


def tool(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    name = groups.get("tool") or groups.get("tool2") or groups.get("tool3") or ""
    if name in TOOLS:
        return (f"{name} is not on PATH; it is {TOOLS[name].split(':', 1)[0]}.",
                TOOLS[name].split(": ", 1)[-1])
    return (f"{name} (a cross compiler for Android or another target) is not on PATH.",
            "install the toolchain (the Android NDK's toolchains/llvm/prebuilt/*/bin) and put it "
            "on PATH, or give its full path (TVM_NDK_CC for tvm.contrib.ndk)")


def glibcxx(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    which, version = groups.get("which", ""), groups.get("ver", "")
    lib = groups.get("by", "").rsplit("/", 1)[-1]
    if which == "GLIBCXX":
        gcc = GLIBCXX.get(version)
        built = f" (GCC {gcc} or newer)" if gcc else ""
        return (f"{lib or 'a library'} was built with a newer libstdc++{built} than the "
                f"libstdc++.so.6 this process loaded, which lacks GLIBCXX_{version}: usually a "
                "conda environment's older libstdc++ found before the system's.",
                "load a libstdc++ at least that new: conda install -c conda-forge 'libstdcxx-ng"
                ">=12' (or libstdcxx), or put the system's first (LD_PRELOAD=/usr/lib/x86_64-"
                "linux-gnu/libstdc++.so.6); or rebuild the library with the older compiler")
    if which == "GLIBC":
        return (f"{lib or 'a library'} was built for glibc {version} or newer; this system's "
                "glibc is older.",
                "use a wheel built for this system's glibc (manylinux tag), or a newer OS / "
                "container, or build from source here")
    return None


def vulkan(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    code = groups.get("vk") or groups.get("vk2") or ""
    if code in VK_RESULTS:
        what, _, fix = VK_RESULTS[code].partition(": ")
        return f"Vulkan returned {code}: {what}.", fix or VK_RESULTS[code]
    return None


# A CMake package (or TVM's USE_X dependency) -> how to provide it.
PACKAGES = {
    "vulkan": "install the Vulkan SDK (LunarG), or the distribution's libvulkan-dev, "
              "spirv-headers and spirv-tools; then set USE_VULKAN to the SDK's path ($VULKAN_SDK) "
              "or ON",
    "cuda": "install the CUDA toolkit and set USE_CUDA to its path (/usr/local/cuda), or put nvcc "
            "on PATH",
    "rocm": "install ROCm and set USE_ROCM=/opt/rocm (or ROCM_PATH)",
    "opencl": "install OpenCL headers and an ICD loader (opencl-headers, ocl-icd-opencl-dev), or "
              "set USE_OPENCL to the SDK's path",
    "llvm": "install LLVM's development package (llvm-NN-dev) and set USE_LLVM to its "
            "llvm-config",
    "cudnn": "install cuDNN for this CUDA version and set USE_CUDNN to its path",
    "nccl": "install NCCL and set USE_NCCL to its path",
    "python": "install the interpreter's development files (python3-dev)",
    "zlib": "install zlib's development package (zlib1g-dev)",
    "libxml2": "install libxml2-dev (LLVM's CMake package needs it)",
    "gtest": "install GoogleTest (libgtest-dev), or build without C++ tests",
    "threads": "install the C library's development files (build-essential)",
}


# TVM's cmake/utils/FindLLVM.cmake (v0.14+) says which library the LLVM links before it asks
# CMake for it: the package missing is LLVM's dependency, not one of TVM's options.
_LLVM_LINKS = re.compile(r"LLVM links against (?:static |shared )?(?P<lib>\w+)|"
                         r"FindLLVM\.cmake:\d+ \(find_package\)")


def cmake_package(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    name = groups.get("dep") or groups.get("pkg") or ""
    fix = PACKAGES.get(name.lower())
    llvm = _LLVM_LINKS.search(text)
    if llvm and not groups.get("opt"):
        return (f"TVM's FindLLVM (cmake/utils/FindLLVM.cmake) saw that the LLVM it builds "
                f"against links {name} (llvm-config --system-libs lists it) and asked CMake for "
                f"{name}: that dependency of LLVM has no development files here, not LLVM "
                "itself.",
                (fix or f"install {name}'s development package") + "; or build against an LLVM "
                "that does not link it (USE_LLVM pointing at another llvm-config)")
    if groups.get("opt"):
        where = groups.get("val") or "(empty)"
        cause = (f"the build asks for {name} ({groups['opt']}={where}) and TVM's CMake found no "
                 f"{name} {'there' if where not in ('ON', '(empty)') else 'in the default places'}.")
        return cause, fix or (f"install {name}'s development files and set {groups['opt']} to "
                              "their path")
    cause = f"CMake's find_package({name}) found no {name} (its development files or config)."
    return cause, fix or (f"install {name}'s development package, or point CMake at it "
                          f"(-D{name}_DIR=... or CMAKE_PREFIX_PATH)")


# A target kind's code generator -> the CMake option that compiles it, where TVM's history has
# no O fact for the file that registers target.build.KIND (older layouts).
CODEGEN_OPTIONS = {"llvm": "USE_LLVM", "cuda": "USE_CUDA", "nvptx": "USE_LLVM", "rocm": "USE_ROCM",
                   "vulkan": "USE_VULKAN", "opencl": "USE_OPENCL", "metal": "USE_METAL",
                   "hexagon": "USE_HEXAGON", "sdaccel": "USE_SDACCEL", "aocl": "USE_AOCL"}


def codegen(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``target.build.vulkan is not enabled``: which option compiles that code generator,
    from TVM's history (the file registering target.build.KIND and the CMake option it sits
    under), else the table."""
    from toolkit.explain.history import api

    kind = groups.get("kind", "")
    history = api()
    hit = history.get("F", f"target.build.{kind}")
    option = history.option_for(hit[1]) if hit and hit[1] else None
    name = option[0] if option else CODEGEN_OPTIONS.get(kind)
    if name is None:
        return None
    where = f" (target.build.{kind} is registered in {hit[1]})" if option else ""
    return (f"the TVM in use was built without the {kind} code generator: {name} was OFF when "
            f"it was built{where}, or it was not rebuilt after turning it on.",
            f"set({name} ON) in config.cmake (for llvm, the path of an llvm-config), then rebuild "
            "from a clean build directory and reinstall the Python package; tk doctor lists the "
            "codegens a build has")


_NEEDED_BY = re.compile(r"ldd\s+(?P<dep>\S+\.so)|(?P<dep2>[\w./-]+\.so)[.\d]*: cannot open|"
                        r"loading shared libraries: (?P<dep3>[\w./-]+\.so)")


def library(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A shared library the loader did not find, by what ships it: a TVM library of another
    generation than the extension needing it, or a GPU stack's library (the package was built
    for that stack)."""
    lib = groups.get("lib", "").rsplit("/", 1)[-1]
    stem = re.sub(r"\.so[.\d]*$", "", lib)
    needer = ""
    for m in _NEEDED_BY.finditer(text):
        dep = (m.group("dep") or m.group("dep2") or m.group("dep3")).rsplit("/", 1)[-1]
        if not dep.startswith(stem + ".") and dep != lib:
            needer = dep
            break
    by = f"{needer} needs {lib}" if needer else f"{lib} is needed"
    if stem in TVM_LIBRARIES:
        first, last, what = TVM_LIBRARIES[stem]
        span = (f"{first}–{last}" if first and last else f"up to {last}" if last else
                f"{first} on" if first else "of every release")
        later = (f"; from {_next(last)} TVM ships libtvm_compiler.so and libtvm_runtime.so "
                 "instead" if stem == "libtvm" else "")
        who = needer or "the library that needs it"
        return (f"{by}: {lib} is {what}, built by TVM {span}{later}. {who} was built against "
                f"another TVM than the one installed (an older or newer TVM generation: a "
                f"mismatch), or that TVM's library directory is not on the loader path.",
                f"rebuild {who} against the installed TVM (or install the TVM it was built "
                f"with); if {lib} exists, export TVM_LIBRARY_PATH / LD_LIBRARY_PATH=<its "
                f"directory>. `tk ext check LIB.so` lists what a library needs.")
    for pattern, owner, provider in LIBRARY_OWNERS:
        if not pattern.search(stem):
            continue
        version = re.search(r"\.so\.(\d+)", lib)
        of = f" {version.group(1)}" if version and owner == "CUDA" else ""
        other = _OTHER_VENDOR.get(owner)
        instead = (f"; on a machine with {other} instead, this build cannot run: install the "
                   f"package's {other.split(' ')[0]} build or build it from source for "
                   f"{other.split(' ')[0]}" if other else "")
        option = OWNER_OPTIONS.get(owner)
        host = (f"; a TVM that loads it was built with {option} ON: on a machine that only "
                f"compiles for another device (a host cross-compiling for a phone), build TVM "
                f"with set({option} OFF)" if option else "")
        return (f"{by}, a library of {owner}{of}: the package loading it is a {owner} build "
                f"(built for {owner}{of}), and {owner}{of}'s libraries are not installed or "
                "not on the loader path.",
                f"install {provider} and put their directory on LD_LIBRARY_PATH{instead}{host}.")
    return None


def _next(release: str) -> str:
    major, minor, _ = release.lstrip("v").split(".")
    return f"v{major}.{int(minor) + 1}.0"


def dependency_attribute(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A package TVM imports lacks a name TVM's code reads (``module 'x' has no attribute``,
    ``cannot import name 'X' from 'x.core'``), or is not installed (``No module named 'x'``,
    ``attr`` empty): answered from tk's table of what each TVM release asks for (``Q`` facts:
    python/setup.py, gen_requirements.py, pyproject.toml) and the version the log shows.
    None when the module is not one TVM imports (the caller: ``NOT_THIS``)."""
    module, attr = groups.get("mod", ""), groups.get("attr", "")
    top = module.split(".")[0]
    asked = requirements(top)
    if top not in PYTHON_DEPENDENCIES and not asked:
        return None  # tvm's own names (the history answers them), a project's modules
    from toolkit.explain import tvm_version
    from toolkit.explain.history import api

    history = api()
    v = history.versions
    version = tvm_version.infer(text)
    use = f" (for {PYTHON_DEPENDENCIES[top]})" if top in PYTHON_DEPENDENCIES else ""
    theirs = [(spec, mask) for spec, mask in asked if version is None or mask & version.mask]
    if asked:
        table = "; ".join(f"{spec_text(top, spec)} in {v.span(mask)}" for spec, mask in asked)
        table = (f"TVM's requirements by release (tk's table of python/setup.py, "
                 f"gen_requirements.py, pyproject.toml): {table}")
        if theirs and version is not None:
            table += (f"; the TVM in this log ({version.describe()}) asks for "
                      f"{' or '.join(spec_text(top, s) for s, _ in theirs)}")
    else:
        table = f"no TVM release lists {top} among its requirements"
    if not attr:  # not installed at all
        wanted = next((f"'{top}{s}'" for s, _ in reversed(theirs) if s), top) \
            if version is not None else f"{top} (with the version spec your TVM's release asks for, above)"
        return (f"{top} is not installed: it is a package TVM uses{use}. {table}.",
                f"pip install {wanted} into the interpreter that runs TVM")
    installed = installed_version(top, text)
    lower = max(filter(None, (_floor(s) for s, _ in theirs)), key=_key, default=None)
    # the caps the log's TVM (or, unknown, any release) set, with the releases setting them
    caps = [(c, spec, mask) for spec, mask in theirs if (c := _cap(spec))]
    over = [(c, spec, mask) for c, spec, mask in caps
            if installed and (_key(installed) >= _key(c) if "<=" not in spec
                              else _key(installed) > _key(c))]
    if installed and lower and _key(installed) < _key(lower):
        verdict = (f"the log shows {top} {installed}, older than the {lower} TVM asks for: "
                   f"{attr} came in a later {top}")
        fix = f"upgrade {top} to {lower} or newer (pip install -U '{top}>={lower}')"
    elif over:
        c, spec, mask = over[0]
        verdict = (f"the log shows {top} {installed}, above the cap {spec_text(top, spec)} that "
                   f"TVM {v.span(mask)} set: a later {top} dropped what that TVM's code uses")
        fix = (f"downgrade {top} (pip install '{top}{spec}'), or use a newer TVM whose code "
               f"follows {top}'s current API")
    else:
        capped = "; ".join(f"{v.span(mask)} capped it: {spec_text(top, spec)}"
                           for _, spec, mask in caps)
        capped = f" ({capped}: a later {top} changed what TVM uses)" if capped else \
            " (no TVM release caps it)"
        shown = f"the log shows {top} {installed}, which TVM's lower bound allows: " \
            if installed else ""
        verdict = (f"{shown}{top}'s API changed - {attr} went (or came) with another {top} "
                   f"release than the one this TVM's code was written against{capped}")
        below = f"'{top}<{installed}'" if installed else \
            f"'{top}{caps[0][1]}'" if caps else f"an older {top}"
        fix = (f"downgrade {top} to a release that still has {attr} (pip install {below}), or "
               f"use a newer TVM whose code follows {top}'s current API; if the installed {top} "
               f"is older than TVM asks, upgrade it instead")
    from toolkit.explain import dependency_reads

    read = dependency_reads.answer(top, attr)
    if read is not None:  # which TVM releases call it: a fact, ahead of the general verdict
        verdict, fix = f"{read[0]} Also: {verdict}", f"{read[1]}; or {fix}"
    return (f"{module} has no {attr}: {top} is a package TVM uses{use}, and {verdict}. "
            f"{table}.", fix)


# ``export NAME=value`` / ``NAME=value`` / ``NAME: value`` as logs show the environment.
_ENV_LINE = re.compile(r"\b(?P<var>PYTHONPATH|TVM_LIBRARY_PATH|TVM_HOME)\s*[=:]\s*[\"']?"
                       r"(?P<value>[^\s\"';]+)")
# The TVM tree a path is in: the part before its python/, build*/ or lib/ directory.
_TREE = re.compile(r"^(?P<tree>.*?)/(?:python|build[\w.-]*|lib|cmake-build[\w-]*)(?:/|$)")


def log_paths(text: str) -> dict[str, str]:
    """PYTHONPATH, TVM_LIBRARY_PATH and TVM_HOME as the log sets or prints them (the last
    value of each; a PYTHONPATH's first entry that looks like a TVM tree's python/)."""
    found: dict[str, str] = {}
    for m in _ENV_LINE.finditer(text):
        value = m.group("value")
        if m.group("var") == "PYTHONPATH":
            entries = [e for e in value.split(":") if e and not e.startswith("$")]
            value = next((e for e in entries if e.rstrip("/").endswith("python")),
                         entries[0] if entries else "")
        if value:
            found[m.group("var")] = value
    return found


def tree_of(path: str) -> str:
    """The TVM tree ``path`` belongs to (``/src/tvm`` for ``/src/tvm/build/libtvm.so``)."""
    m = _TREE.match(path.rstrip("/") + "/")
    return m.group("tree") if m else path.rstrip("/")


def python_library_skew(_groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """PYTHONPATH naming one TVM tree's python/ and TVM_LIBRARY_PATH (or TVM_HOME) another
    tree's libraries: the Python sources and the compiled library of two TVMs, whatever the
    error they end in ("Cannot find object type index", a missing global function)."""
    paths = log_paths(text)
    py, lib = paths.get("PYTHONPATH"), paths.get("TVM_LIBRARY_PATH") or paths.get("TVM_HOME")
    if not py or not lib or tree_of(py) == tree_of(lib):
        return None
    return (f"PYTHONPATH={py} imports the Python of the TVM tree {tree_of(py)}, while "
            f"{'TVM_LIBRARY_PATH' if 'TVM_LIBRARY_PATH' in paths else 'TVM_HOME'}={lib} loads "
            f"the library of another tree, {tree_of(lib)}: Python sources and compiled library "
            "of two TVMs (their FFI functions and object types need not match).",
            f"point both at one tree: PYTHONPATH={tree_of(lib)}/python with "
            f"TVM_LIBRARY_PATH={lib}, or TVM_LIBRARY_PATH=<{tree_of(py)}'s build dir> (tk "
            "doctor checks the pair)")


# The device compiler a log's words name -> TVM's source code generator for that target.
DEVICE_COMPILERS = [
    ("opencl", re.compile(r"<kernel>:|CL_BUILD_PROGRAM|OpenCL|opencl|clBuildProgram")),
    ("cuda", re.compile(r"NVRTC|nvrtc|default_program|\.cu\(|CUDA|cuda|nvcc")),
    ("metal", re.compile(r"program_source:|Metal|metal|MTLLibrary")),
    ("webgpu", re.compile(r"WGSL|wgsl|WebGPU|webgpu|Tint")),
]
# Float infinity and NaN as a source printer may write them when it prints the value's text
# (``inf`` + the float suffix ``f``) instead of a constant the language defines.
_SPECIAL_FLOATS = {"inf", "inff", "infinity", "nan", "nanf", "INF", "NAN", "inf_f"}


# The file a diagnostic names, and the names of source TVM generated: OpenCL's <kernel>,
# Metal's program_source, NVRTC's default_program, the files TVM's nvcc helper writes into a
# temporary directory (tvm_kernels.cu, my_kernel.cu).
_SOURCE_FILE = re.compile(r"(?:<\w+>|[\w./\\-]+)(?:\(\d+\)|:\d+)")
_GENERATED = re.compile(r"<kernel>|<source>|program_source|default_program|tvm_kernels?\.|"
                        r"my_kernel\.|(?:^|/)tmp[\w]*/")


# What CodeGenC prints for an assert to raise its error, host code a device compiler does not
# have: tvm-ffi's C API from v0.24.0, TVM's ICHECK macro before
HOST_ERROR_CALLS = ("TVMFFIErrorSetRaisedFromCStrParts", "ICHECK")


def device_source(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A GPU compiler (OpenCL, NVRTC/nvcc, Metal, WGSL) rejecting source TVM generated: the
    kernel text is TVM's codegen's output, so the bug is in TVM's source printer for that
    target, not in the user's code. None for a compile of TVM's own (or a user's) C++ files."""
    line_start = text.rfind("\n", 0, text.find(groups.get("diag", "") or "error")) + 1
    line = text[line_start:text.find("\n", line_start) if "\n" in text[line_start:] else None]
    named = _SOURCE_FILE.search(line[:line.find("error")])
    if named and not _GENERATED.search(named.group(0)):
        return None  # a file of TVM's tree or the user's (bad.cu, src/x.cc): not generated code
    ident = groups.get("ident") or groups.get("ident2") or ""
    if ident in HOST_ERROR_CALLS:
        return (f"the kernel source calls {ident}, the host-side error call TVM's C printer "
                "writes for an assert (CodeGenC::VisitStmt_(const AssertStmtNode*) in "
                "src/target/source/codegen_c.cc): an assert inside the device kernel was "
                "printed as host code, and the device compiler has no such function (host-only: "
                "tvm-ffi's C API, or TVM's ICHECK before v0.24.0).",
                "take the assert out of the kernel body (check the values on the host), or use "
                "the frontend's device-side assert (TileLang's T.device_assert); a code "
                "generator that prints asserts for the device (a newer release) avoids it")
    target = next((t for t, pattern in DEVICE_COMPILERS if pattern.search(text)), "")
    compiler = {"opencl": "the OpenCL compiler", "cuda": "NVRTC/nvcc", "metal": "the Metal "
                "compiler", "webgpu": "the WGSL compiler"}.get(target, "the device compiler "
                                                                  "(OpenCL, CUDA or Metal)")
    targets = [target] if target else [t for t, _ in DEVICE_COMPILERS]
    found = []  # what TVM's history says of the name: the versions whose printer writes it
    for t in targets:
        hit = printed_by_tvm(t).get(ident)
        if hit:
            found.append(f"`{ident}` is in what TVM's {t} printer writes in {hit[0]} ({hit[1]})")
    special, firsts = "", []
    if ident in _SPECIAL_FLOATS:
        special = (f" `{ident}` is a float infinity or NaN printed as a bare name: the codegen "
                   "printed the value's text instead of a constant the device language defines.")
        for t in targets:
            names, since, file = _special_printed(t)
            if names:
                found.append(f"TVM's {t} printer writes infinity and NaN as "
                             f"{', '.join(names[:4])} from {since} (now in {file})")
                firsts.append(since)
    history = f" TVM's history: {'; '.join(found)}." if found else ""
    if ident and not found and "undefined" in line + groups.get("diag", ""):
        # the compiler's "identifier is undefined", and no release's printer writes the name
        history = (f" `{ident}` does not exist in the headers the kernel includes, and no TVM "
                   "release's printer writes it: a name the printer composed (an intrinsic's "
                   "name built from its type, misspelled) or one of a header it did not include.")
    named = f" `{ident}`" if ident else ""
    if len(firsts) == 1:
        upgrade = f"upgrade TVM to {firsts[0]} or newer, whose printer writes it as a constant"
    elif firsts:
        upgrade = ("upgrade TVM to the release from which the printer of the target in use "
                   "writes it as a constant (above)")
    else:
        upgrade = ("upgrade TVM (a newer TVM's codegen may print it correctly; `tk bisect` on "
                   "the codegen tells when it changed)")
    return (f"{compiler} rejects{named} in the kernel source TVM's code generator printed: "
            f"the invalid source is TVM's codegen's output, not the user's code.{special} "
            f"TVM's source printer for {'this target' if target else 'each target'}: "
            f"{_printer_where(target)} (over the shared codegen_c.cc).{history}",
            f"{upgrade}; until then avoid the construct in the model (here: the value it "
            "printed), and report the printed kernel (the built module's source, as the error "
            "prints it) to apache/tvm's issues under the target's codegen")


@cache
def _printer_where(target: str) -> str:
    """Each directory the target's printer sat in, with its versions; with no target named,
    the directories of all of them (codegen_opencl.cc, codegen_cuda.cc ... moved together)."""
    from toolkit.explain.history import api

    history = api()
    v = history.versions
    name = f"codegen_{target}.cc" if target else "codegen_{opencl,cuda,metal,webgpu}.cc"
    wanted = {f"codegen_{t}.cc" for t in ([target] if target else
                                          [t for t, _ in DEVICE_COMPILERS])}
    dirs: dict[str, int] = {}
    for path, (mask, _) in history.facts.get("P", {}).items():
        folder, _, base = path.rpartition("/")
        if base in wanted:
            key = folder.replace(f"/{target or base[8:-3]}", "/*") if "/codegen_" not in \
                folder else folder
            dirs[key] = dirs.get(key, 0) | mask
    where = "; ".join(f"{folder}/{name} ({v.span(mask)})".replace("/*", f"/{target or '*'}")
                      for folder, mask in sorted(dirs.items(), key=lambda kv: kv[1] & -kv[1]))
    return where or f"src/target/source/{name}"


@cache
def printed_by_tvm(target: str) -> dict[str, tuple[str, str]]:
    """Name -> (versions, file) of what TVM's ``target`` source printer writes (``I`` facts)."""
    from toolkit.explain.history import api

    history = api()
    prefix = f"{target}:"
    return {key[len(prefix):]: (history.versions.span(mask), file)
            for key, (mask, file) in history.facts.get("I", {}).items() if key.startswith(prefix)}


@cache
def _special_printed(target: str) -> tuple[list[str], str, str]:
    """(the constants TVM's ``target`` printer writes for infinity and NaN, the first version
    writing one, its file), or ([], "", "")."""
    from toolkit.explain.history import api

    history = api()
    prefix = f"{target}:"
    hits = [(key[len(prefix):], mask, file) for key, (mask, file) in
            history.facts.get("I", {}).items()
            if key.startswith(prefix) and _FLOAT_CONSTANT.fullmatch(key[len(prefix):])]
    if not hits:
        return [], "", ""
    oldest = min(hits, key=lambda h: h[1] & -h[1])
    return sorted(h[0] for h in hits), history.versions.first(oldest[1]), oldest[2]


# The constants device languages define for infinity and NaN (INFINITY, NAN, CUDART_INF_F,
# HUGE_VALF, __int_as_float(0x7f800000) aside).
_FLOAT_CONSTANT = re.compile(r"INFINITY|NAN|HUGE_VALF?|CUDART_(?:INF|NAN)(?:_F)?")


def requirements(package: str) -> list[tuple[str, int]]:
    """(version spec, versions asking it) for ``package`` among TVM's requirements, oldest
    first; spec "" for any version."""
    return _requirements().get(package.lower().replace("_", "-"), []) if package != "tvm" else []


@cache
def _requirements() -> dict[str, list[tuple[str, int]]]:
    """Every package TVM's releases ask for -> its specs (read once, on first use)."""
    from toolkit.explain.history import api

    out: dict[str, list[tuple[str, int]]] = {}
    for name, (mask, _piece) in api().facts.get("Q", {}).items():
        m = _REQ_NAME.match(name)
        if m:
            out.setdefault(m.group(0), []).append((name[m.end():], mask))
    return {k: sorted(v, key=lambda sm: sm[1] & -sm[1]) for k, v in out.items()}


_REQ_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*?(?=[<>=!~^]|$)")


def spec_text(package: str, spec: str) -> str:
    return f"{package}{spec}" if spec else f"{package} (any version)"


def _floor(spec: str) -> str | None:
    m = re.search(r">=?\s*(\d+(?:\.\d+)*)", spec)
    return m.group(1) if m else None


def _cap(spec: str) -> str | None:
    m = re.search(r"<=?\s*(\d+(?:\.\d+)*)", spec)
    return m.group(1) if m else None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:4])


def installed_version(package: str, text: str) -> str | None:
    """The version of ``package`` a log shows (``xgboost==1.6.1``, ``xgboost 1.6.1``,
    ``xgboost-1.6.1.dist-info``, ``xgboost version: 1.6.1``), else None."""
    names = "|".join(re.escape(n) for n in {package, package.replace("_", "-"),
                                             package.replace("-", "_")})
    m = re.search(rf"(?<![\w.-])(?:{names})(?:==|-|\s+(?:version:?\s*)?|\s*:\s*)"
                  rf"(\d+\.\d+(?:\.\d+)?)\b", text, re.I)
    return m.group(1) if m else None


def header(groups: dict[str, str], text: str) -> tuple[str, str]:
    """A header the compiler does not find: what TVM's history says of it, else which file
    wants it and where it is not."""
    name = groups.get("header") or groups.get("header2") or ""
    m = re.search(r"(?P<file>[^\s:\"'(]+\.(?:cc|cpp|cu|h|hpp|mm)):\d+(?::\d+)?: fatal error: '?"
                  + re.escape(name), text) or re.search(
        r"(?P<file>[^\s:\"'(]+\.(?:cc|cpp|cu|h|hpp|mm|m)):\d+(?::\d+)?\b[^\n]*\n(?:[^\n]*\n){0,3}"
        r"[^\n]*'" + re.escape(name) + "' file not found", text)
    includer = _tree_path(m.group("file")) if m else ""
    known = _tvm_header(name, includer, m)
    if known is not None:
        return known
    wants = f" ({m.group('file')} includes it)" if m else ""
    local = ' (by "quotes": looked for beside the includer, then on the include path)' \
        if f'"{name}"' in text else ""
    return (f"{name} is not on the include path of this compile{wants}{local}: the package or "
            "tree that provides it is not installed or not checked out (a missing -dev package, "
            "a submodule not checked out), or the build does not pass its folder (-I).",
            f"find which project ships {posixpath.basename(name)} (a -dev package, a submodule, "
            "a generated file a step before this one writes) and put its folder on the include "
            "path, or run the step that makes it first")


def _tvm_header(name: str, includer: str, m: re.Match[str] | None) -> tuple[str, str] | None:
    """A missing header that is one of TVM's own files: included by a path where it is not (a
    file that moved; an includer not updated), or one that only other TVM versions have (code
    written for another TVM); None when TVM's history says nothing of it."""
    from toolkit.explain.history import api

    history = api()
    files = history.facts.get("P", {})
    if name.startswith("."):  # relative: resolve it against the includer in the tree
        if not includer:
            return None
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(includer), name))
        if resolved in files:
            return None  # TVM has it there: a checkout that lacks it, not a moved file
        tail = "/" + name.lstrip("./")
    else:
        resolved, tail = "", "/" + name
    found = sorted((f for f in files if f.endswith(tail) or f == "include" + tail),
                   key=lambda f: -files[f][0].bit_length())
    if not found:
        return None
    place = found[0]
    v = history.versions
    mask = files[place][0]
    span = v.span(mask)
    if resolved:
        return (f"{name} is TVM's own header ({place}, in TVM {span}), but {includer} names it "
                f"by a path that resolves to {resolved}, where no TVM version has it: the header "
                "or the file including it moved and the include was not updated - a bug of "
                "this TVM tree (often in a contrib part few builds turn on).",
                f"update TVM (a newer TVM fixed the include), or make the include reach "
                f"{place}; or turn off the option that builds {includer or 'that file'}")
    gone = v.after_last(mask)
    if gone:
        return (f"{name} is TVM's own header ({place}), in TVM {span} and removed in {gone}: "
                f"{includer or 'the code'} was written for an older TVM than the one it is built "
                "against.",
                f"build against TVM {span}, or port the code to the TVM in use (what replaced "
                f"{posixpath.basename(name)}: the release notes of {gone})")
    first = v.first(mask)
    if first != v.labels[0]:
        ffi = ("" if not place.startswith("3rdparty/tvm-ffi/") else
               f" It is a header of tvm-ffi (the tvm::ffi API TVM moved to in {first}): "
               f"{includer or (m.group('file') if m else 'the code')} is written for that "
               "generation, while the TVM headers "
               "(and any prebuilt library built with them) it builds against are of the older "
               "tvm::runtime generation, a generation out of step.")
        return (f"{name} is TVM's own header ({place}), added in {first}: the TVM the build "
                "includes from is older than the code that needs it." + ffi,
                f"build against TVM {first} or newer (its include/ on the include path)"
                + ("; a prebuilt library must be rebuilt from that same TVM generation, or use "
                   "the source release that matches the prebuilt" if ffi else ""))
    return None


def llvm_crash(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """The process aborted or crashed in a frame of LLVM's own library."""
    version = groups.get("ver") or ""
    function = groups.get("fn", "")
    tested = llvm_support(int(version)) if version.isdigit() else ""
    return (f"the process crashed inside LLVM {version} ({function}, in libLLVM) while TVM "
            f"drove it: this LLVM and TVM's LLVM-based code generation (llvm, NVPTX for cuda, "
            f"AMDGPU for rocm) do not work together - a bug of that LLVM release TVM meets "
            f"(TVM's AMDGPU backend needs LLVM >= 9), or a TVM built against another LLVM than "
            f"the one loaded.{tested}",
            "rebuild TVM against a newer LLVM (USE_LLVM=/path/to/llvm-config of it), and make "
            "sure the LLVM loaded is the one it was built with (`tk doctor` names a second LLVM "
            "in the process)")


# CMake commands TVM's CMake files (or an extension's) may use, and the CMake release that
# added each (cmake.org/cmake/help/latest/command/NAME.html, "New in version"). An older CMake
# stops at them with 'Unknown CMake command "NAME"'.
CMAKE_COMMANDS = {
    "target_sources": "3.1", "target_compile_features": "3.1", "continue": "3.2",
    "include_guard": "3.10", "add_compile_definitions": "3.12", "add_link_options": "3.13",
    "target_link_options": "3.13", "target_link_directories": "3.13",
    "target_precompile_headers": "3.16", "cmake_language": "3.18", "cmake_path": "3.20",
    "block": "3.25", "endblock": "3.25", "cmake_file_api": "3.27", "cmake_pkg_config": "3.31",
}
# Functions of CMake's own modules: unknown when the module is older or not include()d.
CMAKE_MODULE_FUNCTIONS = {
    "fetchcontent_makeavailable": ("FetchContent", "3.14"),
    "check_linker_flag": ("CheckLinkerFlag", "3.18"),
    "check_compiler_flag": ("CheckCompilerFlag", "3.19"),
    "check_source_compiles": ("CheckSourceCompiles", "3.19"),
    "fetchcontent_declare": ("FetchContent", "3.11"),
    "check_ipo_supported": ("CheckIPOSupported", "3.9"),
    # Modules of every CMake 3.x (cmake.org/cmake/help/v3.0/manual/cmake-modules.7.html): a
    # call fails only where the file forgot to include() them.
    "find_package_handle_standard_args": ("FindPackageHandleStandardArgs", ""),
    "check_cxx_compiler_flag": ("CheckCXXCompilerFlag", ""),
    "check_c_compiler_flag": ("CheckCCompilerFlag", ""),
    "check_include_file": ("CheckIncludeFile", ""),
    "check_include_files": ("CheckIncludeFiles", ""),
    "check_include_file_cxx": ("CheckIncludeFileCXX", ""),
    "check_function_exists": ("CheckFunctionExists", ""),
    "check_symbol_exists": ("CheckSymbolExists", ""),
    "check_cxx_symbol_exists": ("CheckCXXSymbolExists", ""),
    "check_library_exists": ("CheckLibraryExists", ""),
    "check_c_source_compiles": ("CheckCSourceCompiles", ""),
    "check_cxx_source_compiles": ("CheckCXXSourceCompiles", ""),
    "check_cxx_source_runs": ("CheckCXXSourceRuns", ""),
    "check_type_size": ("CheckTypeSize", ""),
    "check_struct_has_member": ("CheckStructHasMember", ""),
    "cmake_dependent_option": ("CMakeDependentOption", ""),
    "write_basic_package_version_file": ("CMakePackageConfigHelpers", ""),
    "configure_package_config_file": ("CMakePackageConfigHelpers", ""),
    "externalproject_add": ("ExternalProject", ""),
    "pkg_check_modules": ("FindPkgConfig", ""),
    "select_library_configurations": ("SelectLibraryConfigurations", ""),
}
# <LANG>_STANDARD values and the first CMake that compiles that language at that standard with
# any compiler (cmake.org prop_tgt/<LANG>_STANDARD: an older CMake reports "<LANG>_STANDARD is
# set to invalid value"). CUDA 17/20: "recognized" since 3.8/3.12, usable only from 3.18.
CMAKE_STANDARDS = {
    ("CXX", "17"): "3.8", ("CXX", "20"): "3.12", ("CXX", "23"): "3.20", ("CXX", "26"): "3.25",
    ("C", "17"): "3.21", ("C", "23"): "3.21",
    ("CUDA", "14"): "3.9", ("CUDA", "17"): "3.18", ("CUDA", "20"): "3.18",
    ("CUDA", "23"): "3.20", ("CUDA", "26"): "3.25",
    ("HIP", "17"): "3.21", ("HIP", "20"): "3.21", ("HIP", "23"): "3.21", ("HIP", "26"): "3.25",
}
# How CMake's language names read in prose.
LANGUAGES = {"CXX": "C++", "CUDA": "CUDA C++", "HIP": "HIP C++", "C": "C"}
# What TVM's own CMake asks of CMake, by release (apache/tvm CMakeLists.txt and cmake/ at each
# tag: `git show TAG:CMakeLists.txt`): (first release, what it needs, the CMake that has it).
TVM_CMAKE = [
    ("v0.10.0", "compiles CUDA sources as C++17 (CMAKE_CUDA_STANDARD 17)", "3.18"),
    ("v0.11.0", "asks for cmake_minimum_required(VERSION 3.18)", "3.18"),
    ("v0.15.0", "uses cmake_path in cmake/utils/FindLLVM.cmake while CMakeLists.txt still asks "
     "only for 3.18", "3.20"),
    ("v0.21.0", "sets CMAKE_CXX_STANDARD 17", "3.8"),
    ("v0.22.0", "builds 3rdparty/tvm-ffi, whose CMakeLists.txt asks for 3.26", "3.26"),
    ("v0.26.0", "sets CMAKE_CXX_STANDARD 20", "3.12"),
]


def _tvm_cmake_facts(needs: str) -> str:
    """The TVM releases whose CMake needs CMake ``needs`` (or newer), as one clause."""
    facts = [f"from {since} TVM {what}" for since, what, cmake in TVM_CMAKE
             if cmake == needs]
    return f" ({'; '.join(facts)})" if facts else ""


def cmake_command(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """An unknown CMake command: one a newer CMake added, or a module function not loaded."""
    name = groups["command"].lower()
    where = f" ({groups['where']})" if groups.get("where") else ""
    if name in CMAKE_COMMANDS:
        since = CMAKE_COMMANDS[name]
        return (f"{name} is a command of CMake {since} and later{where}; the CMake that ran is "
                f"older (too old for this project), so it stops there"
                f"{_tvm_cmake_facts(since)}.",
                f"upgrade CMake to {since} or newer (pip install 'cmake>={since}' puts a newer "
                "cmake first on PATH), then reconfigure from a clean build directory.")
    if name in CMAKE_MODULE_FUNCTIONS:
        module, since = CMAKE_MODULE_FUNCTIONS[name]
        if not since:
            return (f"{name} is a function of CMake's {module} module{where}, which every CMake "
                    f"3 has: the file calling it did not include({module}) first (where it works, "
                    "another file included it before).",
                    f"add include({module}) before the call (in that file), then reconfigure.")
        return (f"{name} is a function of CMake's {module} module (CMake {since} and later)"
                f"{where}: the CMake that ran is older, or the file did not include({module}).",
                f"use CMake {since} or newer (pip install 'cmake>={since}'), and include({module}) "
                "before the call.")
    if name.startswith("tvm_"):  # tvm_file_glob, tvm_option: cmake/utils/Utils.cmake
        return (f"{groups['command']} is a function of TVM's own CMake files (cmake/utils/ of "
                f"the TVM tree){where}: the TVM tree that defines it is not there (an empty "
                "3rdparty/tvm submodule) or its cmake/utils/Utils.cmake was not include()d.",
                "check out the TVM tree (git submodule update --init --recursive), or "
                "include(<tvm>/cmake/utils/Utils.cmake) before the call.")
    return (f"CMake does not know the command {groups['command']}{where}: a command of a newer "
            "CMake, or a function defined in a CMake file that was not included.",
            "check which CMake the project asks for (cmake_minimum_required) against "
            "`cmake --version`, and that the file defining it is include()d.")


def cmake_standard(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``<LANG>_STANDARD is set to invalid value 'N'``: this CMake cannot compile LANG as N."""
    lang, value = groups["lang"], groups["value"]
    since = CMAKE_STANDARDS.get((lang, value))
    std = LANGUAGES.get(lang, lang)
    if since is None:
        return None
    return (f"{lang}_STANDARD {value} ({std}{value}) needs CMake {since} or newer; the CMake "
            f"that ran is older (too old) and rejects the value{_tvm_cmake_facts(since)}.",
            f"upgrade CMake to {since} or newer (pip install 'cmake>={since}'), then reconfigure "
            "from a clean build directory.")


# nvcc options and the CUDA toolkit that first accepts them (NVIDIA's nvcc manual, archived per
# release at docs.nvidia.com/cuda/archive/X.Y/cuda-compiler-driver-nvcc): an older nvcc says
# "Unknown option". Value: (CUDA release, the spelling an older nvcc accepts, or "").
NVCC_OPTIONS = {
    "extended-lambda": ("10.2", "--expt-extended-lambda"),
    "threads": ("11.2", ""),
    "t": ("11.2", ""),
}
# Values of nvcc options an older nvcc rejects ("Value 'X' is not defined for option 'Y'").
NVCC_VALUES = {
    ("std", "c++17"): "11.0", ("std", "c++20"): "12.0",
    ("gpu-architecture", "all"): "11.5",
    ("gpu-architecture", "all-major"): "11.5",
}


def nvcc_option(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """nvcc refused an option or value that a newer CUDA toolkit has."""
    option = groups.get("option", "").lstrip("-")
    value = groups.get("value")
    if value is not None:
        since = NVCC_VALUES.get((option, value))
        older = ""
        what = f"--{option}={value}"
    else:
        since, older = NVCC_OPTIONS.get(option, (None, ""))
        what = f"--{option}"
    if since is None:
        return (f"nvcc does not know {what}: an option or value of another CUDA release (a newer "
                "toolkit added it, or this one dropped it), or a misspelling.",
                "compare `nvcc --version` with the CUDA release the build's flags were written "
                "for (NVIDIA's nvcc manual lists each release's options); use that CUDA or drop "
                "the flag.")
    spelled = f"; older nvcc spells it {older}" if older else ""
    return (f"nvcc accepts {what} from CUDA {since} on: this CUDA toolkit is older (too old for "
            f"the flags the build passes{spelled}).",
            f"use CUDA {since} or newer (newer CUDA: point USE_CUDA and PATH at it), or drop the "
            f"option from the build's CUDA flags{' (use ' + older + ')' if older else ''}.")


# find_libdevice_path (python/tvm/contrib/nvcc.py) reads the compute version out of libdevice's
# file name (libdevice.compute_NN.MM.bc, CUDA < 9); from CUDA 9 there is one file,
# libdevice.10.bc. Each TVM release lists the CUDA versions it knows have that layout (`git show
# TAG:python/tvm/contrib/nvcc.py`); any other CUDA falls through to the parser, which fails.
LIBDEVICE_KNOWN = [("v0.6.0", "10.0"), ("v0.7.0", "11.0"), ("v0.8.0", "11.3")]
LIBDEVICE_ROBUST = "v0.9.0"  # skips names it cannot parse


def libdevice(_groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    known = "; ".join(f"TVM {tag} knows it up to CUDA {cuda}" for tag, cuda in LIBDEVICE_KNOWN)
    return ("CUDA 9 and later ship a single libdevice.10.bc with no compute "
            "version in its name; find_libdevice_path in python/tvm/contrib/nvcc.py parses a "
            "version out of the file name unless it knows the CUDA version has that layout ("
            f"{known}), so a newer CUDA than the TVM knows fails there; TVM {LIBDEVICE_ROBUST} "
            "and later skip names they cannot parse.",
            f"update TVM to {LIBDEVICE_ROBUST} or newer (newer TVM), or use a CUDA version this "
            "TVM lists in find_libdevice_path.")


def lld_candidates(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """find_lld / find_clang (python/tvm/contrib/rocm.py, clang.py) found none of its
    candidates. TVM v0.16.0 listed ROCm's LLVM directory itself, /opt/rocm/llvm/bin, instead of
    the ld.lld inside it (apache/tvm#16540); v0.17.0 looks for /opt/rocm/llvm/bin/ld.lld
    (apache/tvm#16907)."""
    tool, listed = groups["tool"], groups.get("list", "")
    home = ("find_lld in python/tvm/contrib/rocm.py" if tool == "ld.lld"
            else "find_clang in python/tvm/contrib/clang.py")
    what = ("LLVM's lld, the linker TVM uses for ROCm code objects" if tool == "ld.lld"
            else "the compiler TVM calls for C and LLVM sources")
    cause = (f"{home} looked for {tool} under the names it lists and found none on PATH "
             f"({tool} is {what}).")
    fix = (f"install {tool} (ROCm ships it in /opt/rocm/llvm/bin) and put its directory on "
           "PATH (export PATH=/opt/rocm/llvm/bin:$PATH).")
    directory = re.search(r"'(/[^']*/bin)/?'", listed)
    if tool == "ld.lld" and directory:
        cause += (f" The list holds the directory {directory.group(1)}, not a program: the bug of "
                  "TVM v0.16.0's find_lld, which named the directory instead of the ld.lld "
                  f"inside it, so {directory.group(1)}/ld.lld is never found; fixed in v0.17.0.")
        fix += (f" Or update TVM to v0.17.0 or newer (newer TVM), which tries "
                f"{directory.group(1)}/ld.lld.")
    return cause, fix


# What TVM's SPIR-V builder (src/target/spirv/ir_builder.cc, IRBuilder::AddCapabilityFor) asks
# of the Vulkan target before it emits a type, and the target attribute that says the device
# has it (filled from the device's Vulkan features, or given in the target).
VULKAN_CAPABILITIES = {
    "Float16": ("float16", "supports_float16"), "Float64": ("float64", "supports_float64"),
    "Int8": ("int8", "supports_int8"), "Int16": ("int16", "supports_int16"),
    "Int64": ("int64", "supports_int64"),
    "StorageBuffer8BitAccess": ("8-bit storage buffers", "supports_8bit_buffer"),
    "StorageBuffer16BitAccess": ("16-bit storage buffers", "supports_16bit_buffer"),
    "integer dot product": ("integer dot product", "supports_integer_dot_product"),
}


def vulkan_capability(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    dtype, attr = VULKAN_CAPABILITIES.get(groups["cap"], (groups["cap"], ""))
    where = f" (the target attribute {attr})" if attr else ""
    return (f"the code uses {dtype}, and the Vulkan target does not have that capability{where}: "
            "TVM takes it from what the GPU's Vulkan driver reports, so this GPU (hardware) or "
            f"its driver does not support {dtype} in shaders; the check is "
            "IRBuilder::AddCapabilityFor in src/target/spirv/ir_builder.cc.",
            f"check the device with `vulkaninfo` (shader{dtype.capitalize()} / storage features); "
            f"use a model or dtype without {dtype} (e.g. a q4f32 quantization instead of q4f16), "
            "update the GPU driver, or run on a GPU that supports it"
            + (f"; if the device does support it, say so in the target: {attr}=1" if attr else "")
            + ".")


def cmake_too_old(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``CMake X or higher is required. You are running version Y``, with the TVM releases
    whose CMake asks for X."""
    need, have = groups["need"], groups["have"]
    return (f"this project asks for CMake {need} or newer (cmake_minimum_required) and the cmake "
            f"on PATH is {have}, too old{_tvm_cmake_facts(need)}.",
            f"pip install 'cmake>={need}' ninja (puts a newer cmake first on PATH), then "
            "reconfigure from a clean build directory.")


# The oldest LLVM each TVM generation's cmake/utils/FindLLVM.cmake accepts ("TVM requires LLVM
# X or higher"; `git show TAG:cmake/utils/FindLLVM.cmake`): (first release, LLVM).
LLVM_MINIMUM = [("v0.6.0", "4.0"), ("v0.24.0", "15.0")]


def llvm_too_old(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    need = groups["need"]
    since = [tag for tag, llvm in LLVM_MINIMUM if llvm == need]
    which = f"TVM {since[0]} and later refuse" if since else "this TVM refuses"
    major = need.split(".")[0]
    return (f"{which} LLVM older than {need} (cmake/utils/FindLLVM.cmake), and the llvm-config "
            f"that USE_LLVM names is older.",
            f"install LLVM {major} or newer (e.g. apt-get install llvm-{max(int(major), 16)}-dev) "
            f"and point USE_LLVM at its llvm-config: set(USE_LLVM \"llvm-config-"
            f"{max(int(major), 16)} --ignore-libllvm --link-static\"), or build an older TVM.")


# The oldest compiler that takes a language standard's flag (what CMake asks of it for
# "<LANG><N>"): (CMake's compiler id, language, standard) -> the release. nvcc: NVIDIA's CUDA
# release notes (-std=c++17 from CUDA 11.0, c++20 from 12.0); GCC: the first release with
# -std=c++1z / c++2a / c++2b / c++2c, the flags CMake passes.
COMPILER_STANDARDS = {
    ("NVIDIA", "CUDA", "17"): "CUDA 11.0", ("NVIDIA", "CUDA", "20"): "CUDA 12.0",
    ("GNU", "CXX", "17"): "GCC 5.1", ("GNU", "CXX", "20"): "GCC 8",
    ("GNU", "CXX", "23"): "GCC 11", ("GNU", "CXX", "26"): "GCC 14",
}


def cmake_dialect(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``Target requires the language dialect "CUDA17" ... the current compiler "NVIDIA" does
    not support this, or CMake does not know the flags``: a compiler or a CMake too old."""
    lang, value, compiler = groups["lang"], groups["value"], groups.get("compiler", "")
    cmake = CMAKE_STANDARDS.get((lang, value))
    tool = COMPILER_STANDARDS.get((compiler, lang, value))
    std = LANGUAGES.get(lang, lang)
    needs = [f"{tool} or newer (the compiler {compiler})" if tool else "",
             f"CMake {cmake} or newer (the first that knows its flags)" if cmake else ""]
    needs = [n for n in needs if n]
    if not needs:
        return None
    facts = _tvm_cmake_facts(cmake) if cmake else ""
    return (f"the target asks for {std}{value}, which needs {' and '.join(needs)}: the "
            f"compiler or the CMake here is older (too old){facts}.",
            f"upgrade what is older: {'; '.join(needs)} (pip install 'cmake>={cmake}' for CMake"
            ")." if cmake else f"upgrade what is older: {'; '.join(needs)}.")


def empty_subdirectory(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``add_subdirectory`` of a directory without CMakeLists.txt: under ``3rdparty/`` (where
    TVM, MLC-LLM and TileLang keep their git submodules) an uninitialised submodule."""
    path = groups["dir"].rstrip("/")
    if "/3rdparty/" not in f"/{path}/":
        return None
    name = path.split("/3rdparty/", 1)[-1] if "/3rdparty/" in path else path
    defines = (" (TVM's tvm_file_glob and tvm_option, of its cmake/utils/Utils.cmake)"
               if name.split("/")[0] == "tvm" else "")
    return (f"{path} is empty: the git submodule 3rdparty/{name} was never checked out (a "
            "clone without --recursive, or a download of the repository without its "
            "submodules), so CMake finds nothing to add, and the functions that tree "
            f"defines{defines} are unknown after it.",
            "git submodule update --init --recursive in the checkout (or clone again with "
            "--recursive), then configure from a clean build directory.")


# The helpers gcc's and compiler-rt's runtime libraries define for half-precision
# conversions (soft-fp names: hf = half, sf = float, df = double, tf/xf = long double).
_HALF_HELPER_TYPES = {"sf": "float", "df": "double", "tf": "long double (128-bit)",
                      "xf": "long double (x87)"}


def half_float_helper(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """An fp16 conversion helper (``__extendhftf2``, ``__gnu_h2f_ieee``, ...) that the
    compiler called and the runtime library at link or load time lacks."""
    sym = groups["sym"]
    m = re.fullmatch(r"__(extend|trunc)(\w\w)(\w\w)2", sym)
    if m:
        other = _HALF_HELPER_TYPES.get(m.group(3) if m.group(1) == "extend" else m.group(2), "")
        what = (f"converts a half (fp16) value to {other}" if m.group(1) == "extend"
                else f"converts {other} to half (fp16)")
    else:
        what = "converts between half (fp16) and float (ARM's __fp16 ABI)"
    return (f"{sym} is a helper of the compiler's runtime library (libgcc or compiler-rt) that "
            f"{what}: code compiled with __fp16 or _Float16 calls it, and the libgcc/"
            "compiler-rt in the link or at load time does not define it. In TVM, libtvm "
            "needed __extendhftf2 (half to long double, on arm64) from the __fp16 cast in "
            "ToScalar of src/relay/transforms/pattern_util.h (apache/tvm#6415); apache/tvm#6431 "
            "replaced that cast with TVM's own half-float conversion, first released in v0.7.0.",
            "update TVM to v0.7.0 or newer (or apply apache/tvm#6431) and rebuild; for other "
            "code, build with a compiler whose runtime library has the helper (newer gcc, or "
            "clang with compiler-rt: -rtlib=compiler-rt), or link libgcc statically "
            "(-static-libgcc).")


def pytorch_fallback_op(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """ATen / PythonOp in an ONNX model: PyTorch's exporter wrote its own operators."""
    op = groups["op"]
    how = ("ONNX_ATEN or ONNX_ATEN_FALLBACK, for PyTorch operators it found no ONNX form "
           "for" if op == "ATen" else "ONNX_FALLTHROUGH, for a custom torch.autograd.Function")
    return (f"{op} is not an ONNX operator: PyTorch's exporter (torch.onnx.export) writes it "
            f"when asked to fall back to PyTorch's own operators (operator_export_type={how}); "
            "only PyTorch's runtime knows what it computes, so TVM's ONNX frontend has no "
            "general converter for it.",
            "export the model again with the default operator_export_type (ONNX) and a recent "
            "opset, so every node is a standard ONNX operator, or skip ONNX and import the "
            "PyTorch model with TVM's PyTorch frontend (torch.export + "
            "tvm.relax.frontend.torch.from_exported_program; relay.frontend.from_pytorch "
            "before v0.20).")


# The wheels PyPI publishes for apache-tvm and apache-tvm-ffi, per release, as "PYTHON ABI
# PLATFORM" (scripts/pypi_wheels.py writes it, with the date it read PyPI).
WHEELS_ORIGIN = "PyPI wheel table"


def _wheels() -> dict:
    return table("wheels")


def _wheel_summary(wheels: list[str]) -> str:
    """'py3 on linux-x86_64, ...' - one phrase per Python/ABI tag, with its platforms."""
    by_python: dict[str, list[str]] = {}
    for wheel in wheels:
        python, abi, platform = wheel.split()
        by_python.setdefault(python if abi in ("none", python) else f"{python}-{abi}",
                             []).append(platform)
    return "; ".join(f"{python} on {', '.join(sorted(set(p)))}"
                     for python, p in sorted(by_python.items()))


def _python_tag(python: str) -> str:
    """'3.12' or 'cp312' -> 'cp312'."""
    return python if python.startswith("cp") else "cp" + python.replace(".", "")


def _installs_on(wheel: str, tag: str) -> bool:
    """Whether a wheel "PYTHON ABI PLATFORM" installs on CPython ``tag`` (cp312)."""
    python, abi, _platform = wheel.split()
    minor = int(tag[3:]) if tag[3:].isdigit() else 0
    if python in ("py3", "py2.py3"):
        return True
    if abi == "abi3":  # the stable ABI: this CPython and every later one
        return python[3:].isdigit() and minor >= int(python[3:])
    return python == tag


def _platform_shown(text: str) -> str:
    """The platform family a log shows (a Windows path, macOS, a machine name), or ""."""
    windows = re.search(r"\b[A-Z]:\\|\bwin(?:32|_amd64|_arm64|dows)\b", text, re.I)
    mac = re.search(r"\bmacOS\b|\bdarwin\b|\bmacosx\b|/Users/", text, re.I)
    arm = re.search(r"\b(?:aarch64|arm64)\b", text)
    x86 = re.search(r"\b(?:x86_64|amd64|AMD64)\b", text)
    if windows:
        return "win-arm64" if arm else "win-amd64"
    if mac:
        return "macos-x86_64" if x86 and not arm else "macos-arm64"
    if arm or x86:
        return "linux-aarch64" if arm else "linux-x86_64"
    return ""


def wheel_missing(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """pip or uv found no distribution of apache-tvm(-ffi) for this interpreter: what PyPI
    publishes, by release, Python and platform."""
    package = (groups.get("package") or "").lower().replace("_", "-")
    table = _wheels()
    releases = table["packages"].get(package)
    if releases is None:
        return None
    fetched = table.get("fetched", "?")
    wanted = groups.get("version") or ""
    seen = (groups.get("versions") or "").strip()
    tag = groups.get("tag") or ""
    if not tag:
        m = re.search(r"\b(?:cp(3\d{1,2})\b|[Pp]ython ?(3\.\d{1,2})\b|python(3\.\d{1,2})/)", text)
        tag = _python_tag(next(g for g in m.groups() if g)) if m else ""
    listed = sorted((r for r in releases if re.fullmatch(r"[\d.]+(?:\.post\d+)?", r)), key=_key)
    span = f"{listed[0]} to {listed[-1]}" if listed else "none"
    parts = [f"PyPI publishes {package} as binary wheels only, one per Python version (tag "
             "cpXY, or py3 for any Python 3) and platform (manylinux x86_64 or aarch64, macOS "
             "arm64, Windows amd64), and pip offers only the releases with a wheel for this "
             "interpreter's Python and platform"]
    if seen == "none":
        parts.append("pip found no release with one")
    elif seen:
        parts.append(f"the versions pip found for it ({seen}) are those")
    if wanted and wanted in releases:
        platform = _platform_shown(text)
        has = {w.split()[2] for w in releases[wanted]}
        parts.append(f"{package} {wanted} has wheels for {_wheel_summary(releases[wanted])}: "
                     + (f"none for {platform}, the platform this log shows"
                        if platform and platform not in has else
                        "this interpreter's Python or platform is not among them"))
    elif wanted:
        parts.append(f"{package} {wanted} had no wheel for this Python or platform (on other "
                     f"platforms it may have had: PyPI no longer lists {wanted}; it lists "
                     f"{span})")
    if tag:
        fits = [r for r in listed if any(_installs_on(w, tag) for w in releases[r])]
        parts.append(f"this is CPython {tag[2]}.{tag[3:]} ({tag}): no release then had a "
                     f"{tag} wheel; of those PyPI lists now, "
                     + (f"{fits[0]} to {fits[-1]} have wheels it installs"
                        if fits else "none has a wheel it installs"))
    return ("; ".join(parts) + f" (PyPI's JSON API, read {fetched}).",
            f"install a release that has a wheel for this Python and platform (pip install "
            f"'{package}>={listed[-1] if listed else ''}'), or use a Python version and platform "
            f"the release you need was built for (pip download {package}==VERSION --no-deps "
            "--python-version 3.X --platform manylinux_2_28_x86_64 tells whether one exists), "
            "or build TVM from source")


_CUDA_INCLUDE_FLAG = re.compile(r"(?:^|\s)-I(?P<dir>\S*)")


def cuda_header(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A CUDA toolkit header the compiler does not find: which include flags the build gave."""
    header = groups.get("header", "")
    flags = [m.group("dir") for m in _CUDA_INCLUDE_FLAG.finditer(text)]
    said = []
    if "/include" in flags:
        said.append("the command line has -I/include: the CUDA toolkit's root (CUDA_PATH in "
                    "the old Makefile build's config.mk) is empty, so its include directory "
                    "became /include")
    wrong = re.search(r"(?:^|\s)(?P<flag>-[lL]\S*cuda\S*/include)\b", text)
    if wrong:
        said.append(f"{wrong.group('flag')} names the CUDA include directory with a library "
                    "flag (-l/-L) instead of -I")
    cudnn = header.startswith("cudnn")
    owner = "cuDNN (installed apart from the CUDA toolkit)" if cudnn else "the CUDA toolkit"
    return (f"{header} belongs to {owner}, and its include directory is not on the compiler's "
            "include path" + (": " + "; ".join(said) if said else "") + ".",
            "point the build at the toolkit: with CMake set(USE_CUDA /usr/local/cuda) (or "
            "-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda, CUDA_PATH / CUDA_HOME in the environment); "
            "with the old Makefile build CUDA_PATH = /usr/local/cuda in config.mk, or ADD_CFLAGS "
            "+= -I/usr/local/cuda/include" + ("; for cuDNN set USE_CUDNN to its path, or turn "
                                              "USE_CUDNN off" if cudnn else ""))


def _mangled_names(symbol: str) -> tuple[list[str], bool, bool]:
    """The source names in an Itanium-mangled symbol, and whether it spells std::string the
    old libstdc++ ABI's way (``Ss``) or the C++11 ABI's (``NSt7__cxx11``)."""
    names, old, i = [], False, 0
    while i < len(symbol):
        if symbol[i].isdigit() and symbol[i - 1] not in "ST":  # S3_, T0_ are back-references
            j = i
            while j < len(symbol) and symbol[j].isdigit():
                j += 1
            n = int(symbol[i:j])
            names.append(symbol[j:j + n])
            i = j + n
            continue
        if symbol.startswith("Ss", i):
            old = True
        i += 1
    return names, old, "__cxx11" in names


def _demangled_function(symbol: str) -> str:
    """The qualified name a mangled symbol's nested name spells (_ZN3tvm7runtime...E)."""
    m = re.match(r"_ZN[KVr]*", symbol)
    if m is None:
        names = _mangled_names(symbol)[0][:1]
    else:  # each part is its length and its name (JSONSchemaToEBNF holds an E)
        names, pos = [], m.end()
        while (size := re.match(r"\d+", symbol[pos:])) is not None:
            start = pos + size.end()
            names.append(symbol[start:start + int(size.group())])
            pos = start + int(size.group())
    return "::".join(n for n in names if n != "__cxx11")


def cxx_abi(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """An undefined symbol whose std::string is of one libstdc++ ABI, when the library that
    would export it was built with the other (``_GLIBCXX_USE_CXX11_ABI``)."""
    symbol = groups.get("sym", "")
    _names, old, new = _mangled_names(symbol)
    if not old and not (new and re.search(r"tensorflow|\btorch\b|libtorch", text, re.I)):
        return None
    function = _demangled_function(symbol)[:120]
    lib = groups.get("lib") or "the library"
    if old:
        said = (f"{lib} asks for {function} with std::string of the old libstdc++ ABI "
                "(_GLIBCXX_USE_CXX11_ABI=0: the mangled name spells std::string 'Ss'), and the "
                "library that defines it was built with the C++11 ABI (std::__cxx11::"
                "basic_string), so the two names differ")
    else:
        said = (f"{lib} asks for {function} with the C++11 ABI's std::__cxx11::string, and the "
                "library that defines it may have been built with the old ABI "
                "(_GLIBCXX_USE_CXX11_ABI=0), as TensorFlow's pip packages and PyTorch's "
                "pre-cxx11 wheels are")
    return (said + ": the two sides of the C++ ABI (libstdc++ dual ABI) do not match.",
            "build both with the same _GLIBCXX_USE_CXX11_ABI: add -D_GLIBCXX_USE_CXX11_ABI=0 "
            "(or 1) to TVM's CMAKE_CXX_FLAGS and to the other library's build (TensorFlow tells "
            "its value in tf.sysconfig.get_compile_flags(), PyTorch in "
            "torch._C._GLIBCXX_USE_CXX11_ABI), then rebuild")


_INSTALLED = re.compile(r"\b(?P<name>apache[-_]tvm[-_]ffi|tilelang|mlc[-_]llm\w*|mlc[-_]ai\w*|"
                        r"flashinfer\w*|apache[-_]tvm)(?:==|\s+|-)v?(?P<ver>\d+\.\d+[\w.+]*)", re.I)


def packages_shown(text: str) -> dict[str, str]:
    """The versions of tvm-ffi and the packages built on it (TVM, tilelang, MLC-LLM,
    FlashInfer) that a log shows (``pip list``, ``==`` pins, wheel names)."""
    return {m.group("name").lower().replace("_", "-"): m.group("ver")
            for m in _INSTALLED.finditer(text)}


def ffi_symbol_skew(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A library needs a tvm-ffi symbol the loaded libtvm_ffi.so lacks: the versions the log
    shows, when it shows them."""
    seen = packages_shown(text)
    if not seen:
        return None
    shown = ", ".join(f"{n} {v}" for n, v in seen.items())
    lib = (groups.get("lib") or "the library").rsplit("/", 1)[-1]
    return (f"{lib} needs {groups.get('sym', 'a tvm-ffi symbol')}, which the libtvm_ffi.so "
            f"loaded here does not export: it was compiled against another apache-tvm-ffi "
            f"version than the one installed (the log shows {shown}).",
            "install the apache-tvm-ffi version the library was built against (pin or "
            "downgrade it: the package's requirements name its range, pip show PACKAGE), or "
            "rebuild the library against the installed tvm-ffi; `tk ext check LIB.so` and "
            "`tk doctor` show both sides")


def ffi_registered_twice(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """tvm-ffi refuses a second registration of a type attribute: two generations of
    tvm-ffi-using code in one process."""
    attr = groups.get("attr", "")
    seen = packages_shown(text)
    shown = ", ".join(f"{n} {v}" for n, v in seen.items())
    ffi = sorted(_wheels()["packages"].get("apache-tvm-ffi", {}), key=_key)
    finals = [v for v in ffi if re.fullmatch(r"[\d.]+(?:\.post\d+)?", v)]
    return (f"the type attribute {attr} is registered twice for one type: the installed "
            "apache-tvm-ffi already registers it itself, and a package built or written for "
            "another tvm-ffi version (tilelang, MLC-LLM or a TVM of another generation, which "
            "registered it on its own) does it again, so tvm-ffi aborts"
            + (f" (the log shows {shown})" if shown else "") + ".",
            "install the apache-tvm-ffi version that package was built against (downgrade: pin "
            + (f"pip install 'apache-tvm-ffi<{seen['apache-tvm-ffi']}'"
               if "apache-tvm-ffi" in seen else "it below the installed version")
            + "; the package's requirements name its range: pip show PACKAGE), or a release of "
            "the package built for this tvm-ffi; or rebuild the package from source against the "
            "installed tvm-ffi"
            + (f" (PyPI lists apache-tvm-ffi {finals[0]} to {finals[-1]}, read "
               f"{_wheels().get('fetched', '?')})" if finals else ""))


_VENDORED_DIR = re.compile(r"(?:^|/)(?P<dir>3rdparty/[\w.-]+|dmlc-core|dlpack|HalideIR|dmlc|tvm-ffi)/")


def _make_target(groups: dict[str, str]) -> tuple[str, str]:
    """(library, output) of make's 'No rule to make target' in English or Chinese (the rules'
    regex names their groups apart: ``lib``/``out`` and ``lib_zh``/``out_zh``)."""
    return groups.get("lib") or groups["lib_zh"], groups.get("out") or groups["out_zh"]


def library_not_built_first(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``No rule to make target 'host_standalone_crt/libutvm_rpc_common.a', needed by
    'libtvm_runtime.dylib'``: a library file linked by path, built by another target."""
    lib, out = _make_target(groups)
    folder = lib.rsplit("/", 1)[0] if "/" in lib else ""
    made = f" (the target of {folder}/)" if folder else ""
    tvm = ""
    if "standalone_crt" in lib:
        # CMakeLists.txt before apache/tvm#6524 (v0.7.0): libtvm and libtvm_runtime linked
        # host_standalone_crt's libraries with no add_dependencies on that target.
        tvm = (" Here it is TVM's standalone CRT, built with USE_MICRO: before v0.7.0 "
               "(apache/tvm#6524) CMakeLists.txt linked tvm and tvm_runtime with "
               "host_standalone_crt's libraries without add_dependencies(tvm "
               "host_standalone_crt).")
    return (f"make links {out} with {lib}, which no rule make knows builds: a library file "
            f"linked by path that another target builds{made} with no dependency saying that "
            "target comes first (CMake's Unix Makefiles generator orders a link after a "
            "library only through target dependencies: add_dependencies, or linking the "
            f"target by name), or a path where nothing is built.{tvm}",
            ("update TVM to v0.7.0 or newer, or " if tvm else "") +
            "build the target that makes it first (make <that target>, then make), or "
            "configure with the Ninja generator (cmake -G Ninja); in your own CMake, link the "
            "target by name or add_dependencies on it")


# LLVM's components that Debian's and apt.llvm.org's packages ship apart from libllvm-N-dev,
# while LLVM's exported link list (LLVMExports.cmake, llvm-config --libs) still names them
_LLVM_PARTS = {"Polly": "libpolly-{n}-dev", "MLIR": "libmlir-{n}-dev", "clang": "libclang-{n}-dev",
               "lld": "liblld-{n}-dev"}


def installed_file_missing(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``No rule to make target '/usr/lib/llvm-18/lib/libPolly.a', needed by 'libtvm.so'``: a
    library file in the system's folders that a link names and nothing builds: a package's
    link list names a file the package installed does not hold."""
    lib, out = _make_target(groups)
    llvm = re.search(r"/llvm-?(\d+)/", lib)
    base = lib.rsplit("/", 1)[-1]
    if llvm:
        n = llvm.group(1)
        part = next((k for k in _LLVM_PARTS if base.lower().startswith(f"lib{k.lower()}")), None)
        package = _LLVM_PARTS[part].format(n=n) if part else f"the LLVM {n} package that ships it"
        return (f"{out} links {lib}, which LLVM {n}'s link list (its CMake exports, "
                f"llvm-config --libs) names but the LLVM install does not hold: "
                f"{'LLVM ' + part + ' is' if part else 'that part of LLVM is'} packaged apart "
                f"(apt.llvm.org's and Debian's packages), and the package is not installed.",
                f"install {package} (or point USE_LLVM at a complete LLVM install, such as "
                "the llvm-config of a release tarball), then configure again")
    return (f"{out} links {lib}, a file in the system's folders that nothing in this build "
            "makes and that is not there: the package whose link list names it is installed "
            "without it (another package ships that file).",
            f"install the package that ships {base} (apt-file search {base} / dnf provides "
            f"'*/{base}'), then configure again")


# A library that names itself before CUDA's words: "TVMError: FlashInfer ParallelTopP...
# error no kernel image is available for execution on the device".
_KERNEL_LIB = re.compile(r"(?:^|:\s)(?P<lib>[A-Z][A-Za-z0-9]+)\b[^\n:]*?\berror:? no kernel "
                         r"image is available")


def no_kernel_image(_groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A kernel with no code for the GPU: TVM's module (the rule's own words), or a library
    that names itself."""
    m = _KERNEL_LIB.search(text)
    if m is None:
        return None
    lib = m["lib"]
    return (f"{lib}'s CUDA kernels have no code for this GPU's compute capability "
            f"(cudaErrorNoKernelImageForDevice): {lib} was built for other architectures, or "
            "does not support this GPU (some libraries ship kernels only from compute "
            "capability 8.0, sm_80, on).",
            f"compare the GPU's compute capability (nvidia-smi --query-gpu=compute_cap) with "
            f"the architectures {lib} supports and was built for: build it for this one, or "
            f"turn {lib} off in the program that uses it")


# tvm-ffi's builtin type indexes (include/tvm/ffi/c_api.h, TVMFFITypeIndex, v0.1.0 on): the
# values a TVMFFIAny carries without an object; 64 and on are its static object types.
FFI_BUILTIN_TYPES = {0: "None", 1: "int", 2: "bool", 3: "float", 4: "void* (OpaquePtr)",
                     5: "DataType", 6: "Device", 7: "DLTensor* (kTVMFFIDLTensorPtr)",
                     8: "const char* (RawStr)", 9: "TVMFFIByteArray* (ByteArrayPtr)",
                     10: "ObjectRValueRef", 11: "SmallStr", 12: "SmallBytes"}
# Builtin indexes the TypeTable of early releases did not reserve (src/ffi/object.cc: git
# show v0.1.1 / v0.1.2): DLTensor* from v0.1.2 (apache/tvm-ffi#239).
FFI_TYPE_RESERVED_FROM = {7: "v0.1.2"}


def ffi_builtin_type(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``Cannot find type info for type_index=7``: a builtin type the TypeTable lacks."""
    index = int(groups["index"])
    name = FFI_BUILTIN_TYPES.get(index)
    if name is None:
        return NOT_THIS  # an object type's index: which library registers it, the log does not say
    since = FFI_TYPE_RESERVED_FROM.get(index)
    fixed = (f"; apache-tvm-ffi registers it from {since} on (older releases never reserved "
             "it, so any message that names the type of such a value fails)" if since else "")
    return (f"type_index={index} is tvm-ffi's builtin type {name}: a value of that type reached "
            "code that looks up its type info (building a type-mismatch message, a "
            "conversion), and the TypeTable of the apache-tvm-ffi in use has no entry for it"
            f"{fixed}.",
            (f"update apache-tvm-ffi to {since} or newer (pip install -U apache-tvm-ffi); the "
             "message the lookup was building is then shown" if since
             else "update apache-tvm-ffi, and report it to apache/tvm-ffi with the call that "
             "passes that value"))


def cute_atom_not_enabled(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``Attempting to use SM89_16x8x32_F32E4M3E4M3F32_TN without
    CUTE_ARCH_MMA_F32_SM89_ENABLED``: CuTe's fallback for an atom compiled out."""
    atom, macro = groups["atom"], groups["macro"]
    supported = macro.removesuffix("_ENABLED") + "_SUPPORTED"
    sm = re.search(r"SM(\d{2,3})(A?)(?:_|$)", macro)
    if sm and sm.group(2):  # sm_90a's features exist only on the a-target, not on newer ones
        arch, newer = f"sm_{sm.group(1)}a", " (compiled with that exact target)"
    else:
        arch, newer = (f"sm_{sm.group(1)}" if sm else "the architecture it names"), " or newer"
    return (f"the kernel uses CuTe's {atom}, whose body CUTLASS compiles only where {macro} is "
            f"defined, and it was not: CUTLASS defines it in the device pass for {arch}{newer} "
            f"when {supported} is defined too, which CUTLASS sets from "
            "the nvcc version (a new enough CUDA for the instruction); the kernel was compiled "
            "for an older architecture, or by an nvcc (or a CUTLASS copy) that does not set "
            f"{supported}, so the atom's fallback asserts when it runs.",
            f"compile the kernel for {arch}{newer} (-arch / the target's arch) with a CUDA "
            f"that has the instruction; where the nvcc has it but this CUTLASS does not say so, "
            f"define the macro for the compile (NVCC_APPEND_FLAGS=-D{supported}, or the "
            "compiler's flags)")


_AVAILABLE = re.compile(r"Available loaders are (?P<avail>.*?)(?:\.\s|\.?$)", re.M)
# The global a TVM registers to load a module of type key X, by generation: v0.2-v0.6,
# v0.7-v0.21, and since the FFI refactor.
_LOADERS = ("module.loadbinary_{}", "runtime.module.loadbinary_{}", "ffi.Module.load_from_bytes.{}")


def _loader_versions(history: ApiHistory, kind: str) -> int:
    """The versions that register a loader for module type ``kind``, under any generation's
    name."""
    mask = 0
    for form in _LOADERS:
        mask |= (history.get("F", form.format(kind)) or (0, ""))[0]
    return mask


def module_loader(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """``Binary was created using {relax.Executable} but a loader of that name is not
    registered``: a device runtime not loaded (the rule's own words), or a module type of
    another TVM version, or of no TVM release."""
    from toolkit.explain.history import api

    kind = groups["kind"]
    history = api()
    v = history.versions
    mask = _loader_versions(history, kind)
    newest = len(v.labels) - 1
    if mask >> newest & 1:
        return None  # main still loads it: a runtime not built or not loaded, as the rule says
    avail = _AVAILABLE.search(text)
    here = [a.strip() for a in avail["avail"].split(",")] if avail else []
    if not mask:
        return (f"no Apache TVM release from {v.labels[0]} on registers a loader for module type "
                f"{kind}: the library holds a module of an extension or of a project built on "
                "TVM (or a fork), whose library registers its loader and was not loaded first.",
                "load the library or package that defines that module type before loading this "
                "one, or rebuild the library without it")
    # A loader this runtime has for the kind's successor: the same last word, another name
    # (relax.Executable -> relax.VMExecutable)
    last = kind.rsplit(".", 1)[-1].lower()
    near = [a for a in here if a != kind and last in a.lower()]
    since = _loader_versions(history, near[0]) if near else 0
    now = (f"; this runtime loads {near[0]} (TVM {v.span(since)}), the same kind under its "
           "newer name" if since else "")
    return (f"TVM registers a loader for module type {kind} only in {v.span(mask)}{now}: the "
            "library was compiled by a TVM of another version than the runtime loading it, "
            "and the module type was renamed or dropped in between (out of step).",
            f"recompile the library (the model library) with the TVM of the runtime that loads "
            f"it, or load it with a TVM of {v.span(mask)}")


def ffi_arity(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``Function tvmjs.array.decode_storage(...) expects 4 arguments, but 3 were provided``."""
    name = groups.get("name") or groups.get("name2") or ""
    want = groups.get("want") or groups.get("want2")
    got = groups.get("got") or groups.get("got2")
    web = ""
    if name.startswith("tvmjs."):
        web = (" tvmjs.* functions belong to TVM's web runtime: its JavaScript (web/src) calls "
               "them in the wasm runtime built from TVM's C++, and the two are out of step - "
               "built from different TVM commits.")
    return (f"{name} is registered (in C++) to take {want} arguments and was called with {got}: "
            "the caller was written for another version of the function than the library "
            f"that registers it (the two are out of step), or the call is wrong.{web}",
            ("rebuild TVM's web runtime and its JavaScript from one TVM commit (web-llm: "
             "scripts/prep_deps.sh), and rebuild the model libraries with it" if web else
             "use the caller and the library of one version (reinstall or rebuild the one "
             f"that is behind), or pass {want} arguments as this library's {name} takes"))


_CMAKE_AT = re.compile(r"CMake Error at (?P<file>\S+):\d+ \((?:add_executable|add_library)\)")


def cmake_no_sources(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``No SOURCES given to target: opencl-cpptest``: the list a glob filled is empty."""
    target = groups["target"]
    at = _CMAKE_AT.search(text)
    where = f" ({at['file']})" if at else ""
    nested = ""
    if at and "3rdparty/" in at["file"].replace("\\", "/"):
        nested = (" The file is in a project included by another (under 3rdparty/): there "
                  "CMAKE_SOURCE_DIR is the outer project's folder, so a pattern built from it "
                  "looks in the wrong tree.")
    tvm, fix = "", ""
    if target == "opencl-cpptest":
        # cmake/modules/OpenCL.cmake: globbed ${CMAKE_SOURCE_DIR}/tests/cpp-runtime/opencl up
        # to v0.15.0, a path relative to TVM's tree from v0.16.0 (git show TAG:...)
        tvm = (" opencl-cpptest is TVM's OpenCL C++ test binary, built when USE_OPENCL_GTEST is "
               "set; up to v0.15.0 cmake/modules/OpenCL.cmake looked for its sources under "
               "${CMAKE_SOURCE_DIR}/tests/cpp-runtime/opencl.")
        fix = "unset USE_OPENCL_GTEST (the tests are not needed to use TVM), or update TVM to " \
              "v0.16.0 or newer; otherwise "
    return (f"the list of sources given to {target}{where} is empty: most often the file(GLOB) "
            "that fills it matched nothing, its pattern naming a folder where the files are "
            f"not (or the variable is unset).{nested}"
            f"{tvm}",
            f"{fix}check the glob's folder (message(STATUS ...) the variable), and build the "
            "path from the including file's own folder (CMAKE_CURRENT_SOURCE_DIR or "
            "PROJECT_SOURCE_DIR), not CMAKE_SOURCE_DIR")


def posix_only_module(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``No module named 'fcntl'``: a Unix-only standard module, on Windows."""
    mod = groups["mod"]
    # the importing file: the traceback frame above the error
    frames = re.findall(r'File "([^"]+)", line \d+', text)
    where = f" ({frames[-1]} imports it)" if frames else ""
    return (f"{mod} is a module of Python's standard library that exists only on POSIX systems "
            f"(Linux, macOS; Unix), not on Windows, and the code imports it unconditionally"
            f"{where}: that code does not run on Windows as it is.",
            f"run it on Linux or macOS (or in WSL on Windows), or update the code that imports it:"
            f" a newer version may import {mod} only where it exists (guarded by sys.platform or "
            "a try/except)")


def runtime_off(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``OpenCL runtime not enabled, return a source module...``: TVM's build_X_off.cc."""
    runtime = groups["rt"]
    option = f"USE_{runtime.upper()}"
    saved = ("; exporting it (export_library, PackImportsToC) then fails, as a source module "
             "has no SaveToBinary" if "SaveToBinary" in text else "")
    return (f"this TVM library was built without the {runtime} runtime ({option} OFF), so "
            f"building for {runtime} returned a source module - the generated kernel source "
            f"only, which cannot run or be saved as a binary{saved}.",
            f"set({option} ON) in config.cmake and rebuild TVM (with the {runtime} SDK "
            "installed), then build the module again")


def stale_dependency(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """make/ninja have no rule for a file an object depends on: stale dependency records, or
    (for a file of a vendored tree) a submodule that is not checked out."""
    target = groups.get("target") or groups.get("target2") or ""
    vendored = _VENDORED_DIR.search(target)
    if not vendored:
        return None
    where = vendored.group("dir")
    return (f"{target} is in {where}, a vendored submodule: either the submodule is not checked "
            "out at the commit the tree records (empty, or another commit without that file), or "
            "the build directory's dependency records (.d files, .ninja_deps) are stale from a "
            "build of another commit.",
            "git submodule update --init --recursive, then a clean build (make clean, or remove "
            "the CMake build directory and configure again)")


# OpenCL error codes TVM's OpenCL runtime prints (OPENCL_CHECK_ERROR: "OpenCL Error, code=-5:
# CL_OUT_OF_RESOURCES", names from CLGetErrorString in src/runtime/opencl/opencl_common.h), and
# what each means for a user. Codes are the Khronos CL/cl.h values.
CL_RESULTS = {
    "CL_OUT_OF_RESOURCES": (-5, "the device could not give a kernel launch what it asks for "
                            "(threads per work-group times the registers and local memory each "
                            "needs): the kernel was scheduled for a bigger GPU than this one, "
                            "typically a generic 'opencl' target (or tuning logs of another "
                            "device) on a mobile GPU such as Mali or Adreno",
                            "build for this device's target (\"opencl -device=mali\", "
                            "tvm.target.mali() / adreno(), or give max_num_threads the device's "
                            "limit) so schedules size work-groups for it, and use tuning logs "
                            "made on this device"),
    "CL_INVALID_WORK_GROUP_SIZE": (-54, "a kernel was launched with more threads per "
                                   "work-group than the device allows "
                                   "(CL_DEVICE_MAX_WORK_GROUP_SIZE, or the kernel's own limit)",
                                   "give the target this device's limit (max_num_threads=<its "
                                   "CL_DEVICE_MAX_WORK_GROUP_SIZE, from clinfo>) and rebuild"),
    "CL_MEM_OBJECT_ALLOCATION_FAILURE": (-4, "the device could not allocate a buffer: it is "
                                         "out of memory",
                                         "use smaller inputs or a smaller model, or free other "
                                         "users of the GPU"),
    "CL_OUT_OF_HOST_MEMORY": (-6, "the OpenCL driver ran out of host memory",
                              "free host memory (smaller batches or model)"),
    "CL_BUILD_PROGRAM_FAILURE": (-11, "the device's OpenCL compiler rejected the kernel source "
                                 "TVM generated (a type or extension this device lacks, such as "
                                 "fp16 without cl_khr_fp16)",
                                 "read the build log the driver printed above this line; build "
                                 "for a target matching the device (no float16 where it lacks "
                                 "cl_khr_fp16)"),
}


def opencl(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """What an OpenCL error code means, from :data:`CL_RESULTS`."""
    name = groups.get("cl") or ""
    if name not in CL_RESULTS:
        return None
    code, what, fix = CL_RESULTS[name]
    return f"OpenCL returned {name} ({code}): {what}.", fix + "."


# The C++ standard each TVM generation compiles with (`git show TAG:CMakeLists.txt`: the
# `-std=c++NN` flag to v0.20.0, CMAKE_CXX_STANDARD from v0.21.0): (first release, standard).
# Its public headers use that standard's library, so a project including them needs it too.
CXX_STANDARD = [("v0.6.0", "14"), ("v0.10.0", "17"), ("v0.26.0", "20")]

# Names of the C++ standard library that a standard added (what a compiler set to an older
# one says it has no template or member of): C++14, C++17 (every `_v` trait), C++20.
_STD_NAMES = [
    ("14", re.compile(r"^(?:\w+_t|make_unique|(?:make_)?(?:index|integer)_sequence(?:_for)?|"
                      r"exchange)$")),
    ("17", re.compile(r"^(?:\w+_v|invoke_result(?:_t)?|is_(?:nothrow_)?invocable(?:_r)?|"
                      r"bool_constant|void_t|conjunction|disjunction|negation|optional|"
                      r"nullopt|variant|string_view|any|apply|in_place\w*|launder|"
                      r"byte|clamp|gcd|lcm|as_const)$")),
    ("20", re.compile(r"^(?:remove_cvref(?:_t)?|type_identity(?:_t)?|span|bit_cast|"
                      r"source_location|is_bounded_array|is_unbounded_array|"
                      r"is_constant_evaluated|to_address)$")),
]


def std_needed(name: str) -> str:
    """The C++ standard (``"17"``) that added the std:: ``name`` a compile error names ("" if
    it is none of :data:`_STD_NAMES`). ``_t`` aliases of C++17 traits (invoke_result_t) are
    C++17's, so the newer lists are tried first."""
    for std, names in reversed(_STD_NAMES):
        if names.match(name):
            return std
    return ""


def cxx_standard(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A std:: name of a newer C++ standard than the compile uses, in a TVM header or under
    one, with the standard each TVM generation compiles with."""
    name = groups.get("name") or groups.get("name2") or ""
    std = groups.get("std") or std_needed(name)
    if not std or not re.search(r"(?:include/tvm|tvm/ffi|tvm/runtime|dlpack)/", text):
        return None
    since = [f"C++{s} from {tag}" for tag, s in CXX_STANDARD]
    what = f"std::{name}" if name else "a library feature"
    return (f"{what} is C++{std}'s, and the file including TVM's headers is compiled with an "
            f"older standard: TVM's headers use the standard TVM itself compiles with "
            f"({'; '.join(since)}, per its CMakeLists.txt), so whatever includes them (an "
            "extension, an app, a runtime pack or an Android/iOS JNI build) must compile with "
            "it too.",
            f"compile that target with C++{std} or newer: set(CMAKE_CXX_STANDARD {std}) / "
            f"-std=c++{std} (with a compiler and standard library that support it); "
            "with the Android NDK, use one whose clang defaults to it or pass the flag in the "
            "app's CMakeLists.txt.")


def rust_target(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """``can't find crate for `core``` while cross-compiling Rust (MLC-LLM's tokenizers for
    Android or iOS): the target's standard library is not installed for the rustc that ran."""
    target = re.search(r"the [`'](?P<t>[\w.-]+)[`'] target may not be installed|"
                       r"--target[ =](?P<t2>[\w.-]+)|(?P<t3>\b(?:aarch64|armv7|x86_64|i686)-"
                       r"(?:linux-android(?:eabi)?|apple-ios(?:-sim)?)\b)", text)
    name = next((g for g in target.groups() if g), "") if target else ""
    add = f"rustup target add {name}" if name else "rustup target add <the target triple>"
    return (f"rustc found no standard library (the `{groups['crate']}` crate) for the target it "
            f"was asked to build{' (' + name + ')' if name else ''}: that target is not "
            "installed for the toolchain that ran, or the cargo/rustc on PATH is not rustup's "
            "(a Homebrew or distribution Rust has no cross targets, whatever rustup installed).",
            f"{add}; if rustup lists it already, put rustup's toolchain first on PATH "
            "(`which rustc` must point into ~/.cargo/bin) or remove the other Rust, then rebuild "
            "from a clean build directory.")


def header_library_mismatch(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``in function `dnnl::...': undefined reference to `dnnl_...'``: the C++ wrapper's inline
    code (from a header) calls its own library's C API, so the header and lib<ns> differ."""
    ns, sym = groups.get("ns", ""), groups.get("sym", "")
    if not ns or not sym:
        return None
    return (f"{ns}::... is inline code from {ns}'s C++ header, and it calls {sym}, {ns}'s own C "
            f"function, which the lib{ns} being linked does not define: the {ns} headers and "
            f"lib{ns} come from two versions (another install's older or newer headers found "
            f"first on the include path, e.g. /usr/local/include).",
            f"build with the headers of the lib{ns} you link: remove the stale {ns} install "
            f"(its headers and library), or put the matching include directory first")


def wasm_import(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """A wasm's unresolved import, named: the C++ function a mangled symbol spells."""
    sym = groups.get("sym", "")
    function = _demangled_function(sym) if sym.startswith("_Z") else sym
    if not function:
        return None
    return (f"the wasm imports {function} (\"{groups.get('mod', 'env')}\" \"{sym[:80]}\"): "
            "the module was linked with that symbol undefined, which emcc leaves as an import, "
            "and the JavaScript that instantiates it (TVM's web runtime, WebLLM) does not "
            "provide it: the code that defines it was not compiled into the wasm (a runtime "
            "source left out of the EMCC build, or one that failed to compile there).",
            f"rebuild the wasm with the code that defines {function.rsplit('::', 1)[-1]} linked "
            "in (for MLC-LLM/WebLLM, recompile the model library with an MLC-LLM whose web "
            "runtime has it, or use the prebuilt wasm made for your web-llm); emcc "
            "-sERROR_ON_UNDEFINED_SYMBOLS=1 fails the build on such a symbol instead.")


# What only a browser defines, as code reads it: globalThis.location.origin, window.x,
# navigator.gpu.requestAdapter
_BROWSER_READ = re.compile(r"\b(?:globalThis\.|window\.|self\.)?(?P<glob>location|document|window|"
                           r"navigator)\.(?P<prop>\w+)")
_NODE = re.compile(r"^Node\.js v\d+", re.M)


def browser_global(groups: dict[str, str], text: str) -> tuple[str, str] | str | None:
    """A browser's global read where Node.js runs: Node prints its version under the error,
    and the line it shows reads the global (or the ReferenceError names it)."""
    if not _NODE.search(text):
        return NOT_THIS
    glob = groups.get("glob")
    if glob is None:  # "reading 'origin'": of which global, the source line above says
        read = [m for m in _BROWSER_READ.finditer(text) if m.group("prop") == groups.get("prop")]
        if not read:
            return NOT_THIS
        glob = read[-1].group("glob")
        said = f"`{read[-1].group(0).rsplit('.', 1)[0]}` is undefined"
    else:
        said = f"`{glob}` is not defined"
    return (f"a browser library ran under Node.js: its code reads the browser's `{glob}` "
            f"({said} here), which a page or a Web Worker defines and Node.js does not; "
            "WebLLM and TVM's web runtime are browser (WebGPU) libraries.",
            "run it in a browser page, a Web Worker or an extension (headless Chrome for a "
            "script), not in bare Node.js.")


# Where a wasm build of the library runs: a browser's scripts, a wasm file, web-llm
_WEB = re.compile(r"\.wasm\b|\.js:\d+|WebAssembly|web-llm|webllm|WebLLM", re.I)


def rayon_pool(groups: dict[str, str], text: str) -> tuple[str, str]:
    """rayon's global pool failing to spawn: no threads in a browser's wasm, or a thread limit
    natively; HuggingFace tokenizers (WebLLM's, through tokenizers-cpp) is the usual user."""
    tokenizers = "tokenizers" in text or _WEB.search(text)
    who = ("HuggingFace tokenizers (" + ("in WebLLM, compiled to wasm through tokenizers-cpp"
                                         if _WEB.search(text) else "its encode_batch") + ")"
           if tokenizers else "a Rust library")
    off = ("set TOKENIZERS_PARALLELISM=false before the tokenizer loads" if tokenizers else
           "turn off its parallelism")
    if _WEB.search(text):
        return (f"{who} runs rayon's thread pool, and WebAssembly in the browser has no threads "
                "to start (spawning fails: WouldBlock), so the pool is never built.",
                "upgrade web-llm (a newer tokenizers-cpp build), or build the library for wasm "
                "with its parallelism turned off")
    return (f"{who} runs rayon's thread pool, and this process could not start a thread "
            "(EAGAIN, WouldBlock: a limit on threads - ulimit -u, a container's pids limit - "
            "or no memory for a thread's stack).",
            f"raise the limit (ulimit -u, the container's --pids-limit), or {off}; "
            "RAYON_NUM_THREADS=1 starts none")
