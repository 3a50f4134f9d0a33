"""Facts about TVM libraries and global functions, from inside the interpreter under test.

Run by path: ``python extlibs.py MODE [ARGS]``; one JSON line per fact, flushed, so that a
load that aborts the process (a duplicate global registration does) still leaves the facts
before it and the name of the library being loaded.

Modes:
  mapped            import tvm; the TVM libraries now mapped, versions, registered globals
  globals LIB...    import tvm; load each LIB; the global names each one added
  owners            load TVM's own libraries one by one, then import tvm: who registered what
  environment       sys.path / env entries that hold another tvm, and stale tvm dist-infos
  where [NAME...]   where tvm and tvm-ffi are and their versions, without importing them,
                    and where an import of each NAME would come from (None: nowhere)
"""

import ctypes
import importlib.metadata
import importlib.util
import json
import os
import re
import sys

import elfread  # beside this file: sys.path[0] when run by path

ENV_VARS = ("PYTHONPATH", "TVM_LIBRARY_PATH", "TVM_HOME", "LD_LIBRARY_PATH")


def emit(stage, **facts):
    print(json.dumps({"stage": stage, **facts}, default=str), flush=True)


def family(path):
    m = re.match(r"^(libtvm[A-Za-z0-9_]*)\.so", os.path.basename(path))
    return m.group(1) if m else None


def describe(path):
    try:
        info = elfread.read(path)
    except (OSError, ValueError):
        return {"path": path, "soname": None, "build_id": None, "needed": [], "runpath": []}
    return {"path": path, "soname": info.soname, "build_id": info.build_id,
            "needed": info.needed, "runpath": info.runpath, "rpath": info.rpath}


def mapped_paths():
    paths = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            path = parts[5].strip() if len(parts) == 6 else ""
            if path.startswith("/") and family(path) and path not in paths:
                paths.append(path)
    return paths


def names():
    import tvm_ffi

    return set(tvm_ffi.registry.list_global_func_names())


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def mode_mapped():
    import tvm
    import tvm_ffi

    emit("mapped", libraries=[describe(p) for p in mapped_paths()],
         tvm_file=tvm.__file__, tvm_version=getattr(tvm, "__version__", None),
         tvm_ffi_file=tvm_ffi.__file__, tvm_ffi_version=getattr(tvm_ffi, "__version__", None),
         apache_tvm=version("apache-tvm"), apache_tvm_ffi=version("apache-tvm-ffi"),
         executable=os.path.realpath(sys.executable), globals=sorted(names()))


def mode_globals(libs):
    import tvm  # noqa: F401 - first, as every extension loader must

    for lib in libs:
        load_and_report("globals", lib, names())


def load_and_report(stage, lib, before):
    """Load ``lib`` globally and emit ``stage`` with what it registered beyond ``before``
    (a "loading" record first: if the load aborts the process, it names the library).
    Returns the registry's names after the load, or None when the library did not load."""
    emit("loading", library=lib)
    try:
        ctypes.CDLL(lib, ctypes.RTLD_GLOBAL)
    except OSError as exc:
        emit(stage, library=lib, ok=False, error=str(exc))
        return None
    now = names()
    emit(stage, library=lib, ok=True, registered=sorted(now - before))
    return now


def dependency_order(paths):
    """Libraries after the TVM libraries they need (by SONAME/basename)."""
    infos = {p: describe(p) for p in paths}
    by_name = {os.path.basename(p): p for p in paths}
    for p, info in infos.items():
        if info["soname"]:
            by_name[info["soname"]] = p
    done, order = set(), []

    def visit(p, stack=()):
        if p in done or p in stack:
            return
        for n in infos[p]["needed"]:
            if n in by_name:
                visit(by_name[n], (*stack, p))
        done.add(p)
        order.append(p)

    for p in sorted(paths):
        visit(p)
    return order


