"""Facts about the TVM importable by this interpreter, one JSON line per stage.

Run by path (``python doctor.py``), never imported by tk itself: ``import tvm`` may crash
or map the wrong libraries, and that must happen in this process, not in tk's.
"""

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
import traceback

import extlibs  # beside this file: sys.path[0] when run by path

ENV_VARS = ("TVM_LIBRARY_PATH", "TVM_HOME", "PYTHONPATH", "LD_LIBRARY_PATH")
RUNTIMES = ("cpu", "cuda", "vulkan", "metal", "opencl", "rocm")


def emit(stage, **facts):
    print(json.dumps({"stage": stage, **facts}, default=str), flush=True)


def error_facts(exc):
    return {
        "ok": False,
        "error_type": type(exc).__name__,
        "error": str(exc)[-4000:],
        "traceback": "".join(traceback.format_exception(exc))[-6000:],
    }


def tvm_dists():
    """Every installed distribution that provides a top-level ``tvm`` package."""
    found = []
    for dist in importlib.metadata.distributions():
        top = (dist.read_text("top_level.txt") or "").split()
        files = dist.files or []
        provides_tvm = "tvm" in top or any(str(f).startswith("tvm/") for f in files[:2000])
        if provides_tvm:
            found.append({
                "name": dist.metadata["Name"],
                "version": dist.version,
                "location": str(dist.locate_file("")),
                "requires": list(dist.requires or []),
            })
    return found


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def search_rule(path, tvm_dir, ffi_dir):
    """Which of TVM's library search rules would have found this file."""
    directory = os.path.dirname(os.path.realpath(path))
    for var in ("TVM_LIBRARY_PATH", "LD_LIBRARY_PATH"):
        for entry in filter(None, os.environ.get(var, "").split(os.pathsep)):
            if os.path.realpath(entry) == directory:
                return var
    for label, base in (("tvm package directory", tvm_dir), ("tvm_ffi package", ffi_dir)):
        real = os.path.realpath(base) if base else None
        if real and (directory == real or directory.startswith(real + os.sep)):
            return label
    return "system loader path"


def stage_python():
    emit(
        "python",
        executable=sys.executable,
        version=platform.python_version(),
        sys_path=sys.path,
        env={k: os.environ.get(k) for k in ENV_VARS},
    )


def stage_packages(light=False):
    spec = importlib.util.find_spec("tvm")
    ffi_spec = importlib.util.find_spec("tvm_ffi")
    emit(
        "packages",
        tvm_origin=spec.origin if spec else None,
        tvm_ffi_origin=ffi_spec.origin if ffi_spec else None,
        apache_tvm=extlibs.version("apache-tvm"),
        apache_tvm_ffi=extlibs.version("apache-tvm-ffi"),
        # Every installed distribution's file list read: not with --light.
        **({} if light else {"tvm_dists": tvm_dists()}),
    )


def stage_import():
    try:
        import tvm
    except BaseException as exc:  # noqa: BLE001 - the failure is the fact
        emit("import", **error_facts(exc))
        return None
    emit("import", ok=True, version=getattr(tvm, "__version__", None), file=tvm.__file__)
    return tvm


def stage_libraries(tvm, digests=True):
    ffi = sys.modules.get("tvm_ffi")
    tvm_dir = os.path.dirname(tvm.__file__)
    ffi_dir = os.path.dirname(ffi.__file__) if ffi else None
    libs = [
        {**extlibs.describe(p), "sha256": sha256(p) if digests else None,
         "rule": search_rule(p, tvm_dir, ffi_dir)}
        for p in extlibs.mapped_paths()
    ]
    emit("libraries", libraries=libs, tvm_ffi_version=getattr(ffi, "__version__", None))


def stage_build_info(tvm):
    info = {}
    try:
        info = {str(k): str(v) for k, v in tvm.support.libinfo().items()}
    except Exception as exc:  # noqa: BLE001
        info = {"error": str(exc)}
    llvm = None
    try:
        from tvm.target import codegen

        llvm = int(codegen.llvm_version_major())
    except Exception:  # noqa: BLE001 - built without LLVM
        pass
    emit("build_info", libinfo=info, llvm_version_major=llvm)


