"""`tk ext new --kind pass`: a C++ TIR pass and a C++ Relax pass, built against the real
v0.26.0 tree's headers and the apache-tvm 0.26.0 wheel's libraries, run inside a tk compile
through the workload's pipeline, their effect seen in `tk dump-ir`; a function the headers
declare but the wheel does not export is refused before compiling."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, run_tk
from tvm026 import python_026

pytestmark = pytest.mark.slow

NAME = "my_passes"
FIXTURES = os.environ.get("TK_FIXTURES")
TREE = "tvm-v0.26.0"


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    # Not tmp_path_factory: pytest sessions running beside this one prune its base dirs.
    path = Path(tempfile.mkdtemp(prefix="tk-ext-pass-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def python026() -> str:
    return str(python_026())


@pytest.fixture(scope="module")
def tree(work: Path) -> Path:
    tarball = Path(FIXTURES or "") / f"{TREE}.tar.xz"
    if not FIXTURES or not tarball.is_file():
        pytest.skip(f"TK_FIXTURES does not name a directory holding {TREE}.tar.xz")
    out = work / "src"
    # The headers are all an extension build reads of the tree.
    keep = (f"{TREE}/include/", f"{TREE}/3rdparty/tvm-ffi/include/",
            f"{TREE}/3rdparty/tvm-ffi/3rdparty/dlpack/")
    with tarfile.open(tarball) as tf:
        members = [m for m in tf.getmembers() if m.name.startswith(keep)]
        kw = {"filter": "tar"} if hasattr(tarfile, "data_filter") else {}
        tf.extractall(out, members=members, **kw)
    return out / TREE


@pytest.fixture(scope="module")
def project(work: Path, tree: Path, python026: str) -> Path:
    r = run_tk("ext", "new", NAME, "--kind", "pass", "--dir", str(work), "--python", python026)
    assert r.returncode == 0, r.stderr
    assert f"--python {python026} --tvm-source TVM_TREE" in r.stdout
    # The wheel's requirements are those of the TVM it is for, not of the Python running tk.
    assert '"apache-tvm>=0.26,<0.27"' in (work / NAME / "pyproject.toml").read_text()
    r = run_tk("ext", "build", str(work / NAME), "--python", python026, "--tvm-source", str(tree),
               timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"registers: {NAME}.transform.CountCalls, {NAME}.transform.CountStores" in r.stdout
    assert "tk: checking the headers of --tvm-source" in r.stderr
    return work / NAME


def tk026(python026: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([python026, "-m", "toolkit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_cpp_passes_link_the_wheels_compiler_and_pass_their_own_tests(
        project: Path, python026: str) -> None:
    library = project / "python" / NAME / "lib" / f"lib{NAME}.so"
    data = json.loads(library.with_name(library.name + ".tk.json").read_text())
    assert {link["needed"] for link in data["links"]} == {
        "libtvm_compiler.so", "libtvm_runtime.so", "libtvm_ffi.so"}
    assert data["tvm"]["source_dir"].endswith(TREE)
    probe = subprocess.run([python026, "-c", "import pytest"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{python026} has no pytest to run the scaffold's own tests with")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no tk
    p = subprocess.run([python026, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "4 passed" in p.stdout


def test_the_passes_run_in_a_tk_compile_and_show_in_the_dump(project: Path,
                                                             python026: str) -> None:
    r = tk026(python026, "run", "workload.py", "--check", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "check against reference: OK" in r.stdout
    r = tk026(python026, "dump-ir", "workload.py", "-o", "dump", cwd=project)
    assert r.returncode == 0, r.stderr
    shown = tk026(python026, "dump-ir", "show", "dump", cwd=project)
    rows = [line for line in shown.stdout.splitlines() if f"{NAME}.Count" in line]
    assert len(rows) == 2 and all("changed (" in row for row in rows), shown.stdout
    found = tk026(python026, "dump-ir", "find", "dump", f"{NAME}.num_stores", cwd=project)
    lines = found.stdout.splitlines()
    assert found.returncode == 0 and lines, found.stdout + found.stderr
    assert all("appears after #" in line and f"{NAME}.CountStores" in line for line in lines)
    calls = tk026(python026, "dump-ir", "find", "dump", f"{NAME}.num_calls", cwd=project)
    assert f"forward: appears after #1 {NAME}.CountCalls" in calls.stdout, calls.stdout


def test_the_pass_extension_ships_as_a_wheel_beside_apache_tvm(project: Path, tree: Path,
                                                                python026: str) -> None:
    import zipfile

    from toolkit import libraries

    r = run_tk("ext", "wheel", str(project), "--python", python026, "--tvm-source", str(tree),
               "--out", str(project / "wheels"), "--json")
    assert r.returncode == 0, r.stderr
    wheel = Path(json.loads(r.stdout)["wheel"])
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(f"{NAME}-0.1.0.dist-info/METADATA").decode()
        z.extract(f"{NAME}/lib/lib{NAME}.so", project / "unzipped")
    assert {f"{NAME}/transform.py", f"{NAME}/_ffi_api.py", f"{NAME}/pipeline.py"} <= names
    assert "Requires-Dist: apache-tvm>=0.26,<0.27" in metadata
    lib = libraries.describe(project / "unzipped" / NAME / "lib" / f"lib{NAME}.so")
    assert "libtvm_compiler.so" in lib.needed  # found in the apache-tvm wheel's tvm/lib
    assert lib.runpath == ["$ORIGIN/../../tvm/lib", "$ORIGIN/../../tvm_ffi/lib"]


def test_a_function_the_wheel_does_not_export_is_refused_before_compiling(
        tmp_path: Path, tree: Path, python026: str) -> None:
    """relax::PostOrderVisit is declared without TVM_DLL: the wheel (HIDE_PRIVATE_SYMBOLS)
    does not export it, and an extension calling it would build, then fail to load."""
    assert run_tk("ext", "new", "hidden", "--kind", "pass", "--dir", str(tmp_path)).returncode == 0
    src = tmp_path / "hidden" / "src" / "relax_pass.cc"
    src.write_text("#include <tvm/relax/expr_functor.h>\n" + src.read_text().replace(
        "    int64_t calls = 0;\n",
        "    int64_t calls = 0;\n"
        "    tvm::relax::PostOrderVisit(func->body, [](const tvm::relax::Expr&) {});\n", 1))
    r = run_tk("ext", "build", str(tmp_path / "hidden"), "--python", python026,
               "--tvm-source", str(tree), timeout=1200)
    assert r.returncode == 2, r.stdout + r.stderr
    line = r.stderr[r.stderr.index("tk: error: "):].splitlines()[0]
    assert line.startswith(f"tk: error: headers and libraries of --tvm-source {tree} do not "
                           "match: symbols: the headers declare tvm::relax::PostOrderVisit("), line
    assert "which libtvm_runtime.so, libtvm_compiler.so in " in line
    assert "/tvm/lib and libtvm_ffi.so in " in line
    assert line.endswith("/tvm_ffi/lib do not export"), line
    assert not list((tmp_path / "hidden" / "build").rglob("*.o"))  # nothing compiled

