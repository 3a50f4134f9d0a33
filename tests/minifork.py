"""A miniature TVM-like fork, generated on the fly as a real git repository.

It has the shape tk's build code relies on, and nothing else, so a cold build takes seconds:

- ``CMakeLists.txt`` includes ``<build dir>/config.cmake`` when present, else
  ``./config.cmake`` (exactly TVM's rule), declares its options with a ``tvm_option`` macro
  from ``cmake/utils/Utils.cmake``, and writes ``TVMBuildOptions.txt`` into the build dir.
- ``cmake/config.cmake`` lists the options with their defaults, one ``set(OPTION default)`` a
  line, as TVM's does (USE_LLVM, USE_CUDA, USE_CUBLAS, USE_CUTLASS, HIDE_PRIVATE_SYMBOLS, ...).
- C++ sources build ``libtvm_runtime.so`` (target ``tvm_runtime``) and ``libtvm.so``
  (target ``tvm``; ``libtvm_compiler.so`` with ``layout="main"``, under ``build/lib``).
  USE_LLVM (runs ``llvm-config --version`` at configure, as TVM's FindLLVM does), USE_CUDA
  (finds the CUDA toolkit) and CMAKE_BUILD_TYPE end up *inside* the libraries: the exported
  ``TVMMiniBuildInfo()`` / ``TVMMiniRuntimeInfo()`` return them as ``KEY=VALUE;...`` strings.
- ``python/tvm`` finds its libraries through ``TVM_LIBRARY_PATH`` (then ``build/``,
  ``build/lib``) and exposes ``tvm.support.libinfo()`` and ``tvm.runtime.enabled(kind)``.
- ``cmake/site.cmake`` is included *after* the options when it exists: a fork-local
  override, the way a stray file can make CMake use other values than the ones asked for.

Importable by tests and benchmarks: ``make_minifork(path)`` and the ``add_*`` helpers; the
docs' examples make one with ``python minifork.py DIR [--layout old|pyproject|main]``.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

OPTIONS: dict[str, str] = {
    "USE_CUDA": "OFF",
    "USE_CUBLAS": "OFF",
    "USE_CUDNN": "OFF",
    "USE_CUTLASS": "OFF",
    "USE_LLVM": "OFF",
    "USE_OPENMP": "none",
    "USE_CCACHE": "AUTO",
    "HIDE_PRIVATE_SYMBOLS": "OFF",
    "USE_LIBBACKTRACE": "AUTO",
    "SUMMARIZE": "OFF",
    "USE_MINI_EXTRA": "OFF",
}

UTILS_CMAKE = r"""
# Same contract as TVM's tvm_option: a normal variable set by config.cmake wins.
macro(tvm_option variable description value)
  if(NOT DEFINED ${variable})
    set(${variable} "${value}" CACHE STRING "${description}")
  endif()
  list(APPEND TVM_ALL_OPTIONS ${variable})
endmacro()

function(dump_options_to_file tvm_options)
  file(REMOVE ${CMAKE_BINARY_DIR}/TVMBuildOptions.txt)
  foreach(option ${tvm_options})
    file(APPEND ${CMAKE_BINARY_DIR}/TVMBuildOptions.txt "${option} ${${option}} \n")
  endforeach()
endfunction()
"""

CMAKELISTS = r"""
cmake_minimum_required(VERSION @MIN_CMAKE@)
project(minitvm C CXX)

include(cmake/utils/Utils.cmake)

if(EXISTS ${CMAKE_CURRENT_BINARY_DIR}/config.cmake)
  include(${CMAKE_CURRENT_BINARY_DIR}/config.cmake)
else()
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/config.cmake)
    include(${CMAKE_CURRENT_SOURCE_DIR}/config.cmake)
  endif()
endif()

tvm_option(USE_CUDA "Build with CUDA" OFF)
tvm_option(USE_CUBLAS "Build with cuBLAS" OFF)
tvm_option(USE_CUDNN "Build with cuDNN" OFF)
tvm_option(USE_CUTLASS "Build with CUTLASS" OFF)
tvm_option(USE_LLVM "Build with LLVM, can be set to specific llvm-config path" OFF)
tvm_option(USE_OPENMP "Build with OpenMP thread pool implementation" none)
tvm_option(USE_CCACHE "Use ccache if found" AUTO)
tvm_option(HIDE_PRIVATE_SYMBOLS "Compile with -fvisibility=hidden." OFF)
tvm_option(USE_LIBBACKTRACE "Use libbacktrace" AUTO)
tvm_option(SUMMARIZE "Print a summary of options" OFF)
@EXTRA_OPTIONS@
include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/site.cmake OPTIONAL)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

