"""Which TVM an extension builds against, and whether its headers match its libraries.

The apache-tvm wheel ships only ``include/tvm/runtime``, so an extension using compiler
headers (``tvm/tirx/transform.h``...) compiles against a source tree (``--tvm-source``) or a
stored tk build's tree (``--build``). Those headers must be the ones of the TVM whose
libraries it links, and they were written against the tvm-ffi of the tree's
``3rdparty/tvm-ffi``, whose headers the build then uses too, while libtvm_ffi is the one the
Python (or the stored build) has. A skew shows as compiler errors far from the cause
(``'SEqHashDefRecursive' is not a member of ...``) or as an ``undefined symbol`` at load;
``check`` says it before compiling: the TVM versions, the tvm-ffi versions, and a symbol
probe (a tiny library compiled against the headers: the TVM and tvm-ffi functions it needs
must be exported by the libraries).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from toolkit import libraries
from toolkit.errors import TkError, UserError
from toolkit.ext.manifest import ffi_abi
from toolkit.libraries import FFI_VERSION_H, ffi_header_version

TVM_VERSION_H = Path("include/tvm/runtime/base.h")
TREE_FFI = Path("3rdparty/tvm-ffi")

# What the symbol probe odr-uses, per TVM header: functions defined in the libraries (not
# inline), whose mangled names change when their declarations do, and which a library built
# with HIDE_PRIVATE_SYMBOLS (the wheels) exports only when declared TVM_DLL. A function is
# probed when the extension includes its header and its sources name it.
PROBES: dict[str, dict[str, str]] = {
    "tvm/tirx/transform.h": {"CreatePrimFuncPass": "&tvm::tirx::transform::CreatePrimFuncPass"},
    "tvm/tir/transform.h": {"CreatePrimFuncPass": "&tvm::tir::transform::CreatePrimFuncPass"},
    "tvm/tirx/stmt_functor.h": {"PostOrderVisit": "&tvm::tirx::PostOrderVisit"},
    "tvm/tir/stmt_functor.h": {"PostOrderVisit": "&tvm::tir::PostOrderVisit"},
    "tvm/relax/transform.h": {
        "CreateFunctionPass": "&tvm::relax::transform::CreateFunctionPass"},
    "tvm/relax/expr_functor.h": {"PostOrderVisit": "&tvm::relax::PostOrderVisit"},
    "tvm/runtime/c_backend_api.h": {"TVMBackendAllocWorkspace": "&TVMBackendAllocWorkspace",
                                    "TVMBackendFreeWorkspace": "&TVMBackendFreeWorkspace"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](tvm/[\w/.]+)[>"]', re.M)
FFI_DLL = re.compile(r"^TVM_FFI_DLL\b[^(;]*?\b(TVMFFI\w+)\s*\(", re.M)


@dataclass
class Against:
    """The TVM a build uses: headers (under ``tvm_root``, ``ffi_root``) and the libraries linked
    (``library_dir``: libtvm_runtime and libtvm_compiler; ``ffi_library``), with the versions
    those libraries are known to be (None: not known), and the CMake variables that say it."""

    tvm_root: Path  # holds include/tvm/: a source tree, a wheel's tvm/
    ffi_root: Path  # holds include/tvm/ffi/: a tree's 3rdparty/tvm-ffi, a wheel's tvm_ffi/
    library_dir: Path
    ffi_library: Path | None
    library_tvm: str | None
    library_ffi: str | None
    origin: str  # how the user named it, for messages: '--tvm-source DIR', '--build ID'
    cmake: dict[str, str] = field(default_factory=dict)
    stale: str | None = None  # why the headers are no longer those the libraries were built from

    def libraries(self, compiler: bool) -> list[Path]:
        names = ["libtvm_runtime.so", *(["libtvm_compiler.so", "libtvm.so"] if compiler else [])]
        found = [self.library_dir / n for n in names if (self.library_dir / n).is_file()]
        return found + ([self.ffi_library] if self.ffi_library else [])


def tvm_version(root: Path) -> str | None:
    """TVM_VERSION of ``root/include/tvm/runtime/base.h`` (a source tree or a wheel's tvm/)."""
    path = root / TVM_VERSION_H
    if not path.is_file():
        return None
    m = re.search(r'#define\s+TVM_VERSION\s+"([^"]+)"', path.read_text(errors="replace"))
    return m.group(1) if m else None


def release(version: str) -> str:
    """'0.26.dev0' -> '0.26', '0.27.0' -> '0.27': the release the headers belong to."""
    return ".".join(re.findall(r"\d+", version)[:2])


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def tree_ffi_root(tree: Path, package_ffi: Path | None) -> Path:
    """The tvm-ffi headers a tree's headers go with: its own 3rdparty/tvm-ffi when it has one
    (TVM builds with those), else the Python's apache-tvm-ffi."""
    own = tree / TREE_FFI
    if (own / FFI_VERSION_H).is_file():
        return own
    if package_ffi is None:
        raise UserError(f"{tree} has no {TREE_FFI} and the Python has no tvm_ffi: pip install "
                        "apache-tvm-ffi")
    return package_ffi


def version_mismatches(against: Against) -> list[str]:
    """The TVM and tvm-ffi versions of the headers against those of the libraries."""
    problems = [against.stale] if against.stale else []
    src_tvm = tvm_version(against.tvm_root)
    if src_tvm is None:
        raise UserError(f"{against.origin}: no {TVM_VERSION_H} in {against.tvm_root} (not a TVM "
                        "source tree)")
    lib_tvm = against.library_tvm
    if lib_tvm and release(lib_tvm) != release(src_tvm):
        problems.append(f"TVM: headers {src_tvm} ({against.tvm_root}), library {lib_tvm} "
                        f"({against.library_dir})")
    src_ffi = ffi_header_version(against.ffi_root)
    lib_ffi = against.library_ffi
    if src_ffi and lib_ffi:
        # tvm-ffi keeps its C ABI within a minor (0.x) / major release and only adds to it:
        # a library of the same ABI, as new as the headers or newer, serves them.
        if ffi_abi(src_ffi) != ffi_abi(lib_ffi) or _numbers(lib_ffi) < _numbers(src_ffi):
            problems.append(f"tvm-ffi: headers {src_ffi} ({against.ffi_root}), library "
                            f"{lib_ffi} ({against.ffi_library}) (needs ABI {ffi_abi(src_ffi)}, "
                            f">= {src_ffi})")
    return problems


def probe_source(project: Path, against: Against) -> tuple[str, bool]:
    """The probe translation unit for ``project`` (the tvm-ffi C API, and the PROBES functions
    its sources use from the TVM headers present in ``against``), and whether it needs
    libtvm_compiler."""
    text = "\n".join(p.read_text(errors="replace") for p in sorted(project.glob("src/**/*"))
                     if p.suffix in (".cc", ".cpp", ".cxx", ".h", ".hpp"))
    included = set(INCLUDE.findall(text))
    headers = [h for h in PROBES if h in included and (against.tvm_root / "include" / h).is_file()]
    c_api = (against.ffi_root / FFI_VERSION_H).read_text(errors="replace")
    uses = [f"&{name}" for name in dict.fromkeys(FFI_DLL.findall(c_api))]
    uses += [use for h in headers for name, use in PROBES[h].items()
             if re.search(rf"\b{name}\b", text)]
    lines = ["// tk ext build's symbol probe: the library functions these headers declare.",
             "#include <tvm/ffi/c_api.h>", *(f"#include <{h}>" for h in headers),
             "extern \"C\" void* tk_ext_probe[] = {",
             *(f"    reinterpret_cast<void*>({use})," for use in uses), "};", ""]
    compiler = any(not h.startswith("tvm/runtime/") for h in headers)
    return "\n".join(lines), compiler


def probe_symbols(project: Path, against: Against, build_dir: Path
                  ) -> tuple[list[str], list[Path], bool]:
    """Compile the probe into a shared library against the headers (not linked to TVM) and
    return the TVM / tvm-ffi symbols it needs that the libraries do not export, demangled,
    the libraries asked, and whether the compiler's were wanted.
    The answer is kept in ``build_dir`` for the same probe, headers and libraries."""
    source, compiler = probe_source(project, against)
    libs = against.libraries(compiler)
    cxx = shutil.which(os.environ.get("CXX") or "c++")
    if cxx is None:
        raise TkError("no C++ compiler (c++ or $CXX) for the symbol probe")
    include_dirs = [against.tvm_root / "include", against.ffi_root / "include",
                    against.ffi_root / "3rdparty" / "dlpack" / "include"]
    cmd = [cxx, "-std=c++17", "-fPIC", "-shared", "-O0", "-w",
           *(f"-I{d}" for d in include_dirs if d.is_dir()), "-x", "c++", "-", "-o"]
    # Again only when the probe, a header it includes or a library changes.
    probed = [against.ffi_root / FFI_VERSION_H, against.tvm_root / TVM_VERSION_H,
              *(against.tvm_root / "include" / h for h in INCLUDE.findall(source))]
    key = hashlib.sha256(json.dumps(
        [source, cmd, [(str(p), p.stat().st_mtime_ns, p.stat().st_size)
                       for p in (*libs, *probed) if p.is_file()]]).encode()).hexdigest()[:16]
    cache = build_dir / "tk-symbol-probe.json"
    if cache.is_file():
        kept = json.loads(cache.read_text())
        if kept.get("key") == key:
            return kept["missing"], libs, compiler
    with tempfile.TemporaryDirectory(prefix="tk-ext-probe-") as tmp:
        out = Path(tmp) / "libprobe.so"
        ran = subprocess.run([*cmd, str(out)], input=source, capture_output=True, text=True)
        if ran.returncode != 0:
            from toolkit.explain import one_line

            raise UserError(f"the headers of {against.origin} do not compile the symbol probe "
                            f"(the functions an extension of this kind calls): "
                            f"{one_line(ran.stderr)}")
        missing = libraries.missing_symbols(str(out), [str(p) for p in libs])
    missing = demangle(missing)
    build_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "missing": missing}) + "\n")
    return missing, libs, compiler


