"""``tk doctor``: the install checks a TVM developer does by hand, each with a fix.

The facts come from ``toolkit/probes/doctor.py`` run in a subprocess of the interpreter
under test, so a TVM that fails to import - or segfaults - is diagnosed, not inherited.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit import git as gitrun
from toolkit.explain import best, explain, one_line
from toolkit.libraries import CORE_FAMILIES, family, same_file
from toolkit.process import STAGE, run_probe

PASS, WARN, FAIL = "pass", "warn", "fail"


@dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str | None = None


@dataclass
class Report:
    python: str
    checks: list[Check]
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"python": self.python, "ok": self.ok,
                "checks": [asdict(c) for c in self.checks], "facts": self.facts}


def probe(python: str = sys.executable, env: dict[str, str] | None = None,
          timeout: float = 300, light: bool = False) -> dict[str, Any]:
    """Run the probe under ``python``; returns facts by stage, plus how the process ended."""
    ran = run_probe("doctor", *(["--light"] if light else []), python=python, env=env,
                    timeout=timeout, cwd=Path.home())
    facts: dict[str, Any] = {r[STAGE]: ran.stage(r[STAGE]) for r in ran.records}
    facts["exit"] = ran.ended
    return facts


def run(python: str = sys.executable, env: dict[str, str] | None = None,
        asked: dict[str, Any] | None = None, light: bool = False) -> Report:
    """Probe ``python`` and judge the facts. ``asked`` describes the build in use, when the
    caller knows it: ``{"build": id, "runtimes": ["cuda", ...], "lib_dir": path}``.

    ``light`` (a build's post-build check, which judges the import, the libraries mapped and
    the runtimes): one import of TVM, without what a full doctor adds at the cost of reading
    every library again, a smoke compile and a second import for the owners of globals."""
    facts = probe(python, env, light=light)
    if asked:
        facts["asked"] = asked
    if facts.get("import", {}).get("ok") and not light:
        facts.update(library_facts(python, env))
    checks: list[Check] = []
    for check in CHECKS:
        checks.extend(check(facts))
    for c in checks:  # failures TVM users have met before get the known cause and fix
        finding = best(c.detail) if c.status == FAIL else None
        if finding is not None and finding.fix not in (c.fix or ""):
            c.fix = f"{c.fix}; {finding.one_line()}" if c.fix else finding.one_line()
    return Report(python=python, checks=checks, facts=facts)


# --- checks: each turns facts into zero or more Check rows ------------------------------


def check_python(facts: dict[str, Any]) -> list[Check]:
    py = facts.get("python")
    if py is None:
        ended = facts["exit"]
        return [Check("python", FAIL, f"the interpreter did not start: {ended['stderr'][-300:]}",
                      "pass a working interpreter to --python")]
    return [Check("python", PASS, f"{py['version']} at {py['executable']}")]


def check_import(facts: dict[str, Any]) -> list[Check]:
    imp = facts.get("import")
    if imp is None:
        if "packages" not in facts:
            return []
        ended = facts["exit"]
        signal = f"killed by signal {-ended['code']}" if (ended["code"] or 0) < 0 else \
            f"exit {ended['code']}"
        return [Check("tvm import", FAIL, f"'import tvm' crashed the interpreter ({signal})",
                      "run 'python -X faulthandler -c \"import tvm\"' to see where; often two "
                      "TVMs meet in one process - check PYTHONPATH and TVM_LIBRARY_PATH")]
    if imp["ok"]:
        return [Check("tvm import", PASS, f"tvm {imp['version']} from {Path(imp['file']).parent}")]
    detail, fix = diagnose_import_failure(imp, facts.get("packages", {}))
    return [Check("tvm import", FAIL, detail, fix)]


def diagnose_import_failure(imp: dict[str, Any], packages: dict[str, Any]) -> tuple[str, str]:
    """Name the cause of a failed ``import tvm`` and the command that fixes it."""
    error = imp["error"]
    last = one_line(error) if error.strip() else imp["error_type"]
    # The corpus's matchers run in linear time even on a crafted one-line error.
    found = {f.id: f.groups for f in explain(error)}
    undefined = (found.get("undefined-tvm-ffi-symbol") or found.get("ext-tvm-ffi-skew")
                 or found.get("undefined-symbol"))
    if undefined:
        lib, symbol = undefined["lib"], undefined["sym"]
        readable = demangle(symbol)
        if "tvm::ffi" in readable or symbol.startswith("_ZN3tvm3ffi"):
            want = ffi_requirement(packages)
            have = packages.get("apache_tvm_ffi")
            pin = f"apache-tvm-ffi=={want}" if want else "apache-tvm-ffi"
            return (
                f"{Path(lib).name} needs {readable}, which the installed apache-tvm-ffi "
                f"{have} does not export: the TVM build and tvm-ffi disagree "
                f"(apache-tvm {packages.get('apache_tvm')} asks for apache-tvm-ffi>={want})",
                f"pip install '{pin}' (or rebuild TVM against tvm-ffi {have})",
            )
        return (f"{Path(lib).name}: undefined symbol {readable}",
                "the library was built against other libraries than the ones loaded; "
                "rebuild it, or fix LD_LIBRARY_PATH / TVM_LIBRARY_PATH")
    if imp["error_type"] == "ModuleNotFoundError" and "'tvm" in error:
        return ("no tvm package is importable by this interpreter",
                "pip install apache-tvm (or put a build on the path: eval \"$(tk env ID)\")")
    missing = found.get("library-not-found") or found.get("cuda-no-driver")
    tvm_lib = re.search(r"Cannot find (?:library )?(libtvm\w*)", error)
    if missing or tvm_lib:
        name = missing["lib"] if missing and "lib" in missing else tvm_lib.group(1) if tvm_lib \
            else "libcuda.so.1"
        return (f"a TVM library cannot be loaded: {name}",
                "check TVM_LIBRARY_PATH points at the build's lib directory, or reinstall "
                "with pip install --force-reinstall apache-tvm")
    prefix = "" if last.startswith(imp["error_type"]) else f"{imp['error_type']}: "
    return (f"import tvm failed: {prefix}{last}",
            "run python -c 'import tvm' to see the whole traceback")


def ffi_requirement(packages: dict[str, Any]) -> str | None:
    """The tvm-ffi version apache-tvm declares (its floor: what it was built against)."""
    for dist in packages.get("tvm_dists", []):
        for req in dist.get("requires", []):
            m = re.match(r"apache-tvm-ffi\s*(?:>=|==|~=)\s*([\w.]+)", req)
            if m:
                return m.group(1)
    return None


def demangle(symbol: str) -> str:
    tool = shutil.which("c++filt")
    if not tool:
        return symbol
    out = subprocess.run([tool, symbol], capture_output=True, text=True)
    return out.stdout.strip() or symbol


def check_packages(facts: dict[str, Any]) -> list[Check]:
    pkgs = facts.get("packages")
    if pkgs is None:
        return []
    rows = []
    dists = pkgs.get("tvm_dists", [])
    if len(dists) > 1:
        names = ", ".join(f"{d['name']} {d['version']}" for d in dists)
        rows.append(Check("tvm distributions", WARN, f"several installs provide 'tvm': {names}",
                          "pip uninstall the ones you do not use"))
    ffi = pkgs.get("apache_tvm_ffi")
    rows.append(Check("apache-tvm-ffi", PASS if ffi else WARN,
                      ffi or "not installed as a distribution (a source build's tvm-ffi?)",
                      None if ffi else "pip install apache-tvm-ffi, or pip install -e "
                      "3rdparty/tvm-ffi in a source tree"))
    return rows


def check_libraries(facts: dict[str, Any]) -> list[Check]:

    libs = facts.get("libraries")
    if libs is None:
        return []
    rows = []
    by_name: dict[str, list[str]] = {}
    for lib in libs["libraries"]:
        by_name.setdefault(Path(lib["path"]).name, []).append(lib["path"])
        detail = (f"{lib['path']} (found by {lib['rule']}; SONAME {lib.get('soname') or '-'}, "
                  f"build id {(lib.get('build_id') or '-')[:12]}, sha256 {(lib['sha256'] or '-')[:12]})")
        problem = soname_problem(lib["path"], lib.get("soname"))
        rows.append(Check("library", WARN if problem else PASS, detail, problem))
    for name, paths in by_name.items():
        if len(paths) > 1:
            rows.append(Check("library", FAIL, f"{name} is mapped twice: {', '.join(paths)}",
                              "two TVMs in one process: remove one from PYTHONPATH / "
                              "TVM_LIBRARY_PATH"))
    return rows


def check_build_info(facts: dict[str, Any]) -> list[Check]:
    info = facts.get("build_info")
    if info is None:
        return []
    llvm = info.get("llvm_version_major")
    asked = facts.get("asked") or {}
    if llvm is None and asked.get("runtime_only"):
        return [Check("llvm", PASS, f"none: tk build {asked['build']} is the runtime alone "
                      "(--runtime-only), as asked; it runs compiled models, compiles none")]
    if llvm is None:
        return [Check("llvm", WARN, "built without LLVM: no CPU codegen",
                      "rebuild with tk build --llvm")]
    return [Check("llvm", PASS, f"LLVM {llvm}")]


def check_runtimes(facts: dict[str, Any]) -> list[Check]:
    rt = facts.get("runtimes")
    if rt is None:
        return []
    if "runtimes" not in rt:
        return [Check("runtimes", WARN, f"could not list runtimes: {rt.get('error')}")]
    rows = []
    # check_requested_runtimes judges the runtimes the build in use was asked for
    asked = set((facts.get("asked") or {}).get("runtimes", []))
    for r in rt["runtimes"]:
        if not (r["codegen"] or r["runtime"]) or (r["kind"] in asked and not r["runtime"]):
            continue
        parts = ["codegen" if r["codegen"] else None, "runtime" if r["runtime"] else None]
        have = " + ".join(p for p in parts if p)
        if r["device"]:
            rows.append(Check(f"runtime {r['kind']}", PASS, f"{have}; device present"))
        elif r["runtime"]:
            rows.append(Check(f"runtime {r['kind']}", PASS, f"{have}; no device (compile-only)"))
        else:
            why = "no runtime library loaded"
            if r["kind"] == "cuda" and not rt.get("cuda_driver"):
                why = "CUDA runtime not loaded: no NVIDIA driver (libcuda.so) on this machine"
            rows.append(Check(f"runtime {r['kind']}", PASS, f"{have}; {why} (compile-only)"))
    return rows


def shadowing_build(facts: dict[str, Any], path: str | None) -> str | None:
    """The tk build in use (``tk env``) whose Python directories hold ``path``: then what it
    shadows further down sys.path is shadowed on purpose. None otherwise."""
    asked = facts.get("asked") or {}
    if not path or not asked.get("python"):
        return None
    real = os.path.realpath(path)
    for entry in asked["python"]:
        if real.startswith(os.path.realpath(entry) + os.sep):
            return asked["build"]
    return None


def holds_mapped(entry: str, facts: dict[str, Any]) -> bool:
    """Does a directory hold a TVM library (by file, so hard links count) that this process
    mapped? Then it is the build in use, not another one."""
    mapped = (facts.get("mapped") or {}).get("libraries", []) + \
        (facts.get("libraries") or {}).get("libraries", [])
    for lib in mapped:
        candidate = os.path.join(entry, os.path.basename(lib["path"]))
        if os.path.exists(candidate) and same_file(candidate, lib["path"]):
            return True
    return False


def check_requested_runtimes(facts: dict[str, Any]) -> list[Check]:
    """A runtime the build in use was asked for (tk build --cuda, USE_VULKAN=ON, ...) that
    did not load here is a failure, not a compile-only PASS. ``facts["asked"]`` comes from the
    caller, which knows the build (tk doctor: the tk build that TVM_LIBRARY_PATH points at)."""
    rt = facts.get("runtimes") or {}
    asked = facts.get("asked")
    if not asked or "runtimes" not in rt:
        return []
    rows = []
    have = {r["kind"]: r for r in rt["runtimes"]}
    for kind in asked["runtimes"]:
        if have.get(kind, {}).get("runtime"):
            continue
        lib = Path(asked["lib_dir"]) / f"libtvm_runtime_{kind}.so"
        why = f"its runtime did not register device_api.{kind}"
        fix = f"rebuild it: tk build --force (build {asked['build']})"
        if kind == "cuda" and not rt.get("cuda_driver"):
            why = "no NVIDIA driver (libcuda.so) on this machine, so the CUDA runtime cannot load"
            fix = "run on a machine with the NVIDIA driver, or use a build without --cuda"
        elif lib.exists() and asked.get("runtime_only"):
            # TVM main's Python loads backend libraries with its compiler's backends
            # (tvm/backend/_autoload_backends.py), which a runtime-only install skips.
            why = (f"{lib.name} is in the build, but TVM's Python loads a backend's runtime "
                   "library only beside the compiler, and this build is runtime-only")
            fix = f"load it before using the device: ctypes.CDLL({str(lib)!r})"
        elif lib.exists():
            why = f"{lib.name} is in the build but was not loaded"
        rows.append(Check(f"runtime {kind}", FAIL,
                          f"build {asked['build']} was asked for {kind}; {why}", fix))
    return rows


def check_smoke(facts: dict[str, Any]) -> list[Check]:
    rows = []
    llvm = facts.get("smoke_llvm")
    if llvm is not None and llvm.get("ok") is not None:  # None: not run (runtime-only TVM)
        if llvm.get("ok"):
            rows.append(Check("smoke llvm", PASS, "compiled and ran x + x on cpu"))
        else:
            err = llvm.get("error", f"wrong result {llvm.get('output')}")
            rows.append(Check("smoke llvm", FAIL, f"compile-and-run failed: {one_line(err)}",
                              "run tk --debug run builtin:mlp --target llvm to reproduce"))
    cuda = facts.get("smoke_cuda")
    if cuda is not None and cuda.get("ok") is not None:
        if cuda["ok"]:
            rows.append(Check("smoke cuda", PASS, "compiled x + x for cuda sm_80 (not run)"))
        else:
            rows.append(Check("smoke cuda", FAIL, f"CUDA compile failed: "
                              f"{one_line(cuda.get('error', ''))}",
                              "tk --debug compile builtin:mlp --target 'cuda -arch=sm_80'"))
    return rows


def check_environment(facts: dict[str, Any]) -> list[Check]:
    py = facts.get("python")
    if py is None:
        return []
    env = py["env"]
    imported = facts.get("import", {}).get("file")
    rows = []
    for var in ("TVM_LIBRARY_PATH", "TVM_HOME", "PYTHONPATH"):
        value = env.get(var)
        if not value:
            continue
        for entry in value.split(os.pathsep):
            if entry and not os.path.exists(entry):
                rows.append(Check(f"env {var}", WARN, f"{entry} does not exist",
                                  f"unset {var} or point it at an existing directory"))
        candidate = _tvm_python_under(value)
        if candidate and imported and not Path(imported).resolve().is_relative_to(
                Path(candidate).resolve()):
            rows.append(Check(f"env {var}", WARN,
                              f"points at the TVM in {candidate}, but tvm was imported from "
                              f"{Path(imported).parent}",
                              f"unset {var}, or make it the TVM you mean to use"))
        elif not any(r.name == f"env {var}" for r in rows):
            rows.append(Check(f"env {var}", PASS, value))
    return rows


def _tvm_python_under(value: str) -> str | None:
    for entry in filter(None, value.split(os.pathsep)):
        for candidate in (Path(entry) / "tvm", Path(entry) / "python" / "tvm"):
            if (candidate / "__init__.py").exists():
                return str(candidate)
    return None


def tree_root(path: Path) -> Path | None:
    """The TVM source tree ``path`` is in: the nearest ancestor holding CMakeLists.txt and
    python/tvm, or, for a library of a build tk stored (``ENTRY/lib/``, the record in
    ``ENTRY/manifest.json``), the tree it was built from; None for an installed package."""
    for parent in (path, *path.parents):
        if (parent / "CMakeLists.txt").is_file() and (parent / "python" / "tvm").is_dir():
            return parent
        if parent.name == "lib" and (parent.parent / "manifest.json").is_file():
            try:  # the build record's format (toolkit.builds.record), read without the store
                built = json.loads((parent.parent / "manifest.json").read_text())["source"]["dir"]
            except (OSError, ValueError, KeyError, TypeError):
                return None
            return tree_root(Path(built)) if built else None
    return None


def check_python_library_skew(facts: dict[str, Any]) -> list[Check]:
    """Do tvm's Python sources and its libraries come from the same tree (and commit)?

    PYTHONPATH at one tree's python/ with TVM_LIBRARY_PATH at another tree's build (or a
    wheel's libraries) gives a process whose Python expects objects and functions the library
    lacks: "Cannot find object type index", "Cannot find global function". A tree whose
    sources moved on after its build (a git pull without a rebuild) does the same."""
    py = facts.get("python")
    if py is None:
        return []
    env = py["env"]
    imp = facts.get("import") or {}
    if imp.get("ok"):
        package = Path(imp["file"]).parent
    else:
        found = _tvm_python_under(env.get("PYTHONPATH") or "")
        if not found:
            return []
        package = Path(found)
    libs = [Path(lib["path"]) for lib in (facts.get("libraries") or {}).get("libraries", [])
            if not (family(os.path.realpath(lib["path"])) or "libtvm_ffi").startswith("libtvm_ffi")]
    if not libs:
        for entry in filter(None, (env.get("TVM_LIBRARY_PATH") or "").split(os.pathsep)):
            libs += sorted(p for p in Path(entry).glob("libtvm*.so") if "ffi" not in p.name)
    if not libs:
        return []
    py_tree = tree_root(package)
    why = ""
    error = imp.get("error") or ""
    if not imp.get("ok") and re.search(r"Cannot find (?:object )?type|type_key2index|"
                                       r"Cannot find global function", error):
        why = f" - which is why import tvm fails: {one_line(error)}"
    for lib in libs:
        lib_tree = tree_root(lib)
        same_package = lib.resolve().is_relative_to(package.resolve())
        if py_tree != lib_tree or (py_tree is None and not same_package):
            py_side = f"tree {py_tree}" if py_tree else f"the installed package {package}"
            lib_side = f"tree {lib_tree}" if lib_tree else f"{lib.parent}"
            via = "TVM_LIBRARY_PATH" if env.get("TVM_LIBRARY_PATH") else "the loader path"
            return [Check("python vs library", FAIL,
                          f"tvm's Python comes from {py_side} but {lib.name} from {lib_side} "
                          f"(found through {via}): two TVMs meet in one process{why}",
                          f"use one tree: point TVM_LIBRARY_PATH at "
                          f"{(py_tree / 'build') if py_tree else package / 'lib'}, or PYTHONPATH "
                          f"at {(lib_tree / 'python') if lib_tree else 'the matching package'}")]
    built = ((facts.get("build_info") or {}).get("libinfo") or {}).get("GIT_COMMIT_HASH", "")
    if py_tree is not None and re.fullmatch(r"[0-9a-f]{7,40}", built or ""):
        head = gitrun.run("rev-parse", "HEAD", cwd=py_tree, check=False).stdout.strip()
        if head and not head.startswith(built) and not built.startswith(head):
            return [Check("python vs library", WARN,
                          f"{py_tree}'s sources are at {head[:12]}, but its libtvm was built "
                          f"from {built[:12]}: the library is older or newer than the Python",
                          f"rebuild: cmake --build {py_tree / 'build'}")]
    where = f"tree {py_tree}" if py_tree else f"the package {package}"
    return [Check("python vs library", PASS, f"Python and libraries both from {where}")]


# --- library facts: which library registers what, and what a SONAME allows ----------------


def library_facts(python: str, env: dict[str, str] | None = None,
                 timeout: float = 300) -> dict[str, Any]:
    """Which library registers which global functions: the owners probe, in a fresh process
    of ``python`` (it loads TVM's libraries one by one, which may abort it)."""
    ran = run_probe("extlibs", "owners", python=python, env=env, timeout=timeout)
    return {"ext_owners": ran.records, "ext_owners_exit": ran.ended}


def soname_problem(path: str, soname: str | None) -> str | None:
    """Why a core TVM library's SONAME lets a second copy be mapped, or None."""
    fam = family(os.path.realpath(path))
    if fam in CORE_FAMILIES and soname != f"{fam}.so":
        return (f"a {fam} whose SONAME is not {fam}.so is not recognised by ld.so as the one "
                "extensions link: a second copy can get mapped; rebuild TVM with the default "
                "SONAME")
    return None


def check_redirects(facts: dict[str, Any]) -> list[Any]:
    """sys.path entries and env vars that point at another tvm (the vendored-TVM pattern)."""

    envf = facts.get("environment")
    if not envf:
        return []
    imported = envf.get("imported_tvm")
    rows = []
    for r in envf["redirects"]:
        if r.get("tvm") and r["tvm"] == imported:
            continue
        build = shadowing_build(facts, imported)
        if r.get("tvm") and build:
            rows.append(Check("vendored tvm", PASS, f"{r['where']} ({r['entry']}) holds another "
                              f"tvm package, shadowed by tk build {build}'s {imported}"))
        elif r.get("tvm"):
            rows.append(Check(
                "vendored tvm", WARN,
                f"{r['where']} ({r['entry']}) holds another tvm package: {r['tvm']} "
                f"(imported: {imported})",
                "keep one TVM per interpreter: drop that entry (a project's 3rdparty/tvm/python "
                "belongs in its own environment), or make it the only tvm"))
        elif r.get("libraries"):
            lib_dir = os.path.join(imported, "lib") if imported else None
            if lib_dir and same_file(r["entry"], lib_dir):
                continue
            if holds_mapped(r["entry"], facts):
                continue  # the libraries this process really uses (tk env's lib directory)
            rows.append(Check(
                "vendored tvm", WARN,
                f"{r['where']} entry {r['entry']} holds TVM libraries "
                f"({', '.join(r['libraries'][:3])}) other than the imported tvm's",
                f"unset {r['where']} or point it at {lib_dir or 'the imported tvm'}/"))
    mapped_facts = facts.get("mapped") or {}
    ffi_pkg = mapped_facts.get("tvm_ffi_file")
    ffi_lib = next((lib["path"] for lib in mapped_facts.get("libraries", [])
                    if family(os.path.realpath(lib["path"])) == "libtvm_ffi"), None)
    if ffi_pkg and ffi_lib and not os.path.realpath(ffi_lib).startswith(
            os.path.realpath(os.path.dirname(ffi_pkg)) + os.sep):
        rows.append(Check(
            "vendored tvm", WARN,
            f"tvm_ffi is imported from {os.path.dirname(ffi_pkg)} but its libtvm_ffi.so is "
            f"mapped from {ffi_lib} (tvm_ffi looks in the installed apache-tvm-ffi's RECORD "
            "first)",
            "use the pip-installed tvm_ffi with it, or uninstall apache-tvm-ffi where a "
            "vendored tvm_ffi must load its own library"))
    if not rows:
        rows.append(Check("vendored tvm", PASS, "no sys.path entry or environment variable "
                          "points at another tvm"))
    return rows


def check_dist_infos(facts: dict[str, Any]) -> list[Any]:
    """Stale tvm dist-infos: two versions of one project, or records of deleted files."""

    envf = facts.get("environment")
    if not envf:
        return []
    rows = []
    by_project: dict[str, list[dict[str, Any]]] = {}
    for d in envf["dist_infos"]:
        by_project.setdefault(d["project"], []).append(d)
        if d["missing_files"]:
            rows.append(Check("stale dist-info", WARN,
                              f"{d['path']} lists {d['missing_files'][0]}, which is gone",
                              f"pip uninstall {d['project'].replace('_', '-')} and reinstall, "
                              f"or delete {d['path']}"))
    for project, dists in by_project.items():
        build = shadowing_build(facts, dists[0]["path"]) if len(dists) > 1 else None
        if build:  # sys.path order: the first is the one in use
            rows.append(Check("dist-info", PASS,
                              f"{project} {dists[0]['version']} of tk build {build} shadows "
                              + ", ".join(f"{d['version']} ({d['path']})" for d in dists[1:])))
        elif len(dists) > 1:
            rows.append(Check("stale dist-info", WARN,
                              f"{len(dists)} installs of {project}: "
                              + ", ".join(f"{d['version']} ({d['path']})" for d in dists),
                              "delete the dist-info directories of the versions not in use"))
    return rows


def check_global_owners(facts: dict[str, Any]) -> list[Any]:
    """Which library registered how many global functions; a duplicate registration fails."""
    from toolkit.doctor import FAIL, PASS, Check

    records = facts.get("ext_owners")
    if records is None:
        return []
    rows = []
    owners: dict[str, str] = {}
    last_loading = None
    for r in records:
        if r[STAGE] == "loading":
            last_loading = r["library"]
        elif r[STAGE] == "owner":
            last_loading = None
            name = os.path.basename(r["library"])
            if r.get("ok") is False:
                missing = re.search(r"(\S+): cannot open shared object file", r["error"])
                why = f"{missing.group(1)} not found" if missing else r["error"][-120:]
                rows.append(Check("globals", PASS, f"{name}: not loadable here ({why}); "
                                  "registers nothing"))
                continue
            for g in r["registered"]:
                owners.setdefault(g, r["library"])
            sample = ", ".join(r["registered"][:3])
            rows.append(Check("globals", PASS, f"{name} registers {len(r['registered'])}"
                              + (f" (e.g. {sample})" if sample else "")))
    ended = facts.get("ext_owners_exit", {})
    if last_loading is not None and ended.get("code"):
        finding = best(ended.get("stderr", ""))
        if finding is not None and finding.id == "duplicate-global-function":
            dup = finding.groups["name"]
            first = owners.get(dup, "an earlier library")
            rows.append(Check("globals", FAIL, f"{last_loading} registers {dup}, already "
                              f"registered by {first}: loading it aborts the process",
                              "two builds of TVM (or an extension and TVM) define the same "
                              "global; keep one of them"))
        else:
            rows.append(Check("globals", FAIL, f"loading {last_loading} ended the process "
                              f"(exit {ended['code']})",
                              finding.one_line() if finding else "run tk --debug doctor"))
    return rows


CHECKS: list[Callable[[dict[str, Any]], list[Check]]] = [
    check_python,
    check_packages,
    check_import,
    check_libraries,
    check_build_info,
    check_runtimes,
    check_requested_runtimes,
    check_smoke,
    check_environment,
    check_python_library_skew,
    check_redirects,
    check_dist_infos,
    check_global_owners,
]


def render(report: Report) -> str:
    lines = [f"tk doctor: {report.python}"]
    for c in report.checks:
        lines.append(f"  {c.status.upper():4}  {c.name:18} {c.detail}")
        if c.fix and c.status != PASS:
            lines.append(f"        {'':18} fix: {c.fix}")
    failed = sum(c.status == FAIL for c in report.checks)
    warned = sum(c.status == WARN for c in report.checks)
    lines.append(f"{failed} failed, {warned} warnings, {len(report.checks)} checks")
    return "\n".join(lines)