if(USE_CCACHE AND NOT USE_CCACHE STREQUAL "AUTO" AND NOT USE_CCACHE STREQUAL "OFF")
  find_program(CCACHE_FOUND ccache)
  if(CCACHE_FOUND)
    set(CMAKE_CXX_COMPILER_LAUNCHER ccache)
  elseif(NOT USE_CCACHE STREQUAL "AUTO")
    message(FATAL_ERROR "USE_CCACHE=${USE_CCACHE} but ccache was not found")
  endif()
endif()

set(MINI_LLVM_VERSION "none")
if(USE_LLVM AND NOT USE_LLVM STREQUAL "OFF")
  if(USE_LLVM STREQUAL "ON")
    set(LLVM_CONFIG_CMD llvm-config)
  else()
    separate_arguments(LLVM_CONFIG_CMD UNIX_COMMAND "${USE_LLVM}")
    list(GET LLVM_CONFIG_CMD 0 LLVM_CONFIG_CMD)
  endif()
  execute_process(COMMAND ${LLVM_CONFIG_CMD} --version
                  OUTPUT_VARIABLE MINI_LLVM_VERSION RESULT_VARIABLE LLVM_RC
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT LLVM_RC EQUAL 0)
    message(FATAL_ERROR "Fatal error executing: ${LLVM_CONFIG_CMD} --version")
  endif()
  message(STATUS "Found LLVM ${MINI_LLVM_VERSION}")
endif()

set(MINI_CUDA_VERSION "none")
if(USE_CUDA AND NOT USE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit REQUIRED)
  set(MINI_CUDA_VERSION "${CUDAToolkit_VERSION}")
endif()

configure_file(src/build_info.h.in ${CMAKE_CURRENT_BINARY_DIR}/gen/build_info.h @ONLY)
include_directories(include ${CMAKE_CURRENT_BINARY_DIR}/gen @EXTRA_INCLUDES@)

set(RUNTIME_SRCS src/runtime/registry.cc src/runtime/device_api.cc)
if(USE_CUDA AND NOT USE_CUDA STREQUAL "OFF")
  list(APPEND RUNTIME_SRCS src/runtime/cuda/cuda_device_api.cc)
endif()
set(COMPILER_SRCS src/ir/module.cc src/driver/build_info.cc)
if(USE_LLVM AND NOT USE_LLVM STREQUAL "OFF")
  list(APPEND COMPILER_SRCS src/target/llvm/codegen_llvm.cc)
endif()

@OUTPUT_DIR@
add_library(tvm_runtime SHARED ${RUNTIME_SRCS})
add_library(@COMPILER_TARGET@ SHARED ${COMPILER_SRCS})
target_link_libraries(@COMPILER_TARGET@ PUBLIC tvm_runtime)
if(USE_CUDA AND NOT USE_CUDA STREQUAL "OFF")
  target_compile_definitions(tvm_runtime PRIVATE MINI_WITH_CUDA=1)
endif()
if(USE_LLVM AND NOT USE_LLVM STREQUAL "OFF")
  target_compile_definitions(@COMPILER_TARGET@ PRIVATE MINI_WITH_LLVM=1)
