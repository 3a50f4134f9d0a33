"""tk fork extract, and tk fork rebase-check with a build: a C++ pass of the miniature fork
(which builds in seconds) moved out of tree, built against upstream's build and proven with
the fork's check; a Python pass of real apache/tvm (TK_TVM_GIT) moved out of tree and proven
against the apache-tvm 0.26.0 wheel, IR pass by pass; which file of a real fork goes where."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fork_helpers import MINI_CHECK, V026, make_fork, make_mini_fork, snapshot, unchanged
from minifork import add_python_commit, commit_file
from tvm026 import python_026

from toolkit.fork import extract, repo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """The miniature fork, and a cache its tests share (the store serves their builds)."""
    base = tmp_path_factory.mktemp("mini")
    shas = make_mini_fork(base / "fork")
    return base / "fork", shas, {"TK_CACHE": str(base / "cache")}


def test_extract_moves_a_cpp_pass_out_of_tree_and_proves_it(tk, mini, tmp_path):
    fork, shas, env = mini
    before = snapshot(fork)
    r = tk("fork", "extract", "HEAD", "--kind", "pass", "--upstream", "upstream", "--dir",
           str(tmp_path), "--check", MINI_CHECK, "--json", cwd=fork, env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(r.stdout)
    project = tmp_path / "double_all"
    assert data["project"] == str(project) and data["proven"] is True
    moved = {m["path"]: m["to"] for m in data["moved"]}
    assert moved == {"src/relax/transform/double_all.cc": "src/relax/transform/double_all.cc",
                     "python/tvm/relax/transform.py":
                         "python/double_all/additions/tvm/relax/transform.py"}
    # The fork's own source, built by the scaffold's CMake against upstream's build.
    assert (project / "src/relax/transform/double_all.cc").read_text() == (
        fork / "src/relax/transform/double_all.cc").read_text()
    assert "tvm_extension(double_all src/relax/transform/double_all.cc COMPILER)" in (
        project / "CMakeLists.txt").read_text()
    assert (project / "cmake/tvm_extension.cmake").is_file()
    assert Path(data["library"]) == project / "python/double_all/lib/libdouble_all.so"
    assert data["registers"] == ["mini.transform.DoubleAll"]
    assert data["built_against"].startswith("--build ")
    runs = {run["side"]: run["verdict"] for run in data["runs"]}
    # The check passes with the fork and with upstream + the extension; upstream alone fails
    # it: the check exercises the change, and the extension carries it.
    assert runs == {"fork": "good", "upstream + extension": "good", "upstream alone": "bad"}
    unchanged(fork, before)
    # The extension is a tk ext project: tk's loader takes it into upstream's TVM.
    up = next(run["tvm"] for run in data["runs"] if run["side"] == "upstream alone")
    build_id = up.split()[1]
    exports = tk("env", build_id, "--json", env=env)
    assert exports.returncode == 0, exports.stderr
    built = json.loads(exports.stdout)
    code = ("import tvm; from toolkit.ext.loader import use; "
            f"print(use({str(project)!r})); print(tvm.relax.transform.DoubleAll('5,6'))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={
        **os.environ, **built,
        "PYTHONPATH": os.pathsep.join([built["PYTHONPATH"], str(Path(__file__).parents[1])])})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.splitlines()[-2:] == ["['mini.transform.DoubleAll']", "10,12"]


def test_rebase_check_builds_and_checks_the_replayed_fork(tk, mini):
    fork, shas, env = mini
    # Upstream moves on: its modules print with another separator, which breaks the fork's
    # pass (its check expects commas) though its patch still applies.
    subprocess.run(["git", "-C", str(fork), "checkout", "-q", "upstream"], check=True)
    header = (fork / "include/tvm/ir/transform.h").read_text()
    moved = commit_file(fork, "include/tvm/ir/transform.h",
                        header.replace('(out.empty() ? "" : ",")', '(out.empty() ? "" : ";")'),
                        "Print modules with semicolons")
    subprocess.run(["git", "-C", str(fork), "checkout", "-q", "fork"], check=True)
    before = snapshot(fork)
    r = tk("fork", "rebase-check", "--onto", moved, "--check", MINI_CHECK, "--json", cwd=fork,
           env=env, timeout=1800)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    data = json.loads(r.stdout)
    assert [p["status"] for p in data["patches"]] == ["applies"]
    step = data["step"]
    assert step["verdict"] == "bad" and step["cache_hit"] is False  # built, then checked
    text = tk("fork", "rebase-check", "--onto", moved, "--check", MINI_CHECK, cwd=fork,
              env=env).stdout
    assert "check python -c" in text
    assert ": bad (exit 1; known from 1 earlier run; build: known)" in text
    assert f"next: tk bisect upstream --source {fork} --onto {moved}" in text
    unchanged(fork, before)


def test_bisect_upstream_builds_through_the_store_with_the_patch_on_every_probe(tk, mini):
    fork, shas, env = mini
    git = ["git", "-C", str(fork)]
    subprocess.run([*git, "checkout", "-q", "-b", "upstream2", shas["upstream"]], check=True)
    line = [add_python_commit(fork, f"# {i}\n", f"upstream: Python {i}") for i in (1, 2)]
    header = (fork / "include/tvm/ir/transform.h").read_text()
    line.append(commit_file(fork, "include/tvm/ir/transform.h", header.replace(
        '(out.empty() ? "" : ",")', '(out.empty() ? "" : " ")'), "Print modules with spaces"))
    line += [add_python_commit(fork, f"# {i}\n", f"upstream: Python {i}") for i in (4, 5)]
    subprocess.run([*git, "checkout", "-q", "fork"], check=True)
    before = snapshot(fork)
    r = tk("bisect", "upstream", "--onto", "upstream2", "--parallel", "2", "--check", MINI_CHECK,
           "--json", cwd=fork, env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(r.stdout)
    assert data["first_bad"]["hash"] == line[2] and data["confirmed"] is True
    # Python-only upstream commits share a build with their parent, the fork's patch on top:
    # two builds at most (before and after the header), each once, in the store.
    assert data["builds"] <= 2, data["build_spans"]
    assert all(s["cache_hit"] is not None or s["known"] for s in data["steps"])
    assert all(b["ok"] for b in data["build_spans"])
    unchanged(fork, before)


# -- real apache/tvm ---------------------------------------------------------------------------

def test_extract_moves_a_python_pass_of_real_tvm_out_of_tree_with_the_same_ir(tk, tmp_path):
    python026 = str(python_026())
    fork = tmp_path / "tvm"
    shas = make_fork(fork, only_python=True)  # the v0.26.0 release and the fork's Python pass
    before = snapshot(fork)
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("fork", "extract", "HEAD", "--kind", "pass", "--upstream", V026, "--dir",
           str(tmp_path / "out"), "--workload", "tests/fork/workload.py", "--python", python026,
           "--json", cwd=fork, env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(r.stdout)
    assert data["name"] == "fork_fold_scale" and data["library"] is None
    assert data["commits"][0]["hash"] == shas["python_pass"]
    project = Path(data["project"])
    module = project / "python/fork_fold_scale/fork/tvm/relax/transform/fork_fold_scale.py"
    assert module.read_text() == (fork / "python/tvm/relax/transform/fork_fold_scale.py").read_text()
    assert (project / "python/fork_fold_scale/additions/tvm/relax/transform/__init__.py"
            ).read_text().endswith("from .fork_fold_scale import ForkFoldScale\n")
    assert not (project / "CMakeLists.txt").exists()  # nothing to build
    runs = {run["side"]: run["verdict"] for run in data["runs"]}
    assert runs == {"fork": "good", "upstream + extension": "good", "upstream alone": "bad"}
    ir = data["ir"]
    assert ir["same"] is True and ir["fork_passes"] == ["ForkFoldScale"] and ir["passes"] > 50
    assert data["proven"] is True
    unchanged(fork, before)


def test_which_file_of_a_real_fork_goes_where(tmp_path):
    fork_dir = tmp_path / "tvm"
    shas = make_fork(fork_dir)
    fork = repo.open_fork(fork_dir)
    name, moved, files = extract.plan(fork, [shas["cpp_pass"]], "pass")
    assert name == "fork_tag_calls"
    where = {m.path: (m.to, m.how) for m in moved}
    assert where["src/relax/transform/fork_tag_calls.cc"][0] == "src/relax/transform/fork_tag_calls.cc"
    assert where["python/tvm/relax/transform/transform.py"][0] == (
        "python/fork_tag_calls/additions/tvm/relax/transform/transform.py")
    to, why = where["include/tvm/relax/transform.h"]
    assert to is None and "left out" in why
    assert "def ForkTagCalls()" in files[
        "python/fork_tag_calls/additions/tvm/relax/transform/transform.py"]
    _, moved, files = extract.plan(fork, [shas["target"]], "codegen", "forkdev")
    where = {m.path: m.to for m in moved}
    assert where == {"src/backend/forkdev/codegen/codegen_forkdev.cc":
                     "src/backend/forkdev/codegen/codegen_forkdev.cc",
                     "src/backend/forkdev/runtime/forkdev_device_api.cc":
                     "src/backend/forkdev/runtime/forkdev_device_api.cc",
                     "CMakeLists.txt": None}
    assert sorted(files) == sorted(to for to in where.values() if to)
