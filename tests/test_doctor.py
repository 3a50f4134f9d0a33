"""tk doctor on a healthy install and on deliberately broken ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest


def checks_by_name(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for check in report["checks"]:
        out.setdefault(check["name"], []).append(check)
    return out


def test_healthy_install(tk):
    import tvm

    result = tk("doctor", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    checks = checks_by_name(report)
    assert checks["tvm import"][0]["status"] == "pass"
    assert tvm.__version__ in checks["tvm import"][0]["detail"]
    assert checks["smoke llvm"][0]["status"] == "pass"
    libs = [c["detail"] for c in checks["library"]]
    assert any("libtvm_runtime" in d and "found by tvm package directory" in d for d in libs)
    assert checks["runtime cpu"][0]["detail"].endswith("device present")


def test_text_output_has_a_row_per_check(tk):
    result = tk("doctor")
    assert result.returncode == 0
    assert "PASS  tvm import" in result.stdout
    assert result.stdout.rstrip().endswith("checks")


def test_missing_interpreter_is_exit_2(tk):
    result = tk("doctor", "--python", "/no/such/python")
    assert result.returncode == 2
    assert "no such interpreter" in result.stderr


def test_relative_interpreter_path_is_taken_from_where_the_user_is(tk, tmp_path):
    # The probe runs in another directory: a relative path must be made absolute first.
    # A bare venv (no tvm) is enough: the probe starts and says what it found.
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    result = tk("doctor", "--python", "venv/bin/python", "--json", cwd=tmp_path)
    assert "no such interpreter" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert report["python"] == str(tmp_path / "venv" / "bin" / "python")
    assert checks_by_name(report)["python"][0]["status"] == "pass"
    assert checks_by_name(report)["tvm import"][0]["status"] == "fail"  # not ours: its own
    result = tk("doctor", "--python", "venv/bin/nope", cwd=tmp_path)
    assert result.returncode == 2 and "no such interpreter" in result.stderr


def shadow_tvm_without_runtime(tmp_path: Path) -> Path:
    """A copy of the installed tvm package (by symlinks) whose libtvm_runtime.so is gone."""
    import tvm

    real = Path(tvm.__file__).parent
    site = tmp_path / "site"
    copy = site / "tvm"
    copy.mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != "lib":
            (copy / entry.name).symlink_to(entry)
    (copy / "lib").mkdir()
    for lib in (real / "lib").iterdir():
        if lib.name != "libtvm_runtime.so":
            (copy / "lib" / lib.name).symlink_to(lib)
    return site


def test_missing_runtime_library_is_diagnosed(tk, tmp_path):
    site = shadow_tvm_without_runtime(tmp_path)
    result = tk("doctor", "--json", env={"PYTHONPATH": str(site)})
    report = json.loads(result.stdout)
    imp = checks_by_name(report)["tvm import"][0]
    assert result.returncode == 1
    assert imp["status"] == "fail"
    assert "libtvm_runtime" in imp["detail"]
    assert imp["fix"]


def test_import_that_crashes_is_diagnosed_not_inherited(tk, tmp_path):
    fake = tmp_path / "site" / "tvm"
    fake.mkdir(parents=True)
    # Stands in for a TVM whose library segfaults at load: doctor must survive and say so.
    (fake / "__init__.py").write_text("import ctypes\nctypes.string_at(0)\n")
    result = tk("doctor", "--json", env={"PYTHONPATH": str(tmp_path / "site")})
    report = json.loads(result.stdout)
    imp = checks_by_name(report)["tvm import"][0]
    assert result.returncode == 1
    assert imp["status"] == "fail" and "crashed" in imp["detail"] and "signal 11" in imp["detail"]


def test_environment_redirect_is_reported(tk, tmp_path):
    other = tmp_path / "vendored" / "python" / "tvm"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    result = tk("doctor", "--json", env={"TVM_HOME": str(tmp_path / "vendored")})
    checks = checks_by_name(json.loads(result.stdout))
    home = checks["env TVM_HOME"][0]
    assert home["status"] == "warn" and str(other) in home["detail"]


@pytest.mark.slow
def test_tvm_ffi_mismatch_names_versions_and_the_fix(tk, tmp_path):
    """The real failure: apache-tvm 0.27 with an older apache-tvm-ffi from PyPI."""
    import tvm

    if not tvm.__version__.startswith("0.27"):
        pytest.skip("the chosen tvm-ffi release is known to break the 0.27 wheel only")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    python = env_dir / "bin" / "python"
    # A venv sees its base interpreter's site-packages, not those of the environment running
    # the tests, which is where this tvm may be: put that directory after the venv's own, so
    # the tvm-ffi installed below still comes first.
    site = str(Path(tvm.__file__).resolve().parent.parent)
    purelib = subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True)
    (Path(purelib.strip()) / "tk-test-tvm.pth").write_text(site + "\n")
    found = subprocess.run([str(python), "-c", "import importlib.util as u; "
                            "assert u.find_spec('tvm')"], capture_output=True)
    if found.returncode != 0:
        pytest.skip(f"the test venv cannot see the tvm at {site}")
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "apache-tvm-ffi==0.1.12"],
        capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if pip.returncode != 0:
        pytest.skip(f"cannot fetch apache-tvm-ffi 0.1.12 from PyPI: {pip.stderr[-200:]}")
    result = tk("doctor", "--python", str(python))
    assert result.returncode == 1
    assert "the TVM build and tvm-ffi disagree" in result.stdout
    assert "tvm::ffi::" in result.stdout
    assert "fix: pip install 'apache-tvm-ffi==" in result.stdout
    assert sys.executable not in result.stdout.splitlines()[0]


def test_python_and_library_from_the_same_package_pass(tk):
    report = json.loads(tk("doctor", "--json").stdout)
    row = checks_by_name(report)["python vs library"][0]
    assert row["status"] == "pass" and "from the package" in row["detail"]


def test_pythonpath_tree_against_another_trees_libraries_fails(tk, tmp_path):
    """PYTHONPATH at tree A's python/, TVM_LIBRARY_PATH at tree B's build: the skew doctor
    names (the import may still work when both hold the same TVM, as here)."""
    import tvm

    package = Path(tvm.__file__).parent
    a, b = tmp_path / "a", tmp_path / "b"
    for tree in (a, b):
        (tree / "python").mkdir(parents=True)
        (tree / "CMakeLists.txt").write_text("project(tvm)\n")
    # Tree A: tvm's Python sources (linked, not copied), without the libraries.
    subprocess.run(["cp", "-rs", str(package), str(a / "python" / "tvm")], check=True)
    subprocess.run(["rm", "-rf", str(a / "python" / "tvm" / "lib")], check=True)
    # Tree B: a build directory holding the libraries (hard links: same files, other place).
    (b / "python" / "tvm").mkdir()
    (b / "build").mkdir()
    for lib in (package / "lib").glob("libtvm*.so"):
        os.link(lib, b / "build" / lib.name)
    repo = Path(__file__).resolve().parent.parent  # tk itself, then tree A
    env = {"PYTHONPATH": os.pathsep.join([str(repo), str(a / "python")]),
           "TVM_LIBRARY_PATH": str(b / "build")}
    report = json.loads(tk("doctor", "--json", env=env).stdout)
    row = checks_by_name(report)["python vs library"][0]
    assert row["status"] == "fail", row
    assert f"tree {a}" in row["detail"] and f"tree {b}" in row["detail"]
    assert "TVM_LIBRARY_PATH" in row["detail"] and str(a / "build") in row["fix"]


def test_tree_rebuilt_from_another_commit_warns(tmp_path):
    from toolkit.doctor import WARN, check_python_library_skew

    tree = tmp_path / "tvm"
    (tree / "python" / "tvm").mkdir(parents=True)
    (tree / "build").mkdir()
    (tree / "CMakeLists.txt").write_text("project(tvm)\n")
    (tree / "python" / "tvm" / "__init__.py").write_text("")
    (tree / "build" / "libtvm.so").write_bytes(b"")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    facts = {"python": {"env": {"PYTHONPATH": str(tree / "python")}},
             "import": {"ok": True, "file": str(tree / "python" / "tvm" / "__init__.py")},
             "libraries": {"libraries": [{"path": str(tree / "build" / "libtvm.so")}]},
             "build_info": {"libinfo": {"GIT_COMMIT_HASH": "0123456789abcdef0123"}}}
    row = check_python_library_skew(facts)[0]
    assert row.status == WARN and "built from 0123456789ab" in row.detail


def test_a_stored_build_of_the_python_tree_is_the_same_tvm(tmp_path):
    """tk env puts a stored build's lib/ (in tk's cache, not in the tree) beside the tree's
    python/: its record names that tree, so the two are one TVM - not "two TVMs meet"."""
    import json

    from toolkit.doctor import FAIL, PASS, check_python_library_skew

    trees = {}
    for name in ("tvm", "other"):
        tree = trees[name] = tmp_path / name
        (tree / "python" / "tvm").mkdir(parents=True)
        (tree / "CMakeLists.txt").write_text("project(tvm)\n")
    entry = tmp_path / "cache" / "builds" / "0123abcd"
    (entry / "lib").mkdir(parents=True)
    (entry / "lib" / "libtvm_runtime.so").write_bytes(b"")
    for built_from, want in ((trees["tvm"], PASS), (trees["other"], FAIL)):
        (entry / "manifest.json").write_text(json.dumps({"source": {"dir": str(built_from)}}))
        facts = {"python": {"env": {"PYTHONPATH": str(trees["tvm"] / "python"),
                                    "TVM_LIBRARY_PATH": str(entry / "lib")}},
                 "import": {"ok": True, "file": str(trees["tvm"] / "python" / "tvm" / "x.py")},
                 "libraries": {"libraries": [{"path": str(entry / "lib" / "libtvm_runtime.so")}]}}
        assert check_python_library_skew(facts)[0].status == want, built_from


def test_the_light_probe_judges_what_a_post_build_check_judges_with_one_import():
    """A build's post-build check runs the doctor probe --light: the facts it judges (the
    import, which libraries were mapped, what the build says of itself, the runtimes) as the
    full probe finds them, without reading every library again, a smoke compile, the second
    import that finds who registered what, or every installed distribution's file list."""
    from toolkit import doctor

    full, light = doctor.run(), doctor.run(light=True)
    assert light.facts["import"] == full.facts["import"] and light.facts["import"]["ok"]
    paths = [[lib["path"] for lib in r.facts["libraries"]["libraries"]] for r in (full, light)]
    assert paths[0] == paths[1] and paths[1]
    assert all(len(lib["sha256"]) == 64 for lib in full.facts["libraries"]["libraries"])
    assert all(lib["sha256"] is None for lib in light.facts["libraries"]["libraries"])
    assert light.facts["build_info"] == full.facts["build_info"]
    assert light.facts["runtimes"]["runtimes"] == full.facts["runtimes"]["runtimes"]
    assert "smoke_llvm" in full.facts and "ext_owners" in full.facts
    assert "smoke_llvm" not in light.facts and "ext_owners" not in light.facts
    assert "tvm_dists" in full.facts["packages"] and "tvm_dists" not in light.facts["packages"]
    assert [c.status for c in light.checks if c.name == "tvm import"] == ["pass"]