endif()
if(HIDE_PRIVATE_SYMBOLS AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  set_target_properties(@COMPILER_TARGET@ PROPERTIES CXX_VISIBILITY_PRESET hidden)
endif()
add_custom_target(runtime DEPENDS tvm_runtime)

dump_options_to_file("${TVM_ALL_OPTIONS}")
"""

BUILD_INFO_H = r"""
#pragma once
#define MINI_INFO_USE_LLVM "@USE_LLVM@"
#define MINI_INFO_LLVM_VERSION "@MINI_LLVM_VERSION@"
#define MINI_INFO_USE_CUDA "@USE_CUDA@"
#define MINI_INFO_CUDA_VERSION "@MINI_CUDA_VERSION@"
#define MINI_INFO_USE_CUBLAS "@USE_CUBLAS@"
#define MINI_INFO_USE_CUTLASS "@USE_CUTLASS@"
#define MINI_INFO_HIDE_PRIVATE_SYMBOLS "@HIDE_PRIVATE_SYMBOLS@"
#define MINI_INFO_BUILD_TYPE "@CMAKE_BUILD_TYPE@"
"""

SOURCES: dict[str, str] = {
    "include/tvm/mini.h": """#pragma once
#define TVM_MINI_DLL extern "C" __attribute__((visibility("default")))
TVM_MINI_DLL const char* TVMMiniRuntimeInfo();
TVM_MINI_DLL const char* TVMMiniBuildInfo();
TVM_MINI_DLL int TVMMiniAdd(int a, int b);
""",
    "src/runtime/registry.cc": """#include <tvm/mini.h>
#include <string>
#include "build_info.h"

TVM_MINI_DLL const char* TVMMiniRuntimeInfo() {
#ifdef MINI_WITH_CUDA
  static const std::string info = std::string("USE_CUDA=ON;CUDA_VERSION=") + MINI_INFO_CUDA_VERSION;
#else
  static const std::string info = "USE_CUDA=OFF";
#endif
  return info.c_str();
}

// The global-function registry of TVM's C runtime API before tvm-ffi (TVMFuncGetGlobal, which
// tk's runtime check asks): a runtime built with CUDA registers device_api.cuda when it loads.
// (Not tvm-ffi's TVMFFIFunctionGetGlobal: an installed tvm_ffi in the same process has that.)
TVM_MINI_DLL int TVMFuncGetGlobal(const char* name, void** out) {
#ifdef MINI_WITH_CUDA
  static int cuda_api = 1;
  *out = std::string(name) == "device_api.cuda" ? static_cast<void*>(&cuda_api) : nullptr;
#else
  *out = nullptr;
#endif
  return 0;
}
""",
    "src/runtime/device_api.cc": """#include <tvm/mini.h>

TVM_MINI_DLL int TVMMiniAdd(int a, int b) { return a + b; }
""",
    "src/runtime/cuda/cuda_device_api.cc": """#include <tvm/mini.h>

TVM_MINI_DLL int TVMMiniCUDADeviceCount() { return 0; }
""",
    "src/ir/module.cc": """#include <tvm/mini.h>

int MiniModuleFunctions() { return 1; }
""",
    "src/target/llvm/codegen_llvm.cc": """#include <tvm/mini.h>
#include "build_info.h"

TVM_MINI_DLL const char* TVMMiniLLVMVersion() { return MINI_INFO_LLVM_VERSION; }
""",
    "src/driver/build_info.cc": """#include <tvm/mini.h>
#include <string>
#include "build_info.h"

TVM_MINI_DLL const char* TVMMiniBuildInfo() {
  static const std::string info = std::string()
      + "USE_LLVM=" + MINI_INFO_USE_LLVM + ";LLVM_VERSION=" + MINI_INFO_LLVM_VERSION
      + ";USE_CUDA=" + MINI_INFO_USE_CUDA + ";USE_CUBLAS=" + MINI_INFO_USE_CUBLAS
      + ";USE_CUTLASS=" + MINI_INFO_USE_CUTLASS
      + ";HIDE_PRIVATE_SYMBOLS=" + MINI_INFO_HIDE_PRIVATE_SYMBOLS
      + ";CMAKE_BUILD_TYPE=" + MINI_INFO_BUILD_TYPE
#ifdef NDEBUG
      + ";ASSERTS=OFF";
#else
      + ";ASSERTS=ON";
#endif
  return info.c_str();
}
""",
}

PY_INIT = '''"""A miniature tvm package: finds its libraries through TVM_LIBRARY_PATH."""

import ctypes
import os
from pathlib import Path

__version__ = "0.0.1.mini"

_ROOT = Path(__file__).resolve().parent.parent.parent
_NAMES = ("libtvm.so", "libtvm_compiler.so")


def find_lib_path():
    """Directories searched in TVM's order: TVM_LIBRARY_PATH, then build/, build/lib."""
    dirs = [d for d in os.environ.get("TVM_LIBRARY_PATH", "").split(os.pathsep) if d]
    dirs += [str(_ROOT / "build"), str(_ROOT / "build" / "lib")]
    for d in dirs:
        for name in _NAMES:
            if (Path(d) / name).exists():
                return [str(Path(d) / "libtvm_runtime.so"), str(Path(d) / name)]
    raise RuntimeError(f"Cannot find libtvm in {dirs}")


_LIB_PATHS = find_lib_path()
_RUNTIME = ctypes.CDLL(_LIB_PATHS[0], ctypes.RTLD_GLOBAL)
_LIB = ctypes.CDLL(_LIB_PATHS[1], ctypes.RTLD_GLOBAL)
_LIB.TVMMiniBuildInfo.restype = ctypes.c_char_p
_RUNTIME.TVMMiniRuntimeInfo.restype = ctypes.c_char_p

from . import runtime, support  # noqa: E402,F401
'''

PY_SUPPORT = '''"""Build information baked into the library."""

from . import _LIB


def libinfo():
    raw = _LIB.TVMMiniBuildInfo().decode()
    return dict(item.split("=", 1) for item in raw.split(";"))
'''

PY_RUNTIME = '''"""What the runtime library was built with."""

from . import _RUNTIME


def enabled(kind):
    info = dict(i.split("=", 1) for i in _RUNTIME.TVMMiniRuntimeInfo().decode().split(";"))
    if kind in ("llvm", "cpu"):
        return True
    if kind == "cuda":
        return info.get("USE_CUDA") == "ON"
    return False
'''

PYPROJECT = """[build-system]
requires = ["scikit-build-core>=0.10"]
build-backend = "scikit_build_core.build"

[project]
name = "tvm"
version = "0.0.1"

[tool.scikit-build]
wheel.packages = ["python/tvm"]
"""


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and dates, so runs are reproducible."""
    env = {
        "GIT_AUTHOR_NAME": "mini", "GIT_AUTHOR_EMAIL": "mini@example.com",
        "GIT_COMMITTER_NAME": "mini", "GIT_COMMITTER_EMAIL": "mini@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(repo),
    }
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", *args],
        cwd=repo, env=env, check=True, capture_output=True, text=True,
    ).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make_minifork(path: Path | str, *, layout: str = "old",
                  extra_options: dict[str, str] | None = None, ffi_submodule: bool = False) -> Path:
    """Create the miniature fork as a git repository at ``path`` with one commit; return it.

    layout: "old" (python/ + build/libtvm.so, <= v0.21), "pyproject" (v0.22+: also a
    scikit-build ``pyproject.toml`` at the root), "main" (``build/lib/libtvm_compiler.so``).
    extra_options: fork-only options, added to both cmake/config.cmake and CMakeLists.txt.
    ffi_submodule: add ``3rdparty/tvm-ffi`` as a real git submodule (which wants CMake >= 3.26).
    """
    if layout not in ("old", "pyproject", "main"):
        raise ValueError(f"unknown layout {layout!r}")
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    options = {**OPTIONS, **(extra_options or {})}
    extra_cmake = "\n".join(
        f'tvm_option({name} "fork option" {value})'
        for name, value in options.items() if name not in CMAKELISTS
    )
    compiler = "tvm_compiler" if layout == "main" else "tvm"
    out_dir = ("set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)"
               if layout == "main" else "")
    cmakelists = (CMAKELISTS.replace("@EXTRA_OPTIONS@", extra_cmake)
                  .replace("@COMPILER_TARGET@", compiler).replace("@OUTPUT_DIR@", out_dir)
                  .replace("@MIN_CMAKE@", "3.18")
                  .replace("@EXTRA_INCLUDES@", "3rdparty/tvm-ffi/include" if ffi_submodule else ""))
    # As in TVM, HIDE_PRIVATE_SYMBOLS is declared in CMakeLists.txt only, not in config.cmake.
    config = "# Mini TVM build options: copy to build/ and edit.\n" + "".join(
        f"\n# Whether to enable {name}\nset({name} {value})\n"
        for name, value in options.items() if name != "HIDE_PRIVATE_SYMBOLS"
    )
    files = {
        "CMakeLists.txt": cmakelists.lstrip(),
        "cmake/utils/Utils.cmake": UTILS_CMAKE.lstrip(),
        "cmake/config.cmake": config,
        "src/build_info.h.in": BUILD_INFO_H.lstrip(),
        "python/tvm/__init__.py": PY_INIT,
        "python/tvm/support.py": PY_SUPPORT,
        "python/tvm/runtime.py": PY_RUNTIME,
        "docs/index.md": "# mini tvm\n",
        ".gitignore": "build/\nbuild-*/\n",
        **SOURCES,
    }
    if layout in ("pyproject", "main"):
        files["pyproject.toml"] = PYPROJECT
    _write(root, files)
    git(root, "init", "-q")
    if ffi_submodule:
        dep = root.parent / f"{root.name}-tvm-ffi"
        _write(dep, {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.26)\nproject(tvm_ffi CXX)\n",
            "include/tvm/ffi/c_api.h": "#pragma once\n#define TVM_FFI_MINI 1\n",
        })
        git(dep, "init", "-q")
        git(dep, "add", "-A")
        git(dep, "commit", "-q", "-m", "tvm-ffi")
        git(root, "submodule", "add", "-q", str(dep), "3rdparty/tvm-ffi")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "mini tvm")
    return root


def commit_file(repo: Path, rel: str, text: str, message: str | None = None) -> str:
    """Write ``rel`` (relative to the repo) with ``text``, commit it, return the new SHA."""
    _write(repo, {rel: text})
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message or f"edit {rel}")
    return git(repo, "rev-parse", "HEAD")


def add_source_commit(repo: Path, tag: str = "v2", message: str | None = None) -> str:
    """A commit that changes C++ (so the library must be rebuilt): ``TVMMiniVersionTag``."""
    text = ('#include <tvm/mini.h>\n\nTVM_MINI_DLL const char* TVMMiniVersionTag() '
            f'{{ return "{tag}"; }}\n\nint MiniModuleFunctions() {{ return 1; }}\n')
    return commit_file(repo, "src/ir/module.cc", text, message or f"C++ change {tag}")


def add_python_commit(repo: Path, text: str = "# python-only change\n",
                      message: str = "Python-only change") -> str:
    """A commit touching only python/ (a build can be reused across it)."""
    path = repo / "python/tvm/support.py"
    return commit_file(repo, "python/tvm/support.py", path.read_text() + text, message)


def add_doc_commit(repo: Path, text: str = "more docs\n") -> str:
    """A commit touching only docs/."""
    return commit_file(repo, "docs/index.md", (repo / "docs/index.md").read_text() + text,
                       "Docs change")


def break_build_commit(repo: Path) -> str:
    """A commit whose C++ does not compile."""
    return commit_file(repo, "src/ir/module.cc", "int MiniModuleFunctions() { return }\n",
                       "Broken C++")


FFI_REGISTRY_CC = """#include <tvm/ffi/c_api.h>
#include <cstring>
#include <initializer_list>

// Global functions registered through tvm-ffi's C ABI when the library loads, as TVM's own
// TVM_FFI_STATIC_INIT_BLOCKs register theirs.
namespace {
int ReturnOne(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1;
  return 0;
}

struct Registrations {
  Registrations() {
    for (const char* name : {@NAMES@}) {
      TVMFFIObjectHandle f = nullptr;
      if (TVMFFIFunctionCreate(nullptr, ReturnOne, nullptr, &f) != 0) continue;
      TVMFFIByteArray key{name, std::strlen(name)};
      TVMFFIFunctionSetGlobal(&key, f, 0);
      TVMFFIObjectDecRef(f);
    }
  }
} registrations;
}  // namespace
"""


def add_ffi_registry(repo: Path, names: list[str]) -> str:
    """A commit making the compiler library register ``names`` as global functions with the
    installed tvm-ffi (its headers and libtvm_ffi.so, as TVM >= 0.21 links its own), and the
    Python package import tvm_ffi first, as TVM's does. Called again, it changes the names."""
    import tvm_ffi.libinfo

    cmake = repo / "CMakeLists.txt"
    text = cmake.read_text()
    if "ffi_registry.cc" not in text:
        target = "tvm_compiler" if "add_library(tvm_compiler" in text else "tvm"
        text += (f"target_sources({target} PRIVATE src/ir/ffi_registry.cc)\n"
                 f"target_include_directories({target} PRIVATE "
                 f"{tvm_ffi.libinfo.find_include_path()})\n"
                 f"target_link_libraries({target} PRIVATE {tvm_ffi.libinfo.find_libtvm_ffi()})\n")
    init = (repo / "python/tvm/__init__.py").read_text()
    if "import tvm_ffi" not in init:
        init = init.replace("import ctypes\n", "import ctypes\n\nimport tvm_ffi  # noqa: F401\n")
    _write(repo, {
        "CMakeLists.txt": text, "python/tvm/__init__.py": init,
        "src/ir/ffi_registry.cc": FFI_REGISTRY_CC.replace(
            "@NAMES@", ", ".join(f'"{n}"' for n in names)),
    })
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"register {', '.join(names)} with tvm-ffi")
    return git(repo, "rev-parse", "HEAD")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Make the miniature TVM fork, a git repository.")
    parser.add_argument("path", type=Path)
    parser.add_argument("--layout", choices=("old", "pyproject", "main"), default="old")
    args = parser.parse_args()
    if args.path.exists() and any(args.path.iterdir()):
        parser.error(f"{args.path} is not empty")
    root = make_minifork(args.path, layout=args.layout)
    print(f"made a miniature TVM fork ({args.layout} layout) in {root}, "
          f"commit {git(root, 'rev-parse', '--short=10', 'HEAD')}")

