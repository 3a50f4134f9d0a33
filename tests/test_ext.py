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
    assert "3 passed" in p.stdout


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


def _restamped(built: Path, work: Path, where: str, **link: str) -> Path:
    """A copy of the built library whose manifest says its libtvm_ffi link was ``link``."""
    other = work / where
    other.mkdir()
    lib = other / built.name
    shutil.copy2(built, lib)
    data = json.loads(built.with_name(built.name + ".tk.json").read_text())
    for row in data["links"]:
        if row["needed"] == "libtvm_ffi.so":
            row.update(link)
    lib.with_name(lib.name + ".tk.json").write_text(json.dumps(data))
    return lib


def test_another_tvm_ffi_abi_is_refused_unless_forced(built: Path, work: Path, tk) -> None:
    """The manifest says tvm-ffi 0.2 (another ABI while tvm-ffi is 0.x): tk refuses before
    dlopen and tk ext check says the same; TK_EXT_FORCE=1 / --force load it with a warning."""
    import tvm_ffi

    lib = _restamped(built, work, "stale", build_id="0" * 40, version="0.2.0")
    r = run_py(f"from toolkit.ext.loader import load_extension; load_extension({str(lib)!r})")
    assert r.returncode == 1
    assert (f"{lib.name} was built against tvm-ffi 0.2.0 (ABI 0.2), but this process maps "
            f"{Path(tvm_ffi.__file__).parent / 'lib' / 'libtvm_ffi.so'} "
            f"(tvm-ffi {tvm_ffi.__version__}, ABI 0.1)") in r.stderr
    assert "to load it anyway: force=True, tk ext load --force, or TK_EXT_FORCE=1" in r.stderr
    r = tk("ext", "check", str(lib))
    assert r.returncode == 1 and "MISMATCH: " in r.stdout and "tvm-ffi 0.2.0 (ABI 0.2)" in r.stdout
    forced = run_py(f"""
import tvm_ffi
from toolkit.ext.loader import load_extension
load_extension({str(lib)!r})
print(tvm_ffi.get_global_func("{NAME}.add_one")(1))
""", env={"TK_EXT_FORCE": "1"})
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.split() == ["2"]
    assert "ForcedLoad: loading anyway (TK_EXT_FORCE / force): " in forced.stderr
    r = tk("ext", "load", "--force", str(lib))
    assert r.returncode == 0 and "loading anyway" in r.stderr


def test_another_build_of_the_same_abi_loads(built: Path, work: Path, tk) -> None:
    """Another build id and an older tvm-ffi release of the same ABI (0.1.x): nothing the
    extension uses differs, so it loads and runs, as through a bare ctypes.CDLL."""
    lib = _restamped(built, work, "rebuilt", build_id="0" * 40, sha256="0" * 64,
                     version="0.1.9")
    r = run_py(f"""
import tvm_ffi
from toolkit.ext.loader import load_extension
load_extension({str(lib)!r})
print(tvm_ffi.get_global_func("{NAME}.greet")("x"))
""")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"hello x from {NAME}" and "Warning" not in r.stderr
    r = tk("ext", "check", str(lib))
    assert r.returncode == 0 and "ok: it would load" in r.stdout


def test_a_library_replaced_after_its_build_is_not_ok(built: Path, work: Path, tk) -> None:
    """The manifest vouches for one library (its sha256 and build id): another put in its
    place after tk ext build is not it, whatever the manifest says it was built against."""
    other = work / "replaced"
    other.mkdir()
    lib = other / built.name
    src = work / "replacement.cc"
    src.write_text('extern "C" int replacement_entry() { return 1; }\n')
    subprocess.run(["c++", "-shared", "-fPIC", "-Wl,--build-id", "-o", str(lib), str(src)],
                   check=True)
    manifest = built.with_name(built.name + ".tk.json")
    shutil.copy2(manifest, lib.with_name(manifest.name))
    recorded = json.loads(manifest.read_text())
    r = tk("ext", "check", str(lib))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ok: it would load" not in r.stdout
    assert (f"MISMATCH: {lib.name} is not the library its manifest describes (sha256 "
            f"{recorded['sha256'][:12]} recorded, {lib.name} is ") in r.stdout
    r = run_py(f"from toolkit.ext.loader import load_extension; load_extension({str(lib)!r})")
    assert r.returncode == 1 and "is not the library its manifest describes" in r.stderr
    # The library the manifest was written for is still ok beside its own manifest.
    assert tk("ext", "check", str(built)).returncode == 0


