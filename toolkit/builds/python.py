"""The Python side of a build: the tree's own tvm-ffi package, built from the tree.

A tvm-ffi-era tree's ``python/tvm`` imports ``tvm_ffi``, whose core is a compiled Cython
module that must match the ``libtvm_ffi.so`` the build made. tk builds ``3rdparty/tvm-ffi``'s
wheel (``pip wheel``, once per tvm-ffi source content and interpreter version, while Ninja
compiles: ``WheelBuild``; the wheel is kept in the store under ``wheels/``) and unpacks it
into the build's entry as ``python/``, every file a hard link to a store object, with the
package's ``lib/libtvm_ffi.so`` linked to the very ``libtvm_ffi.so`` this build wrote: one
tvm-ffi library per process, the build's.
``tk env`` puts that directory on ``PYTHONPATH`` after the tree's ``python/``.

Why unpacked on PYTHONPATH rather than a per-build venv: a venv fixes the interpreter and hides
the user's own packages (numpy, torch) unless it is built with --system-site-packages, and
must be activated; a directory on PYTHONPATH works in the user's environment with the same
one ``eval`` that sets the library path, and costs only links.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import IO

from toolkit.builds import store
from toolkit.builds.record import PythonPackage
from toolkit.builds.source import content_key, git, is_git
from toolkit.errors import TkError
from toolkit.libraries import ffi_header_version
from toolkit.outputs import sha256_file
from toolkit.process import kill_group, own_group

DIST = "apache-tvm-ffi"


def ffi_source(root: Path) -> Path | None:
    """The tree's tvm-ffi Python project, when it has one."""
    src = root / "3rdparty" / "tvm-ffi"
    pyproject = src / "pyproject.toml"
    if pyproject.is_file() and f'name = "{DIST}"' in pyproject.read_text(errors="replace"):
        return src
    return None


def python_tag(python: str = sys.executable) -> str:
    if python == sys.executable:
        return sysconfig.get_config_var("SOABI") or f"cp{sys.version_info[0]}{sys.version_info[1]}"
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('SOABI'))"],
                         capture_output=True, text=True)
    return out.stdout.strip()


def version_of(src: Path, content: str) -> str | None:
    """None when git can tell (setuptools-scm then names it); else the version the sources'
    c_api.h declares, with a local part that says the package was built from a tree of this
    content: 0.1.14+tree.01fec944841f. (Not a placeholder: tk's own ABI checks read the
    tvm-ffi ABI from this version.)"""
    if (src / ".git").exists() and is_git(src) and git(src, "tag", "--list", check=False).strip():
        return None
    return f"{ffi_header_version(src) or '0.0.0'}+tree.{content[:12]}"


def wheel_key(src: Path, python: str = sys.executable) -> str:
    """What the wheel of ``src`` for ``python`` is built from: the content of all of ``src``
    (its ``python/`` and ``pyproject.toml`` too, which the libraries' content key leaves out:
    an edit to the Cython core or the package builds it again) and the interpreter's ABI.
    Not where ``src`` lies: a bisection's worktree, another clone of the tree or a client of
    the store finds the wheel the user's tree built."""
    return f"{content_key(src, whole=True)}-{python_tag(python)}"


def build_wheel(src: Path, log: Path, python: str = sys.executable,
                cancel: threading.Event | None = None) -> tuple[Path, str]:
    """The wheel of ``src`` for ``python``, from the store (``wheels/<wheel_key>``) or built
    now: (path, version). With ``cancel``, pip runs in a process group of its own at the
    lowest priority with two jobs, beside a compile (``WheelBuild``), and is killed whole
    when ``cancel`` is set."""
    key = wheel_key(src, python)
    home = store.wheels_root() / key
    version = version_of(src, key.partition("-")[0])  # the content part
    # A wheel an older tk versioned otherwise (0.0.0+tree...) is built again.
    found = sorted(w for w in home.glob("*.whl")
                   if version is None or wheel_version(w) == version) if home.is_dir() else []
    if found:
        return found[0], wheel_version(found[0])
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ}
    if version:
        env["SETUPTOOLS_SCM_PRETEND_VERSION_FOR_APACHE_TVM_FFI"] = version
    if cancel is not None:
        # Beside the compile: two compilers more, not one per core (memory), and the
        # compile's own jobs first.
        env["CMAKE_BUILD_PARALLEL_LEVEL"] = "2"
    with tempfile.TemporaryDirectory(prefix="tk-ffi-") as tmp:
        # build-dir elsewhere: scikit-build-core's default (build/ in the project) would write
        # into the user's tree.
        argv = [python, "-m", "pip", "wheel", "--no-deps", "-w", tmp,
                "-C", f"build-dir={tmp}/build", str(src)]
        before = _entries(src)
        try:
            with log.open("a") as out:
                out.write(f"$ {' '.join(argv)}\n")
                out.flush()
                returncode = _run_pip(argv, out, env, cancel)
        finally:
            # The build backend writes into the source all the same (setuptools-scm's
            # python/tvm_ffi/_version.py): take back what the build added, so the user's tree
            # (and its content key) is as it was.
            for path in sorted(_entries(src) - before, reverse=True):
                if path.is_dir() and not path.is_symlink():
                    with contextlib.suppress(OSError):
                        path.rmdir()
                else:
                    path.unlink(missing_ok=True)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if returncode != 0 or not wheels:
            raise TkError(f"building {DIST} from {src} failed (log: {log}); reproduce: "
                          f"{' '.join(argv)}")
        store.store_file(wheels[0], home / wheels[0].name)
    wheel = home / wheels[0].name
    return wheel, wheel_version(wheel)


