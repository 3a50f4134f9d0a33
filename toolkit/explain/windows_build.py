"""Windows builds and exports that mix toolchains, or use POSIX-only names MSVC lacks.

TVM's python/tvm/contrib/cc.py (``_windows_shared``) linked export_library's objects with
Microsoft's link.exe up to v0.5 and with LLVM's lld-link from v0.6.0 (git show v0.5 /
v0.6.0: ``link_cmd``); objects from TVM's llvm target carry COMDAT sections link.exe can
reject.
"""

from __future__ import annotations

import re

# POSIX/glibc shorthand types (sys/types.h) that MSVC's headers do not define.
POSIX_TYPES = {"uint": "uint32_t (or unsigned int)", "ushort": "uint16_t (or unsigned short)",
               "ulong": "unsigned long", "u_int": "uint32_t", "ssize_t": "ptrdiff_t or int64_t"}


def comdat_with_link_exe(_groups: dict[str, str], text: str) -> tuple[str, str]:
    """``LNK1143: invalid or corrupt file: no symbol for COMDAT section``."""
    export = "export_library" in text or "_windows_shared" in text
    who = ("export_library linked the object TVM's llvm target wrote with Microsoft's "
           "link.exe (contrib/cc.py's _windows_shared up to v0.5)" if export else
           "an object LLVM wrote was linked with Microsoft's link.exe")
    return (f"{who}, and link.exe rejects the COMDAT sections LLVM emitted: the object and "
            "the linker come from different toolchains.",
            "link with LLVM's linker, lld-link (from the same LLVM as TVM): TVM v0.6.0 and "
            "newer use lld-link in export_library on Windows, so update TVM and put LLVM's "
            "bin folder on PATH")


def posix_type_on_msvc(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``error C2065: 'uint': undeclared identifier`` in a TVM source file."""
    name = groups.get("type", "")
    where = groups.get("file", "").replace("\\", "/")
    use = POSIX_TYPES.get(name, "a standard <cstdint> type")
    return (f"{where} uses '{name}', a POSIX/glibc typedef (sys/types.h) that MSVC (Visual "
            "Studio on Windows) does not define: this TVM source builds with GCC and Clang "
            "but not with MSVC.",
            f"update TVM if a newer commit no longer uses '{name}' there (git grep it in "
            f"the newer tree), or change '{name}' there to {use}")


# CMake's "when parsing string" block: the string it could not parse, a line or two above the
# escape it names.
_PARSED = re.compile(r"when parsing string\s*\n\s*\n?\s*(?P<path>[^\n]*\\[^\n]*)\n"
                     r"(?:\s*\n)?\s*Invalid character escape")


def backslash_path_in_cmake(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``Invalid character escape '\\p'`` while CMake parses a Windows path."""
    m = _PARSED.search(text)
    path = m.group("path").strip() if m else ""
    shown = f" ({path})" if path else ""
    parts = [p.lower() for p in re.split(r"[\\/]+", path) if p]
    if parts[-3:] == ["lib", "cmake", "llvm"]:
        # cmake/utils/FindLLVM.cmake: `llvm-config --cmakedir`'s output used as it came up to
        # v0.14.0; v0.15.0 normalises it with cmake_path(SET ...) (git show v0.14.0/v0.15.0).
        who = ("it is LLVM's CMake package folder, which TVM's cmake/utils/FindLLVM.cmake reads "
               "from `llvm-config --cmakedir` and, before v0.15.0, put into CMake code as "
               "llvm-config printed it: with Windows backslashes")
        fix = ("update TVM to v0.15.0 or newer (FindLLVM converts the path with cmake_path), or "
               "set USE_LLVM to an llvm-config that prints forward slashes")
    elif parts and parts[-1] == "tvm" and "config.cmake" in text:
        who = ("it is a TVM source tree, set in config.cmake: MLC-LLM's build scripts write "
               "`set(TVM_SOURCE_DIR <path>)` there from the TVM_SOURCE_DIR environment "
               "variable as it is, so a Windows path keeps its backslashes")
        fix = ("set TVM_SOURCE_DIR with forward slashes (E:/project/tvm), or fix the line in "
               "config.cmake the same way, and configure again")
    else:
        who = "a Windows path reached CMake code as it was written"
        fix = ("write the path with forward slashes (C:/x/y), or convert it in CMake with "
               "file(TO_CMAKE_PATH ...) / cmake_path(SET ...) before it is used")
    return (f"CMake parsed a Windows path with backslashes{shown} as a string, where `\\` "
            f"starts an escape sequence and `\\{groups.get('ch', '')}` is none: {who}.", fix)
