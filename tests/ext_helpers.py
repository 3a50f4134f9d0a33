"""Helpers for the extension tests: a second TVM on disk, scripts run in fresh processes, a
venv without tk."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DT_SONAME = 14


def copy_tvm(dest: Path) -> Path:
    """Copy the installed tvm and tvm_ffi packages under ``dest`` (a second TVM, as a project
    vendoring TVM has). Its libtvm_runtime.so gets another SONAME (``tvm_runtime.so``, with
    the matching symlink, as a fork built with its own SONAME has): ld.so then cannot tell
    the two runtimes are 'the same library' and maps both. It also gets another build id,
    so it counts as another build of TVM."""
    import importlib.util

    for pkg in ("tvm", "tvm_ffi"):
        spec = importlib.util.find_spec(pkg)
        src = Path(spec.origin).parent
        shutil.copytree(src, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    lib = dest / "tvm" / "lib" / "libtvm_runtime.so"
    shorten_soname(lib, 3)
    new_build_id(lib)
    (lib.parent / "tvm_runtime.so").symlink_to(lib.name)
    return dest


def new_build_id(path: Path) -> None:
    """Give the library another GNU build id: to every tool it is now another build (as a
    fork's runtime is), while the code is unchanged."""
    from toolkit.probes import elfread

    old = bytes.fromhex(elfread.read(path).build_id)
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, bytes(b ^ 0xFF for b in old)))


def shorten_soname(path: Path, skip: int) -> None:
    """Point DT_SONAME ``skip`` bytes further into its string (libtvm_runtime.so ->
    tvm_runtime.so): another SONAME without growing .dynstr."""
    data = bytearray(path.read_bytes())
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        p_type, _f, off, _v, _p, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != 2:
            continue
        for j in range(filesz // 16):
            tag, val = struct.unpack_from("<qQ", data, off + j * 16)
            if tag == DT_SONAME:
                struct.pack_into("<qQ", data, off + j * 16, tag, val + skip)
    path.write_bytes(bytes(data))


def run_py(code: str, env: dict[str, str] | None = None, timeout: float = 300
           ) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that can import toolkit from this checkout."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(
        [*filter(None, [(env or {}).get("PYTHONPATH")]), str(REPO)])
    full.update({k: v for k, v in (env or {}).items() if k != "PYTHONPATH"})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=timeout)


def venv_without_tk(root: Path) -> Path:
    """A venv that sees this interpreter's installed packages but not tk. tvm and tvm_ffi (and
    their dist-info, which tvm_ffi reads to find its library) are linked into its
    site-packages, where the wheel's $ORIGIN RUNPATH looks for their
    libraries; the rest comes through a .pth naming a directory of links to every other entry
    of our site-packages except tk's own (an installed `toolkit`, its dist-info, an editable
    install's hooks). A .pth line adds a directory without running the .pth files in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = root / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name in ("tvm", "tvm_ffi") or entry.name.startswith("apache_tvm"):
            (site / entry.name).symlink_to(entry)
        elif entry.name != "toolkit" and not entry.name.startswith(("tk_tvm", "__editable__")):
            (deps / entry.name).symlink_to(entry)
    (site / "deps.pth").write_text(f"{deps}\n")
    return python


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