def mode_owners():
    spec = importlib.util.find_spec("tvm")
    import tvm_ffi  # noqa: F401 - maps libtvm_ffi, whose own globals come first

    seen = names()
    ffi_lib = next((p for p in mapped_paths() if family(p) == "libtvm_ffi"), "libtvm_ffi")
    emit("owner", library=ffi_lib, registered=sorted(seen))
    lib_dir = os.path.join(os.path.dirname(spec.origin), "lib") if spec else None
    paths = []
    if lib_dir and os.path.isdir(lib_dir):
        paths = [os.path.join(lib_dir, n) for n in sorted(os.listdir(lib_dir)) if family(n)]
    for lib in dependency_order(paths):
        now = load_and_report("owner", lib, seen)
        if now is not None:
            seen = now
    emit("loading", library="python: import tvm")
    import tvm  # noqa: F401

    emit("owner", library="python: import tvm", registered=sorted(names() - seen))


def tvm_packages_under(entry):
    out = []
    for cand in (os.path.join(entry, "tvm"), os.path.join(entry, "python", "tvm"),
                 os.path.join(entry, "3rdparty", "tvm", "python", "tvm")):
        if os.path.isfile(os.path.join(cand, "__init__.py")):
            out.append(os.path.realpath(cand))
    return out


def mode_environment():
    spec = importlib.util.find_spec("tvm")
    chosen = os.path.realpath(os.path.dirname(spec.origin)) if spec and spec.origin else None
    redirects = []
    for i, entry in enumerate(sys.path):
        for pkg in tvm_packages_under(entry or os.getcwd()):
            redirects.append({"where": f"sys.path[{i}]", "entry": entry, "tvm": pkg,
                              "imported": pkg == chosen})
    for var in ENV_VARS:
        for entry in filter(None, os.environ.get(var, "").split(os.pathsep)):
            pkgs = tvm_packages_under(entry)
            libs = [n for n in (os.listdir(entry) if os.path.isdir(entry) else []) if family(n)]
            if pkgs or (libs and var != "PYTHONPATH"):
                redirects.append({"where": var, "entry": entry, "tvm": pkgs[0] if pkgs else None,
                                  "libraries": libs,
                                  "imported": bool(pkgs) and pkgs[0] == chosen})
    dist_infos = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        for name in sorted(os.listdir(entry)):
            m = re.match(r"^(apache_tvm(?:_ffi)?|tvm|tlcpack[\w]*|mlc_ai[\w]*)-([^-]+)\."
                         r"(dist-info|egg-info)$", name)
            if not m:
                continue
            path = os.path.join(entry, name)
            record = os.path.join(path, "RECORD")
            missing = []
            if os.path.isfile(record):
                with open(record) as f:
                    files = [line.split(",")[0] for line in f if line.strip()]
                missing = [p for p in files if p.endswith("__init__.py")
                           and not os.path.exists(os.path.join(entry, p))][:5]
            dist_infos.append({"path": path, "project": m.group(1), "version": m.group(2),
                               "missing_files": missing})
    emit("environment", imported_tvm=chosen, redirects=redirects, dist_infos=dist_infos)


def mode_where(modules):
    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    spec = {name: importlib.util.find_spec(name) for name in ("tvm", "tvm_ffi")}
    emit("where", **{f"{name}_dir": os.path.dirname(s.origin) if s and s.origin else None
                     for name, s in spec.items()},
         **{dist: version(dist) for dist in ("apache-tvm", "apache-tvm-ffi")},
         modules={name: module_origin(name) for name in modules})


def module_origin(name):
    """Where ``import name`` would come from in this interpreter (the package directory, the
    module's file, "built in"), without importing it; None when nothing has that name. The
    probes' own directory (sys.path[0] here) is left out: no one else imports from it."""
    import importlib.machinery

    if name in sys.builtin_module_names:
        return "built in"
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec(name, path)
    if spec is None:
        return None
    if spec.submodule_search_locations:  # a package, or a namespace package's first part
        return list(spec.submodule_search_locations)[0]
    return spec.origin


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "mapped"
    if mode == "mapped":
        mode_mapped()
    elif mode == "globals":
        mode_globals(sys.argv[2:])
    elif mode == "owners":
        mode_owners()
    elif mode == "environment":
        mode_environment()
    elif mode == "where":
        mode_where(sys.argv[2:])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