def test_copied_with_its_build_directory_builds_in_the_copy(built: Path, work: Path, tk) -> None:
    """`cp -a` of a built project: its build/ holds CMake's cache of the first copy; tk ext
    build empties it and configures it for the copy, whose library is then built."""
    project = built.parents[3]
    copy = work / "copied_project"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    r = tk("ext", "build", str(copy))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{copy / 'build'} was configured for another copy (its CMake cache was made for the " \
           f"sources in {project})" in r.stderr
    library = copy / built.relative_to(project)
    data = json.loads(library.with_name(library.name + ".tk.json").read_text())
    assert data["library"] == str(library) and data["source_dir"] == str(copy)
    assert tk("ext", "check", str(library)).returncode == 0


def test_a_symbol_this_tvm_lacks_is_refused(work: Path, tk) -> None:
    """A real library importing a tvm:: function the wheel's libraries do not export (what
    one built against a newer TVM does): refused, naming the symbol; forced, dlopen's own
    error comes back as one line instead of a crash."""
    src = work / "newer.cc"
    src.write_text("namespace tvm { namespace runtime { int OnlyInANewerTVM(int); } }\n"
                   "extern \"C\" int newer_entry(int x) { "
                   "return tvm::runtime::OnlyInANewerTVM(x); }\n")
    lib = work / "libnewer.so"
    subprocess.run(["c++", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    code = f"from toolkit.ext.loader import load_extension; load_extension({str(lib)!r})"
    r = run_py(code)
    assert r.returncode == 1
    assert ("libnewer.so needs symbols no TVM library in this process defines "
            "(_ZN3tvm7runtime15OnlyInANewerTVMEi)") in r.stderr
    r = tk("ext", "load", "--force", str(lib))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "loading anyway" in r.stderr
    assert "dlopen refused libnewer.so: " in r.stderr and "undefined symbol" in r.stderr


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
    """The vendored TVM (another build id, the same code and tvm-ffi) is imported first,
    then an extension built against the wheel: it binds to the vendored runtime, which
    exports all it uses through the same tvm-ffi ABI; tk loads it as a bare dlopen does."""
    env = {"PYTHONPATH": str(second_tvm)}
    bare = _bare(built, env)
    assert bare.returncode == 0 and "loaded" in bare.stdout
    loaded = run_py(f"import tvm, tvm_ffi; from toolkit.ext.loader import load_extension; "
                    f"load_extension({str(built)!r}); print(tvm.__file__, "
                    f"tvm_ffi.get_global_func('{NAME}.add_one')(2))", env=env)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == [str(second_tvm / "tvm" / "__init__.py"), "3"]


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


def test_new_refuses_names_that_would_fail_later(tk, tmp_path: Path) -> None:
    """numpy would shadow the installed numpy wherever the extension's package is imported;
    delete (a C++ keyword) names the extension's C++ namespace: both refused at once."""
    import numpy

    r = tk("ext", "new", "numpy", "--dir", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"tk: error: extension name 'numpy' would shadow the module numpy that "
        f"{sys.executable} imports from {Path(numpy.__file__).parent}; pick another"]
    r = tk("ext", "new", "json", "--dir", str(tmp_path))  # the standard library's, too
    assert r.returncode == 2 and "would shadow the module json" in r.stderr
    r = tk("ext", "new", "delete", "--dir", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "tk: error: extension name 'delete' is a C++ keyword (or a name C++ compilers "
        "predefine), and it names the extension's C++ namespace; pick another"]
    assert not any(tmp_path.iterdir())


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