def test_a_runtime_only_tvm_is_examined_without_a_smoke_compile(tk):
    """A runtime-only TVM cannot import tvm.relax: the probe's smoke compile imported it
    unguarded and died, so tk doctor in a runtime-only build's tk env judged nothing (an H200's
    GPU check found it). TVM_USE_RUNTIME_LIB=1 makes this TVM runtime-only."""
    result = tk("doctor", "--json", env={"TVM_USE_RUNTIME_LIB": "1"})
    report = json.loads(result.stdout)
    checks = checks_by_name(report)
    assert result.returncode == 0, result.stdout + result.stderr
    assert checks["tvm import"][0]["status"] == "pass" and "runtime cpu" in checks
    assert "smoke llvm" not in checks  # not run, so not claimed


def test_a_runtime_only_builds_unloaded_cuda_library_names_why_and_the_load(tmp_path):
    from toolkit.doctor import FAIL, check_requested_runtimes

    (tmp_path / "libtvm_runtime_cuda.so").write_bytes(b"")
    for runtime_only in (True, False):
        facts = {"runtimes": {"runtimes": [{"kind": "cuda", "runtime": False}],
                              "cuda_driver": "libcuda.so.1"},
                 "asked": {"build": "b1", "runtimes": ["cuda"], "lib_dir": str(tmp_path),
                           "runtime_only": runtime_only}}
        [row] = check_requested_runtimes(facts)
        assert row.status == FAIL
        assert ("ctypes.CDLL" in row.fix and "runtime-only" in row.detail) is runtime_only
