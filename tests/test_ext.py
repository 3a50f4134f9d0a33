"""Extensions end to end, with real libraries in fresh processes: scaffold, build against the
installed wheel, call from Python; two TVMs meeting in one process in both orders; an
extension built against one tvm-ffi loaded with another; duplicate registrations."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ext_helpers import REPO, copy_tvm, run_py

pytestmark = pytest.mark.slow

NAME = "demo_ext"


@pytest.fixture(scope="module")
def work():
    # Not tmp_path_factory: pytest sessions running beside this one prune its base dirs.
    path = Path(tempfile.mkdtemp(prefix="tk-ext-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def built(work: Path) -> Path:
    """A scaffolded extension built by `tk ext build` against the installed wheel."""
    from conftest import run_tk

    r = run_tk("ext", "new", NAME, "--dir", str(work))
    assert r.returncode == 0, r.stderr
    r = run_tk("ext", "build", str(work / NAME))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"registers: {NAME}.add_inplace, {NAME}.add_one" in r.stdout
    # Progress on stderr, plain lines (not a terminal): the stage, then Ninja's count.
    assert f"tk: building {NAME} in " in r.stderr and "  compile: [" in r.stderr
    return work / NAME / "python" / NAME / "lib" / f"lib{NAME}.so"


@pytest.fixture(scope="module")
def second_tvm(work: Path) -> Path:
    """Another copy of TVM + tvm-ffi on disk (the vendored-TVM pattern)."""
    return copy_tvm(work / "vendored")


@pytest.fixture(scope="module")
def built_against_copy(work: Path, second_tvm: Path) -> Path:
    """The same extension built by a Python whose tvm is the vendored copy."""
    from conftest import run_tk

    r = run_tk("ext", "new", "vend_ext", "--dir", str(work))
    assert r.returncode == 0, r.stderr
    r = run_tk("ext", "build", str(work / "vend_ext"), env={"PYTHONPATH": str(second_tvm)})
    assert r.returncode == 0, r.stdout + r.stderr
    return work / "vend_ext" / "python" / "vend_ext" / "lib" / "libvend_ext.so"


def test_scaffold_passes_its_own_tests(built: Path) -> None:
    root = built.parents[3]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests"], cwd=root, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "4 passed" in p.stdout


def test_manifest_records_what_it_was_built_against(built: Path) -> None:
    import tvm_ffi

    data = json.loads(built.with_name(built.name + ".tk.json").read_text())
    links = {link["needed"]: link for link in data["links"]}
    assert set(links) == {"libtvm_ffi.so", "libtvm_runtime.so"}
    assert links["libtvm_ffi.so"]["version"] == tvm_ffi.__version__
    assert Path(links["libtvm_ffi.so"]["path"]).parent == Path(tvm_ffi.__file__).parent / "lib"
    assert len(links["libtvm_runtime.so"]["sha256"]) == 64 and links["libtvm_runtime.so"]["build_id"]
    assert data["globals"] == sorted(f"{NAME}.{f}" for f in
                                     ("add_inplace", "add_one", "greet", "scratch_sum"))


def test_call_from_python_through_the_loader(built: Path) -> None:
    r = run_py(f"""
