"""``tk ext wheel DIR``: a relocatable wheel of an extension project.

The extension is built as ``tk ext build`` does, then installed by CMake into a staging
directory: the install rewrites the library's RUNPATH to the ``$ORIGIN``-relative one of the
template (``$ORIGIN/../../tvm/lib``), so the library finds the apache-tvm and apache-tvm-ffi
wheels' libraries in whatever site-packages it is installed into. The wheel holds the Python
package (without the build tree's library and manifest) and the installed library; its
metadata comes from the project's ``pyproject.toml`` (name, version, dependency ranges).
Nothing in it imports tk. The library uses no Python C API, so the wheel is ``py3-none-<platform>``.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import libraries
from toolkit.errors import TkError, UserError


@dataclass
class Wheel:
    path: Path
    library: Path  # the installed library, as it is inside the wheel
    runpath: list[str]
    requires: list[str]


def project_metadata(src: Path) -> dict[str, Any]:
    """``[project]`` of DIR/pyproject.toml: name, version, dependencies, requires-python."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise UserError("tk ext wheel reads pyproject.toml: use Python 3.11+ or "
                            "pip install tomli") from None
    path = src / "pyproject.toml"
    if not path.is_file():
        raise UserError(f"{src} has no pyproject.toml (tk ext new writes one: copy it from a "
                        "new scaffold)")
    try:
        project = tomllib.loads(path.read_text()).get("project", {})
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: {e}") from None
    for key in ("name", "version"):
        if not isinstance(project.get(key), str):
            raise UserError(f"{path}: [project] needs a '{key}'")
    return project


def build_wheel(source_dir: str | Path, out_dir: str | Path | None = None,
                python: str = sys.executable, jobs: int | None = None,
                tvm_source: str | None = None, build_id: str | None = None) -> Wheel:
    """Build as ``tk ext build`` does (``tvm_source`` / ``build_id``: the headers of a tree,
    for compiler passes), then package; the wheel's library finds the apache-tvm wheel's."""
    from toolkit.ext.compile import build, project_name

    src = Path(source_dir).resolve()
    meta = project_metadata(src)
    name = project_name(src)
    build(src, python=python, jobs=jobs, tvm_source=tvm_source, build_id=build_id)
    stage = src / "build" / "wheel-stage"
    shutil.rmtree(stage, ignore_errors=True)
    cmd = ["cmake", "--install", str(src / "build"), "--prefix", str(stage)]
    ran = subprocess.run(cmd, capture_output=True, text=True)
    if ran.returncode != 0:
        from toolkit.explain import one_line

        raise TkError(f"cmake --install failed: {one_line(ran.stdout + ran.stderr)}\n"
                      f"  reproduce: {' '.join(cmd)}")
    library = stage / name / "lib" / f"lib{name}.so"
    if not library.is_file():
        raise TkError(f"cmake --install put no {library.relative_to(stage)} under {stage}: "
                      f"CMakeLists.txt needs install(TARGETS {name} LIBRARY DESTINATION "
                      f"{name}/lib)")
    lib = libraries.describe(library)
    fixed = [d for d in lib.runpath + lib.rpath if not d.startswith("$ORIGIN")]
    if fixed:
        raise TkError(f"the installed {library.name} searches {':'.join(fixed)}: a wheel "
                      "installed elsewhere would not find TVM there; set INSTALL_RPATH to "
                      "$ORIGIN-relative directories in CMakeLists.txt")
    package = src / "python" / name
    files: dict[str, bytes] = {}
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package)
        if path.is_dir() or "__pycache__" in rel.parts or rel.parts[0] == "lib":
            continue  # lib/ holds the build tree's library (absolute RUNPATH) and manifest
        files[f"{name}/{rel.as_posix()}"] = path.read_bytes()
    files[f"{name}/lib/{library.name}"] = library.read_bytes()
    out = Path(out_dir).resolve() if out_dir else src / "dist"
    out.mkdir(parents=True, exist_ok=True)
    dist = meta["name"].replace("-", "_")
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheel = out / f"{dist}-{meta['version']}-{tag}.whl"
    write_wheel(wheel, files, meta, dist, tag)
    return Wheel(wheel, library, lib.runpath + lib.rpath, list(meta.get("dependencies", [])))


def write_wheel(wheel: Path, files: dict[str, bytes], meta: dict[str, Any], dist: str,
                tag: str) -> None:
    """Write a wheel (PEP 427): the files, then METADATA, WHEEL and RECORD."""
    info = f"{dist}-{meta['version']}.dist-info"
    lines = ["Metadata-Version: 2.1", f"Name: {meta['name']}", f"Version: {meta['version']}"]
    if meta.get("description"):
        lines.append(f"Summary: {meta['description']}")
    if meta.get("requires-python"):
        lines.append(f"Requires-Python: {meta['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in meta.get("dependencies", [])]
    files[f"{info}/METADATA"] = ("\n".join(lines) + "\n").encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: tk ext wheel\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n").encode()
    record = [f"{n},sha256={_digest(data)},{len(data)}" for n, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in files.items():
            mode = 0o755 if n.endswith(".so") else 0o644
            item = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            item.external_attr = (0o100000 | mode) << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(item, data)
    tmp.replace(wheel)


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
