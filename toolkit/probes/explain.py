"""What the TVM importable here says about a failure's names: ``tk explain``'s environment check.

Run by path: ``python explain.py JSON`` where JSON is ``{"globals": [...], "names": [...]}``
(FFI global names and dotted Python names the log mentions). One JSON line per stage,
flushed, so a crash while importing tvm still leaves what came before it:

  tvm         import tvm: version, package directory (or the error)
  source      the package's source tree, when it is a git checkout's python/: its HEAD commit
  build       libinfo: the commit libtvm was built from, LLVM and CUDA versions, options set
  libraries   TVM, LLVM and GPU libraries mapped into this process, and what libtvm links
  globals     for each global name: registered here or not
  names       for each dotted name: importable here or not
"""

import json
import os
import re
import subprocess
import sys

import elfread  # beside this file: sys.path[0] when run by path

FAMILIES = (("libtvm", r"libtvm[\w]*\.so"), ("libLLVM", r"libLLVM[\w.-]*\.so"),
            ("libcuda", r"libcuda\.so"), ("libcudart", r"libcudart\.so"),
            ("libnvrtc", r"libnvrtc\.so"), ("libamdhip64", r"libamdhip64\.so"),
            ("libvulkan", r"libvulkan\.so"), ("libtvm_ffi", r"libtvm_ffi\.so"))


def emit(stage, **facts):
    print(json.dumps({"stage": stage, **facts}, default=str), flush=True)


def mapped():
    """(family, path) of every library of interest this process mapped."""
    out = []
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(maxsplit=5)
        path = parts[5].strip() if len(parts) == 6 else ""
        name = os.path.basename(path)
        for family, pattern in FAMILIES:
            if path.startswith("/") and re.match(pattern, name) and (family, path) not in out:
                if family == "libtvm" and name.startswith("libtvm_ffi"):
                    continue
                out.append((family, path))
    return out


def git_head(root):
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def main():
    asked = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    try:
        import tvm
    except BaseException as exc:  # noqa: BLE001 - the failure is the fact
        emit("tvm", ok=False, error_type=type(exc).__name__, error=str(exc)[-2000:])
        emit("libraries", mapped=mapped(), needed={})
        return
    package = os.path.dirname(os.path.realpath(tvm.__file__))
    emit("tvm", ok=True, version=getattr(tvm, "__version__", None), package=package)
    root = os.path.dirname(os.path.dirname(package))
    if os.path.basename(os.path.dirname(package)) == "python" and \
            os.path.exists(os.path.join(root, ".git")):
        emit("source", root=root, head=git_head(root))
    else:
        emit("source", root=None, head=None)
    info = {}
    try:
        info = {str(k): str(v) for k, v in tvm.support.libinfo().items()}
    except Exception as exc:  # noqa: BLE001 - a runtime-only build has no libinfo
        info = {"error": str(exc)[-300:]}
    keep = {k: v for k, v in info.items()
            if k in ("GIT_COMMIT_HASH", "GIT_COMMIT_TIME", "LLVM_VERSION", "CUDA_VERSION",
                     "ROCM_PATH", "error") or k.startswith("USE_") and v not in ("OFF", "", "0")}
    emit("build", libinfo=keep)
    libs = mapped()
    needed = {}
    for family, path in libs:
        if family == "libtvm":
            try:
                needed[path] = elfread.read(path).needed
            except (OSError, ValueError):
                needed[path] = []
    emit("libraries", mapped=libs, needed=needed)
    registered = {}
    for name in asked.get("globals", []):
        try:
            import tvm_ffi

            registered[name] = tvm_ffi.get_global_func(name, allow_missing=True) is not None
        except Exception:  # noqa: BLE001 - an older TVM: its own registry
            try:
                registered[name] = tvm.get_global_func(name, allow_missing=True) is not None
            except Exception:  # noqa: BLE001
                registered[name] = None
    emit("globals", registered=registered)
    present = {}
    for dotted in asked.get("names", []):
        present[dotted] = has_name(dotted)
    emit("names", present=present)


def has_name(dotted):
    """Is ``dotted`` importable here: a module, or an attribute of one?"""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 - importing it failed otherwise: not a yes
            return None
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


if __name__ == "__main__":
    main()