import numpy as np
from toolkit.ext.loader import load_extension
ext = load_extension({str(built)!r})
import tvm, tvm_ffi
x = tvm.runtime.tensor(np.ones(3, dtype="float32"))
tvm_ffi.get_global_func("{NAME}.add_inplace")(x, 2.0)
print(ext.registered, tvm_ffi.get_global_func("{NAME}.add_one")(1), x.numpy().tolist())
assert load_extension({str(built)!r}) is ext
""")
    assert r.returncode == 0, r.stderr
    assert f"'{NAME}.scratch_sum'] 2 [3.0, 3.0, 3.0]" in r.stdout


def test_check_reports_bindings_and_manifest(built: Path, tk) -> None:
    r = tk("ext", "check", str(built), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    tvm_rows = {b["needed"]: b for b in report["bindings"] if b.get("tvm")}
    assert tvm_rows["libtvm_runtime.so"]["how"] == "already loaded"
    assert report["ok"] and report["manifest"]["globals"]
    r = tk("ext", "load", str(built), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["registered"] == report["manifest"]["globals"]


def test_built_against_another_tvm_ffi_is_refused(built: Path, work: Path, tk) -> None:
    """The manifest says another tvm-ffi build: tk refuses before dlopen; tk ext check says
    the same without loading anything."""
    other = work / "stale"
    other.mkdir()
    lib = other / built.name
    shutil.copy2(built, lib)
    data = json.loads(built.with_name(built.name + ".tk.json").read_text())
    for link in data["links"]:
        if link["needed"] == "libtvm_ffi.so":
            link["build_id"], link["version"] = "0" * 40, "0.1.9"
    lib.with_name(lib.name + ".tk.json").write_text(json.dumps(data))
    r = run_py(f"from toolkit.ext.loader import load_extension; load_extension({str(lib)!r})")
    assert r.returncode == 1
    assert "was built against apache-tvm-ffi 0.1.9 (libtvm_ffi build id 000000000000" in r.stderr
    assert "Fix: rebuild it with this Python's TVM: tk ext build" in r.stderr
    r = tk("ext", "check", str(lib))
    assert r.returncode == 1 and "MISMATCH: " in r.stdout and "apache-tvm-ffi 0.1.9" in r.stdout


def _bare(lib: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_py(f"import ctypes, tvm; ctypes.CDLL({str(lib)!r}, ctypes.RTLD_GLOBAL); "
                  "print('loaded')", env=env)


def _tk(lib: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_py(f"import tvm; from toolkit.ext.loader import load_extension; "
                  f"load_extension({str(lib)!r}); print('loaded')", env=env)


def test_upstream_tvm_first_then_extension_of_vendored_tvm(built_against_copy: Path,
                                                           second_tvm: Path) -> None:
    """import tvm (the wheel), then an extension linked to the vendored runtime: a bare
    dlopen maps a second libtvm_runtime and aborts; tk refuses with the reason."""
    bare = _bare(built_against_copy)
    assert bare.returncode == -signal.SIGABRT, bare.stdout + bare.stderr
    assert "is already registered" in bare.stderr
    refused = _tk(built_against_copy)
    assert refused.returncode == 1, refused.stderr
    assert "would map a second libtvm_runtime" in refused.stderr
    assert str(second_tvm / "tvm" / "lib" / "libtvm_runtime.so") in refused.stderr


def test_vendored_tvm_first_then_upstream_extension(built: Path, second_tvm: Path) -> None:
    """The vendored TVM is imported first (sys.path redirect), then an extension built
    against the wheel: ld.so silently binds it to the vendored runtime (another build: an
    ABI it was not compiled for); tk refuses, naming both builds."""
    env = {"PYTHONPATH": str(second_tvm)}
    bare = _bare(built, env)
    assert bare.returncode == 0 and "loaded" in bare.stdout
    refused = _tk(built, env)
    assert refused.returncode == 1, refused.stderr
    assert "was built against apache-tvm 0.27" in refused.stderr
    assert f"this process maps {second_tvm / 'tvm' / 'lib' / 'libtvm_runtime.so'}" in \
        refused.stderr


def test_a_tvm_library_is_not_an_extension(second_tvm: Path) -> None:
    r = _tk(second_tvm / "tvm" / "lib" / "libtvm_runtime.so")
    assert r.returncode == 1 and "is a TVM library (libtvm_runtime), not an extension" in r.stderr


def test_duplicate_registration_is_refused_not_aborted(built: Path, work: Path) -> None:
    """The same extension from a second path (renamed): bare, tvm-ffi aborts at static init;
    tk names the function and who registered it first."""
    twin = work / "twin"
    twin.mkdir()
    lib = twin / "libdemo_twin.so"
    shutil.copy2(built, lib)
    shutil.copy2(built.with_name(built.name + ".tk.json"), lib.with_name(lib.name + ".tk.json"))
    both = f"import ctypes, tvm; ctypes.CDLL({str(built)!r}); ctypes.CDLL({str(lib)!r})"
    bare = run_py(both)
    assert bare.returncode == -signal.SIGABRT
    from toolkit.explain import best

    assert best(bare.stderr).id == "duplicate-global-function"
    r = run_py(f"from toolkit.ext.loader import load_extension; load_extension({str(built)!r}); "
               f"load_extension({str(lib)!r})")
    assert r.returncode == 1
    assert f"registers {NAME}.add_inplace, which is already registered by {built}" in r.stderr


def test_new_refuses_bad_names_and_existing_dirs(tk, work: Path, built: Path) -> None:
    assert tk("ext", "new", "Bad-Name", "--dir", str(work)).returncode == 2
    r = tk("ext", "new", NAME, "--dir", str(work))
    assert r.returncode == 2 and "already exists" in r.stderr
    assert tk("ext", "check", str(work / "absent.so")).returncode == 2


def test_doctor_names_the_vendored_tvm_and_its_runtime(second_tvm: Path, tk) -> None:
    r = tk("doctor", "--json", env={"PYTHONPATH": str(second_tvm)})
    checks = json.loads(r.stdout)["checks"]
    vendored = [c for c in checks if c["name"] == "vendored tvm" and c["status"] == "warn"]
    assert vendored and "holds another tvm package" in vendored[0]["detail"]
    assert any("but its libtvm_ffi.so is mapped from" in c["detail"] for c in vendored)
    identity = [c for c in checks if c["name"] == "library" and c["status"] == "warn"]
    assert identity and "SONAME tvm_runtime.so" in identity[0]["detail"]
    owners = [c["detail"] for c in checks if c["name"] == "globals"]
    assert any(d.startswith("libtvm_runtime.so registers") for d in owners)


def test_doctor_finds_a_duplicate_registration(work: Path) -> None:
    """A tvm package whose lib/ holds two builds of the runtime: the owners probe dies on
    the second one; the check names the function and the library that registered it first."""
    import importlib.util

    from toolkit import doctor

    fake = work / "dup" / "tvm"
    (fake / "lib").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    wheel_lib = Path(importlib.util.find_spec("tvm").origin).parent / "lib"
    shutil.copy2(wheel_lib / "libtvm_runtime.so", fake / "lib" / "libtvm_runtime.so")
    shutil.copy2(wheel_lib / "libtvm_runtime.so", fake / "lib" / "libtvm_runtime_twin.so")
    facts = doctor.library_facts(sys.executable, dict(os.environ, PYTHONPATH=str(fake.parent)))
    rows = doctor.check_global_owners(facts)
    failed = [c for c in rows if c.status == "fail"]
    assert failed, rows
    assert "libtvm_runtime_twin.so registers" in failed[0].detail
    assert f"already registered by {fake / 'lib' / 'libtvm_runtime.so'}" in failed[0].detail


def test_build_failure_says_what_reproduces_it_and_what_it_means(tk, tmp_path: Path) -> None:
    assert tk("ext", "new", "old_cmake", "--dir", str(tmp_path)).returncode == 0
    lists = tmp_path / "old_cmake" / "CMakeLists.txt"
    lists.write_text(lists.read_text().replace("VERSION 3.18", "VERSION 99.0"))
    r = tk("ext", "build", str(tmp_path / "old_cmake"))
    assert r.returncode == 1
    assert "configure failed" in r.stderr and "explain: CMake too old" in r.stderr
    assert "reproduce: cmake -S" in r.stderr
