"""Check a built TVM's runtime backends through its C ABI alone: one JSON line per kind.

Run by path (``python runtimes.py LIB_DIR KIND...``), stdlib only, so it works for a
runtime-only build (no compiler library, no Python package needed). Loads libtvm_ffi (if the
build has one), libtvm_runtime and each backend's own library (``libtvm_runtime_<kind>.so`` in
trees that split them out) with RTLD_GLOBAL, then asks the global-function registry for
``device_api.<kind>``: a backend that is built in registers it when its library loads
(TVM's src/runtime/<kind>/<kind>_device_api.cc, TVM_FFI_STATIC_INIT_BLOCK).
"""

import ctypes
import json
import os
import sys


def emit(**facts):
    print(json.dumps(facts), flush=True)


def load(path):
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL), None
    except OSError as exc:
        return None, str(exc)


class ByteArray(ctypes.Structure):  # TVMFFIByteArray (tvm/ffi/c_api.h)
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]


def registered(libs, name):
    """Is ``name`` a global function? None when no library exports a registry we know."""
    raw = name.encode()
    for lib in libs:
        if hasattr(lib, "TVMFFIFunctionGetGlobal"):  # tvm-ffi era (TVM >= 0.21)
            out = ctypes.c_void_p()
            rc = lib.TVMFFIFunctionGetGlobal(ctypes.byref(ByteArray(raw, len(raw))),
                                             ctypes.byref(out))
            return rc == 0 and bool(out.value)
        if hasattr(lib, "TVMFuncGetGlobal"):  # the older C runtime API
            out = ctypes.c_void_p()
            rc = lib.TVMFuncGetGlobal(ctypes.c_char_p(raw), ctypes.byref(out))
            return rc == 0 and bool(out.value)
    return None


def main():
    lib_dir, kinds = sys.argv[1], sys.argv[2:]
    libs = []
    for name in ("libtvm_ffi.so", "libtvm_runtime.so"):
        path = os.path.join(lib_dir, name)
        if os.path.exists(path):
            lib, error = load(path)
            if lib is None:
                emit(kind=None, library=path, loads=False, detail=error)
                return
            libs.append(lib)
    for kind in kinds:
        path = os.path.join(lib_dir, f"libtvm_runtime_{kind}.so")
        library = path if os.path.exists(path) else None
        if library:
            lib, error = load(library)
            if lib is None:
                emit(kind=kind, library=library, loads=False, device_api=None, detail=error)
                continue
            libs.append(lib)
        emit(kind=kind, library=library, loads=True,
             device_api=registered(libs, f"device_api.{kind}"))


if __name__ == "__main__":
    main()