def demangle(symbols: list[str]) -> list[str]:
    tool = shutil.which("c++filt")
    if not tool or not symbols:
        return symbols
    ran = subprocess.run([tool], input="\n".join(symbols), capture_output=True, text=True)
    names = ran.stdout.splitlines()
    return names if ran.returncode == 0 and len(names) == len(symbols) else symbols


def check(project: Path, against: Against, build_dir: Path) -> None:
    """Refuse, before compiling, headers that do not match the libraries: one line saying
    what differs (exit 2)."""
    problems = version_mismatches(against)
    if not problems:
        missing, libs, compiler = probe_symbols(project, against, build_dir)
        if missing:
            shown = "; ".join(missing[:3]) + (f" and {len(missing) - 3} more"
                                              if len(missing) > 3 else "")
            where: dict[Path, list[str]] = {}
            for lib in libs:
                where.setdefault(lib.parent, []).append(lib.name)
            names = " and ".join(f"{', '.join(n)} in {d}" for d, n in where.items())
            runtime_only = compiler and not any(
                p.name in ("libtvm_compiler.so", "libtvm.so") for p in libs)
            problems.append(f"symbols: the headers declare {shown}, which {names} do not "
                            "export" + (f" (no libtvm_compiler in {against.library_dir}: a "
                                        "runtime-only build)" if runtime_only else ""))
    if problems:
        raise UserError(f"headers and libraries of {against.origin} do not match: "
                        + " | ".join(problems))
