"""Before compiling against a TVM source tree's headers: do they match what will be linked?

The apache-tvm wheel ships only ``include/tvm/runtime``, so an extension using compiler
headers (``tvm/tirx/transform.h``...) compiles against a source tree (``--tvm-source``).
Those headers must be the ones of the TVM whose library it links, and they were written
against the tvm-ffi of the tree's ``3rdparty/tvm-ffi``, while the build takes tvm-ffi's
headers from the Python's apache-tvm-ffi. A skew shows as compiler errors far from the
cause (``'SEqHashDefRecursive' is not a member of ...``); this says it up front.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolkit.errors import UserError

TVM_VERSION_H = Path("include/tvm/runtime/base.h")
FFI_VERSION_H = Path("include/tvm/ffi/c_api.h")


def tvm_version(root: Path) -> str | None:
    """TVM_VERSION of ``root/include/tvm/runtime/base.h`` (a source tree or a wheel's tvm/)."""
    path = root / TVM_VERSION_H
    if not path.is_file():
        return None
    m = re.search(r'#define\s+TVM_VERSION\s+"([^"]+)"', path.read_text(errors="replace"))
    return m.group(1) if m else None


def ffi_header_version(include_root: Path) -> str | None:
    """major.minor.patch of tvm-ffi's ``include/tvm/ffi/c_api.h`` under ``include_root``."""
    path = include_root / FFI_VERSION_H
    if not path.is_file():
        return None
    text = path.read_text(errors="replace")
    parts = [re.search(rf"#define\s+TVM_FFI_VERSION_{k}\s+(\d+)", text)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def release(version: str) -> str:
    """'0.26.dev0' -> '0.26', '0.27.0' -> '0.27': the release the headers belong to."""
    return ".".join(re.findall(r"\d+", version)[:2])


def mismatches(source: Path, library_tvm: Path | None, ffi_package: Path | None) -> list[str]:
    """What does not match, one line each: the source tree's headers against the TVM whose
    library gets linked (``library_tvm``: a built tree or a wheel's tvm/ dir), and the
    tree's tvm-ffi against the tvm-ffi package whose headers the build uses."""
    problems = []
    src_tvm = tvm_version(source)
    if src_tvm is None:
        raise UserError(f"--tvm-source {source}: no {TVM_VERSION_H} there (not a TVM source tree)")
    lib_tvm = tvm_version(library_tvm) if library_tvm else None
    if lib_tvm and release(lib_tvm) != release(src_tvm):
        problems.append(f"TVM: the headers of {source} are TVM {src_tvm}, the library linked "
                        f"({library_tvm}/lib) is TVM {lib_tvm}")
    src_ffi = ffi_header_version(source / "3rdparty" / "tvm-ffi")
    pkg_ffi = ffi_header_version(ffi_package) if ffi_package else None
    if src_ffi and pkg_ffi and src_ffi != pkg_ffi:
        problems.append(f"tvm-ffi: {source}/3rdparty/tvm-ffi is {src_ffi}, whose API those "
                        f"headers use; the build takes tvm-ffi {pkg_ffi} from {ffi_package} "
                        f"(pip install apache-tvm-ffi=={src_ffi} into the Python you build with)")
    return problems
