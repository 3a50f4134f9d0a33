"""A link meant to make a shared library that made an executable instead.

Without ``-shared`` the compiler driver links an executable, whose startup code (crt1.o's
``_start``) calls ``main``. TVM's python/tvm/contrib/cc.py (``_linux_compile``) passed
``-shared`` only when the output name ended in .so or .dylib up to v0.6.0; from v0.7.0
``create_shared`` always passes it (``compile_shared=True``, apache/tvm#5751).
"""

from __future__ import annotations

_EXPORT = ("export_library", "create_shared", "contrib/cc.py")


def no_shared_flag(_groups: dict[str, str], text: str) -> tuple[str, str]:
    """crt1.o's ``_start`` lacks ``main`` (in any language the linker speaks)."""
    if any(mark in text for mark in _EXPORT):
        return ("the module was exported to a file name without .so (or .dylib): TVM's "
                "contrib/cc.py up to v0.6.0 passed -shared only for those suffixes, so the "
                "compiler linked an executable, which needs a main, instead of a shared "
                "library (from v0.7.0 create_shared always passes -shared).",
                "give export_library a name ending in .so (.dylib on macOS, .tar for a tar "
                "of objects), or use TVM v0.7.0 or newer")
    return ("the link built an executable (no -shared was passed), and an executable needs "
            "a main: the code meant a shared library and the link command lacks -shared.",
            "add -shared (and -fPIC when compiling) to the command that links the library, "
            "or name the output so that the build tool makes a shared library")
