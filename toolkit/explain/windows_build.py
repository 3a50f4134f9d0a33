"""Windows builds and exports that mix toolchains, or use POSIX-only names MSVC lacks.

TVM's python/tvm/contrib/cc.py (``_windows_shared``) linked export_library's objects with
Microsoft's link.exe up to v0.5 and with LLVM's lld-link from v0.6.0 (git show v0.5 /
v0.6.0: ``link_cmd``); objects from TVM's llvm target carry COMDAT sections link.exe can
reject.
"""

from __future__ import annotations

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
