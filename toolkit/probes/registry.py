"""What a build's libraries register with tvm-ffi when they load: one JSON line.

Run by path (``python registry.py LIB...``) in the build's own environment. Imports tvm_ffi
(the build's package, or the installed one), loads each library with RTLD_GLOBAL (so a symbol
the library needs and nobody defines fails here, as ``import tvm`` would), then lists the
global functions and object types the libraries added to tvm-ffi's registries. The same
libraries, Python and tvm-ffi give the same digest; ``tk build`` compares it with the digest of
the build it checked before (toolkit.builds.equivalence).
"""

import ctypes
import hashlib
import json
import platform
import sys


def emit(**facts):
    print(json.dumps(facts), flush=True)


def registered():
    import tvm_ffi

    functions = set(tvm_ffi.registry.list_global_func_names())
    keys = tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys", allow_missing=True)
    return functions, (set(keys()) if keys is not None else None)


def main(paths):
    try:
        import tvm_ffi
    except Exception as exc:  # noqa: BLE001 - the failure is the fact
        emit(ok=False, error=f"import tvm_ffi: {type(exc).__name__}: {exc}")
        return
    functions, types = registered()
    for path in paths:
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            emit(ok=False, error=f"{path}: {exc}")
            return
    after, types_after = registered()
    digest = hashlib.sha256()
    for part in (sys.executable, platform.python_version(), tvm_ffi.__version__,
                 *sorted(after), "--types--", *sorted(types_after or ())):
        digest.update(part.encode() + b"\0")
    emit(ok=True, digest=digest.hexdigest(), functions=len(after - functions),
         types=None if types_after is None else len(types_after - (types or set())))


if __name__ == "__main__":
    main(sys.argv[1:])
