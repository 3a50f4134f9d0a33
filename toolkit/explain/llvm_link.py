"""Links of libtvm against LLVM that fail on what LLVM itself depends on.

TVM's cmake/utils/FindLLVM.cmake adds ``llvm-config --system-libs`` to libtvm's link: the
system libraries LLVM was configured with (LLVM_ENABLE_LIBEDIT, LLVM_ENABLE_TERMINFO,
LLVM_ENABLE_LIBXML2, LLVM_ENABLE_ZLIB, LLVM_ENABLE_ZSTD, LLVM_ENABLE_FFI in LLVM's CMake).
A machine with LLVM's runtime packages but not their -dev packages has the .so.N files and
no lib<name>.so for the linker. Static LLVM libraries from a conda environment were built
with conda's newer GCC and reference libstdc++ symbols the system compiler's libstdc++ lacks.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

# -l<name> -> the Debian/Ubuntu package with its lib<name>.so, for the LLVM option that
# adds it to --system-libs (LLVM's cmake/config-ix.cmake and llvm-config's system libs).
LLVM_SYSTEM_LIBS = {
    "edit": ("libedit-dev", "LLVM_ENABLE_LIBEDIT"),
    "tinfo": ("libtinfo-dev", "LLVM_ENABLE_TERMINFO"),
    "ncurses": ("libncurses-dev", "LLVM_ENABLE_TERMINFO"),
    "terminfo": ("libtinfo-dev", "LLVM_ENABLE_TERMINFO"),
    "xml2": ("libxml2-dev", "LLVM_ENABLE_LIBXML2"),
    "z": ("zlib1g-dev", "LLVM_ENABLE_ZLIB"),
    "zstd": ("libzstd-dev", "LLVM_ENABLE_ZSTD"),
    "ffi": ("libffi-dev", "LLVM_ENABLE_FFI"),
}


def system_lib_missing(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``cannot find -ledit`` (or -ltinfo, -lxml2, ...): a library of LLVM's --system-libs."""
    name = groups.get("lib", "")
    if name not in LLVM_SYSTEM_LIBS:
        return NOT_THIS
    package, option = LLVM_SYSTEM_LIBS[name]
    since = "; LLVM 15 and newer can use zstd" if name == "zstd" else ""
    why = (f"lib{name} is one of LLVM's own dependencies ({option} in LLVM's build{since}): "
           "TVM's FindLLVM.cmake links libtvm with what `llvm-config --system-libs` names")
    if f"library not found for -l{name}" in text:  # Apple's ld: macOS, LLVM from Homebrew
        return (f"{why} (with `llvm-config --link-static`, LLVM's static libraries need them "
                f"all), and Apple's linker finds no lib{name} on its search path: it is not "
                "installed, or it is where the link is not told to look (Homebrew's prefix, "
                "/opt/homebrew/lib or /usr/local/lib).",
                f"brew install {name}, and give the link its folder (cmake "
                "-DCMAKE_SHARED_LINKER_FLAGS=-L$(brew --prefix)/lib, or LDFLAGS), or link LLVM "
                "dynamically (USE_LLVM=llvm-config without --link-static), then rebuild")
    return (f"{why}, and the linker finds no lib{name}.so because its development package is "
            f"not installed (the runtime package has only the versioned lib{name}.so.N).",
            f"install it ({package} on Debian/Ubuntu; TVM's install-from-source page lists "
            "libtinfo-dev, zlib1g-dev, libedit-dev and libxml2-dev for LLVM), or point USE_LLVM "
            "at an LLVM whose --system-libs this machine has, then rebuild")


# a library path inside a conda (miniconda, miniforge, micromamba) environment, as GNU ld
# names the archive or object that holds the reference
_CONDA_LIB = re.compile(r"(?<![^\s(])(/[\w./+-]*(?:conda|mamba|miniforge)[\w./+-]*/lib/"
                        r"lib[\w+-]+\.(?:a|so)[.\d]*)")


def conda_libstdcxx(groups: dict[str, str], text: str) -> tuple[str, str]:
    """An undefined ``std::`` symbol referenced from a library inside a conda environment:
    ld names the library on the reference's line or on the ``in function`` line above."""
    sym = groups.get("sym", "")
    at = text.find(f"{sym}'")
    found = _CONDA_LIB.search("\n".join(text[:at].rsplit("\n", 2)[-2:])) if at >= 0 else None
    if found is None:
        return NOT_THIS
    lib = found.group(1)
    llvm = "/libLLVM" in lib or "/libclang" in lib
    what = "LLVM's static libraries" if llvm else "a library"
    return (f"the link uses {what} from a conda environment ({lib}), built by conda's "
            f"compiler against a newer libstdc++ than the one the compiler doing this link "
            f"brings: {sym} is not in that older libstdc++, so the references stay undefined.",
            "build outside the conda environment (conda deactivate, then point USE_LLVM at the "
            "system's llvm-config) as MLC-LLM's and TVM's build docs do, or build inside it "
            "with conda's own compilers (conda install -c conda-forge cxx-compiler) so compiler "
            "and libraries agree")