def _run_pip(argv: list[str], out: IO[str], env: dict[str, str],
             cancel: threading.Event | None) -> int:
    if cancel is None:
        return subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, **own_group())
    with contextlib.suppress(OSError):  # pip's compilers, started later, inherit it
        os.setpriority(os.PRIO_PGRP, proc.pid, 19)
    while True:
        try:
            return proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            if cancel.is_set():
                kill_group(proc)
                raise TkError(f"building {DIST} stopped: the compile beside it failed") from None


class WheelBuild:
    """The tree's tvm-ffi package, its wheel built while Ninja compiles the libraries.

    The wheel needs only ``3rdparty/tvm-ffi`` (its own libtvm_ffi.so is replaced by the
    build's when the package is put in place), so it need not wait for the compile: a thread
    waits on pip, which runs at the lowest priority with two jobs, so the compile keeps its
    cores and its memory and the wheel takes what the compile leaves idle (a link, the last
    long object, Ninja's jobs fewer than the cores). Not at the compile's priority: where
    Ninja keeps every core busy the two only share them, and the crowding cost more CPU than
    the overlap saved (docs/perf-builds.md). pip writes to a log of its own, ``log`` (the
    build's log is Ninja's meanwhile). A wheel already in the store is found at once.
    """

    def __init__(self, root: Path, log: Path) -> None:
        self.src = ffi_source(root)
        self.log = log
        self._cancel = threading.Event()
        self._out: tuple[Path, str] | BaseException | None = None
        self._thread: threading.Thread | None = None
        if self.src is not None:
            self._thread = threading.Thread(target=self._build, name="tk-ffi-wheel", daemon=True)
            self._thread.start()

    def _build(self) -> None:
        try:
            self._out = build_wheel(self.src, self.log, cancel=self._cancel)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            self._out = e

    def _join(self) -> tuple[Path, str] | BaseException | None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self._out

    def cancel(self) -> None:
        """The compile failed: pip and its compilers are stopped, the source left as it was."""
        self._cancel.set()
        self._join()

    def package(self, entry: Path, ffi_lib: Path | None) -> PythonPackage | None:
        """The package, kept with the build in ``entry``, its libtvm_ffi.so ``ffi_lib``; None
        for a tree without tvm-ffi."""
        out = self._join()
        if isinstance(out, BaseException):
            raise out
        if out is None:  # a tree without tvm-ffi
            return None
        wheel, version = out
        site = entry / "python"
        sha = sha256_file(wheel)
        install(wheel, site, ffi_lib, sha)
        return PythonPackage(name=DIST, version=version, wheel=str(wheel),
                             sha256=sha, site=str(site), source=str(self.src),
                             python=python_tag())


def _entries(root: Path) -> set[Path]:
    """Every file and directory under ``root``, ``.git`` left out."""
    found: set[Path] = set()
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        found.update(Path(here) / name for name in (*dirs, *files))
    return found


def wheel_version(wheel: Path) -> str:
    """The version a wheel's file name states, read as the wheel format (PEP 427) writes it:
    ``{name}-{version}[-{build}]-{python}-{abi}-{platform}.whl``, where no field holds a "-"
    (the name's are written "_"). "?" for a name not of that form: a "-" too many would
    otherwise hand back a piece of the name as the version."""
    fields = wheel.name.removesuffix(".whl").split("-")
    return fields[1] if wheel.name.endswith(".whl") and len(fields) in (5, 6) else "?"


def install(wheel: Path, site: Path, ffi_lib: Path | None, sha: str) -> None:
    """Put ``wheel`` (sha256 ``sha``) in ``site`` as links to the store's objects; the
    package's own libtvm_ffi.so becomes the build's (``ffi_lib``). A site that already holds
    this wheel (a rebuild of the same entry) only has that link renewed."""
    marker = site / ".tk-wheel"
    same = marker.is_file() and marker.read_text() == sha
    if not same and site.exists():
        shutil.rmtree(site)
    site.mkdir(parents=True, exist_ok=True)
    with store.packing(shared=True):  # an object with no link yet is not collected meanwhile
        for name, obj in unpacked(wheel, sha).items():
            dst = site / name
            if ffi_lib is not None and dst.name == "libtvm_ffi.so":
                obj = ffi_lib
            elif same:
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            store.link_object(obj, dst)
    marker.write_text(sha)


def unpacked(wheel: Path, sha: str) -> dict[str, Path]:
    """Each file of ``wheel`` (sha256 ``sha``) as a store object, by its name in the wheel:
    extracted and stored the first time, then found from ``<wheel>.files.json`` (its files'
    sha256) while those objects are all there: a new build's package is links, nothing read.
    The caller holds the store's packing lock (shared)."""
    listing = wheel.with_name(wheel.name + ".files.json")
    try:
        known = json.loads(listing.read_text())
        if known["sha256"] == sha:
            objects = {name: store.object_path(obj) for name, obj in known["files"].items()}
            if all(path.exists() for path in objects.values()):
                return objects
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or from a wheel since rebuilt: the wheel is read
    objects = {}
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="tk-wheel-") as tmp:
        for info in zf.infolist():
            if not info.is_dir():
                objects[info.filename] = store.put_object(Path(zf.extract(info, tmp)))[1]
    with contextlib.suppress(OSError):  # a cache: without it, the next build reads the wheel
        listing.write_text(json.dumps({"sha256": sha,
                                       "files": {n: p.name for n, p in objects.items()}}))
    return objects