def stage_runtimes(tvm):
    import ctypes.util

    names = set()
    try:
        import tvm_ffi

        names = set(tvm_ffi.registry.list_global_func_names())
    except Exception:  # noqa: BLE001 - older TVMs: ask the runtime one name at a time
        names = None
    rows = []
    for kind in RUNTIMES:
        codegen_key = "llvm" if kind == "cpu" else kind
        if names is not None:
            codegen = f"target.build.{codegen_key}" in names
            runtime = f"device_api.{kind}" in names
        else:
            codegen = tvm.get_global_func(f"target.build.{codegen_key}", True) is not None
            runtime = tvm.get_global_func(f"device_api.{kind}", True) is not None
        present = False
        if runtime:
            try:
                present = bool(tvm.device(kind, 0).exist)
            except Exception:  # noqa: BLE001
                present = False
        rows.append({"kind": kind, "codegen": codegen, "runtime": runtime, "device": present})
    shipped = sorted(os.listdir(os.path.join(os.path.dirname(tvm.__file__), "lib"))) if \
        os.path.isdir(os.path.join(os.path.dirname(tvm.__file__), "lib")) else []
    emit("runtimes", runtimes=rows, shipped_libs=shipped,
         cuda_driver=ctypes.util.find_library("cuda"))
    return rows


def _tiny_module():
    from tvm import relax

    make_type = getattr(relax, "TensorStructInfo", None) or relax.TensorType
    bb = relax.BlockBuilder()
    x = relax.Var("x", make_type((4,), "float32"))
    with bb.function("main", [x]):
        y = bb.emit(relax.op.add(x, x))
        bb.emit_func_output(y)
    return bb.get()


def _compile(tvm, mod, target):
    from tvm import relax

    build = getattr(tvm, "compile", None) or relax.build
    return build(mod, target=tvm.target.Target(target))


def stage_smoke(tvm, runtimes):
    import numpy as np

    if getattr(tvm, "_RUNTIME_ONLY", False):  # tvm.relax is not even importable
        emit("smoke_llvm", ok=None, reason="a runtime-only TVM has no compiler")
        emit("smoke_cuda", ok=None, reason="a runtime-only TVM has no compiler")
        return
    try:
        from tvm import relax

        ex = _compile(tvm, _tiny_module(), {"kind": "llvm"})
        vm = relax.VirtualMachine(ex, tvm.cpu())
        make = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
        out = vm["main"](make(np.arange(4, dtype="float32"))).numpy()
        ok = out.tolist() == [0.0, 2.0, 4.0, 6.0]
        emit("smoke_llvm", ok=ok, output=out.tolist())
    except Exception as exc:  # noqa: BLE001
        emit("smoke_llvm", **error_facts(exc))
    cuda = next((r for r in runtimes if r["kind"] == "cuda"), None)
    if not cuda or not cuda["codegen"]:
        emit("smoke_cuda", ok=None, reason="built without CUDA codegen")
        return
    try:
        ex = _compile(tvm, _tiny_module(), {"kind": "cuda", "arch": "sm_80"})
        emit("smoke_cuda", ok=True)
    except Exception as exc:  # noqa: BLE001
        emit("smoke_cuda", **error_facts(exc))


def main(argv):
    # --light: what a build's post-build check judges, at the cost of one import: no digest
    # of each library (the build store has them), no smoke compile, no look at every other
    # installed distribution.
    light = "--light" in argv
    stage_python()
    stage_packages(light)
    tvm = stage_import()
    if tvm is None:
        return
    stage_libraries(tvm, digests=not light)
    extlibs.mode_environment()
    extlibs.mode_mapped()
    stage_build_info(tvm)
    try:
        runtimes = stage_runtimes(tvm)
    except Exception as exc:  # noqa: BLE001
        emit("runtimes", **error_facts(exc))
        runtimes = []
    if not light:
        stage_smoke(tvm, runtimes)


if __name__ == "__main__":
    main(sys.argv[1:])
