"""tk bisect on real git histories of the minifork: real builds, real worktrees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bisect_helpers import CHECK, checkout_fingerprint, make_history
from conftest import REPO

pytestmark = pytest.mark.slow


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"TK_CACHE": str(tmp_path / "cache")}


def state_file(env: dict[str, str]) -> Path:
    found = list(Path(env["TK_CACHE"], "bisect").glob("*/state.json"))
    return found[0]


def test_finds_culprit_leaves_checkout_alone_and_reuses_builds(tk, tmp_path, env, monkeypatch):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=16, culprit=11)
    # The user's checkout has work in progress: an edit, a staged file, an untracked file.
    (repo / "docs/index.md").write_text("edited, not committed\n")
    (repo / "staged.txt").write_text("staged\n")
    subprocess.run(["git", "-C", str(repo), "add", "staged.txt"], check=True)
    (repo / "untracked.txt").write_text("mine\n")
    before = checkout_fingerprint(repo)

    # One build slot: a machine with spare cores would otherwise build ahead (counted too).
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--parallel", "1", "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert "First bad commit: " + shas[11][:12] in r.stdout
    assert "checking the good end" in r.stderr and "commits left" in r.stderr  # progress

    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    assert data["first_bad"]["hash"] == shas[11]
    assert data["first_bad"]["subject"] == "step 11: faster add"
    assert data["confirmed"] is True
    assert 0 < data["builds"] <= 5  # the good end + log2(16), fewer with Python-only commits
    assert all("cache_hit" in s and "seconds" in s for s in data["steps"])
    assert data["reproduce"].startswith("tk bisect start")
    assert checkout_fingerprint(repo) == before
    # Its builds were stored unpacked, then packed when the run ended (none is in use), by
    # a process of its own.
    from toolkit.builds import gc

    monkeypatch.setenv("TK_CACHE", env["TK_CACHE"])
    gc.wait_for_packing()
    ls = json.loads(tk("build", "ls", "--json", env=env).stdout)["builds"]
    assert len(ls) == data["builds"] and all(b["packed"] for b in ls), ls

    r = tk("bisect", "reset", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert not Path(env["TK_CACHE"], "bisect").exists() or not any(
        Path(env["TK_CACHE"], "bisect").iterdir())
    worktrees = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True,
                               text=True).stdout.strip().splitlines()
    assert len(worktrees) == 1
    assert checkout_fingerprint(repo) == before

    # The same range again: every build comes from the store.
    tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
       "--check", CHECK, env=env)
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    assert data["first_bad"]["hash"] == shas[11]
    assert data["builds"] == 0
    # ... and every verdict, confirmation included, is known: nothing is checked out or run.
    assert data["known"] == data["probes"] and data["confirmed"] is True
    assert "known from" in r.stderr and "checking the good end" in r.stderr
    assert checkout_fingerprint(repo) == before


def test_parallel_slots_build_at_once_and_find_the_same_culprit(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=16, culprit=11)
    runs, states = {}, {}
    for n in (1, 2):
        e = {**env, "TK_CACHE": str(tmp_path / f"cache-{n}")}
        r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
               "--parallel", str(n), "--check", CHECK, env=e)
        assert r.returncode == 0, r.stderr
        r = tk("bisect", "run", "--source", str(repo), env=e)
        assert r.returncode == 0, r.stderr
        data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=e).stdout)
        assert data["first_bad"]["hash"] == shas[11] and data["confirmed"] is True
        runs[n] = sum(len(s["returncodes"]) for s in data["steps"])
        states[n] = json.loads(state_file(e).read_text())
        if n == 2:
            assert "slot 1: building" in r.stderr
            assert tk("bisect", "reset", "--source", str(repo), env=e).returncode == 0
    assert runs[2] == runs[1]  # the slots build ahead; the checks stay the binary search's
    spans = states[2]["builds"]
    assert {b["slot"] for b in spans} == {0, 1}
    assert not any(b["prefetch"] for b in states[1]["builds"])
    # Slot 1's builds ran while slot 0 built or checked: their time spans overlap.
    ahead = [(b["started"], b["started"] + b["seconds"]) for b in spans if b["slot"] == 1]
    own = [(b["started"], b["started"] + b["seconds"]) for b in spans if b["slot"] == 0]
    assert any(a0 < o1 and o0 < a1 for a0, a1 in ahead for o0, o1 in own)
    # reset took the spare slot's worktree away with the rest.
    worktrees = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True,
                               text=True).stdout.strip().splitlines()
    assert len(worktrees) == 2  # the repository's own, and the --parallel 1 bisection's


def test_killed_halfway_then_resumed(tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=16, culprit=5)
    run_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    tk = [sys.executable, "-m", "toolkit", "bisect"]
    subprocess.run([*tk, "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
                    "--check", CHECK], env=run_env, check=True, capture_output=True)
    proc = subprocess.Popen([*tk, "run", "--source", str(repo)], env=run_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300
    steps = 0
    while time.time() < deadline and proc.poll() is None:
        try:
            steps = len(json.loads(state_file(env).read_text())["steps"])
        except (IndexError, json.JSONDecodeError, FileNotFoundError):
            steps = 0
        if steps >= 3:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the bisection ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # tk and its crash-guard child, builds, checks
    proc.wait()
    done = json.loads(state_file(env).read_text())["steps"]
    assert len(done) >= 3

    r = subprocess.run([*tk, "run", "--source", str(repo)], env=run_env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    final = json.loads(state_file(env).read_text())
    assert final["culprit"] == shas[5]
    # Nothing probed before the kill was probed again by the search.
    searched = [s["commit"] for s in final["steps"] if s["phase"] != "confirm"]
    assert len(searched) == len(set(searched))
    assert searched[:len(done)] == [s["commit"] for s in done]


def test_unbuildable_commits_are_skipped(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=12, culprit=8, python_every=0, broken=range(6, 8))
    tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
       "--check", CHECK, env=env)
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    assert data["first_bad"] is None
    # 6..8 do not build (8 changes other code, 9 fixes the build): 9 is the first testable bad.
    assert [c["hash"] for c in data["candidates"]] == shas[6:10]
    assert {s["reason"] for s in data["steps"] if s["verdict"] == "skip"} == {"build failed"}
    assert "one of these" in r.stdout


def test_flaky_check_is_reported_and_skipped(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=4, culprit=3, python_every=0)
    counter = tmp_path / "count"
    script = tmp_path / "flaky.sh"
    # Good everywhere but commit 2, where it alternates; commit 3+ are bad.
    script.write_text(f"""#!/bin/sh
n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}
case "$TK_BISECT_COMMIT" in {shas[2]}) exit $((n % 2));; esac
{CHECK}
""")
    script.chmod(0o755)
    tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
       "--count", "2", "--check", str(script), env=env)
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    flaky = [s for s in data["steps"] if s["commit"] == shas[2]]
    assert flaky and flaky[0]["verdict"] == "skip" and "flaky" in flaky[0]["reason"]
    assert [c["hash"] for c in data["candidates"]] == shas[2:4]


def test_a_culprit_its_confirmation_contradicts_is_flaky(tk, tmp_path, env):
    """Bad from commit 2 on, except that commit 2 is bad only on its first run: the search
    ends there, its re-run disagrees, and no culprit is claimed (exit 3)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = _history(repo, culprit=2, commits=5)
    runs = tmp_path / "runs"
    runs.mkdir()
    script = tmp_path / "check.sh"
    script.write_text(f"""#!/bin/sh
n=$(cat {runs}/$TK_BISECT_COMMIT 2>/dev/null || echo 0); echo $((n+1)) > {runs}/$TK_BISECT_COMMIT
case "$TK_BISECT_COMMIT" in {shas[2]}) exit $((n == 0));; esac
grep -q ok val
""")
    script.chmod(0o755)
    assert tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
              "--no-build", "--check", str(script), env=env).returncode == 0
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.startswith("# The check is flaky - no confirmed culprit\n")
    assert f"The search ended at `{shas[2][:12]}`" in r.stdout
    assert f"{shas[2][:10]} good (exit 0)" in r.stdout and "First bad commit" not in r.stdout
    assert "- Confirmed: NO" in r.stdout
    r = tk("bisect", "status", "--source", str(repo), env=env)
    assert f"the check is flaky: the search ended at {shas[2]}" in r.stdout


def test_the_pass_hint_of_a_no_build_bisection_compares_culprit_and_parent(tk, tmp_path, env):
    """A workload file of the tree gains a miscompiling pass; --no-build, the check builds
    nothing. The suggested dumps are of the culprit and its parent as the check ran them -
    in the bisection's worktree - not of the user's checkout twice ("no difference")."""
    pytest.importorskip("tvm")
    bug = (REPO / "tests" / "fixtures" / "bisect" / "miscompile.py").read_text()
    good = bug.replace("relax.transform.FoldConstant(), fold_bias_bug,",
                       "relax.transform.FoldConstant(),")
    assert good != bug
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i, (name, text) in enumerate([("model.py", good), ("notes", "1\n"), ("model.py", bug),
                                      ("notes", "3\n")]):
        (repo / name).write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"step {i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    assert tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
              "--no-build", "--check", "numerics model.py", env=env).returncode == 0
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert f"First bad commit: {shas[2][:12]}" in r.stdout
    assert "tk built nothing for these commits (the check builds)" in r.stdout
    hint = json.loads(tk("bisect", "report", "--json", "--source", str(repo),
                         env=env).stdout)["pass_hint"]
    # The user runs it from their checkout, where model.py is the newest (bad) one.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tk").write_text(f"#!/bin/sh\nexec {sys.executable} -m toolkit \"$@\"\n")
    (bin_dir / "tk").chmod(0o755)
    shell_env = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                 "PYTHONPATH": str(REPO)}
    done = subprocess.run(["sh", "-c", hint["dump_ir"]], cwd=repo, env=shell_env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FoldBiasBug" in done.stdout and "no difference" not in done.stdout
    names = {d.name: json.loads((repo / d / "index.json").read_text())["passes"]
             for d in (Path("ir-parent"), Path("ir-culprit"))}
    assert not any(p["name"] == "FoldBiasBug" for p in names["ir-parent"])
    assert any(p["name"] == "FoldBiasBug" for p in names["ir-culprit"])
    done = subprocess.run(["sh", "-c", hint["passes"]], cwd=repo, env=shell_env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("# First bad pass: #") and "FoldBiasBug" in done.stdout


def test_missing_command_stops_with_explanation(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=2, culprit=2, python_every=0)
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nno-such-tool-anywhere --check\n")
    script.chmod(0o755)
    tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
       "--check", str(script), env=env)
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 1
    assert "127" in r.stderr and "not found" in r.stderr
    st = json.loads(state_file(env).read_text())
    assert st["status"] == "stopped" and st["marks"] == {}
    # Pass bisection in a commit's stored build runs the TVM of that build (here the
    # minifork's, which has no Relax): the environment is the build's, not tk's.
    r = tk("bisect", "passes", "builtin:mlp", "--rev", shas[0], "--source", str(repo), env=env)
    assert r.returncode == 1 and "No module named 'tvm.relax'" in r.stderr, r.stderr


def test_bad_input_exits_2_and_changes_nothing(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=3, culprit=2, python_every=0)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "side", shas[1]], check=True)
    (repo / "side.txt").write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "side.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b",
                    "commit", "-qm", "side"], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    before = checkout_fingerprint(repo)
    not_git = tmp_path / "plain"
    not_git.mkdir()
    cases = {
        "not a git repository": ["--source", str(not_git), "--good", "a", "--bad", "b",
                                 "--check", "true"],
        "is not a commit": ["--source", str(repo), "--good", "nope", "--bad", "HEAD",
                            "--check", "true"],
        "same commit": ["--source", str(repo), "--good", "HEAD", "--bad", "main",
                        "--check", "true"],
        "not an ancestor": ["--source", str(repo), "--good", "side", "--bad", "main",
                            "--check", "true"],
        "missing check": ["--source", str(repo), "--good", shas[0], "--bad", "HEAD"],
        "not found on PATH": ["--source", str(repo), "--good", shas[0], "--bad", "HEAD",
                              "--check", "no-such-check-tool x"],
    }
    for words, args in cases.items():
        r = tk("bisect", "start", *args, env=env)
        assert r.returncode == 2, (words, r.stderr)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not Path(env["TK_CACHE"], "bisect").exists()
    assert checkout_fingerprint(repo) == before
    r = tk("bisect", "status", "--source", str(repo), env=env)
    assert r.returncode == 2 and "no bisection in progress" in r.stderr


def test_marking_by_hand(tk, tmp_path, env):
    repo = tmp_path / "repo"
    shas = make_history(repo, commits=8, culprit=3, python_every=0)
    tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
       "--check", CHECK, env=env)
    r = tk("bisect", "good", shas[0], "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    for _ in range(5):
        st = json.loads(state_file(env).read_text())
        if st["status"] == "done":
            break
        head = subprocess.run(["git", "-C", str(Path(st["source"])), "worktree", "list",
                               "--porcelain"], capture_output=True, text=True).stdout
        assert st["current"] in head  # the next commit is checked out in the worktree
        verdict = "bad" if shas.index(st["current"]) >= 3 else "good"
        r = tk("bisect", verdict, "--source", str(repo), env=env)
        assert r.returncode == 0, r.stderr
    assert "First bad commit: " + shas[3][:12] in r.stdout
    assert json.loads(state_file(env).read_text())["culprit"] == shas[3]


def test_plain_cmake_project(tk, tmp_path, env):
    """Not TVM: tk configures once and builds with CMake in a build dir kept between steps."""
    from minifork import commit_file, git

    repo = tmp_path / "calc"
    repo.mkdir()
    git(repo, "init", "-q")
    shas = [commit_file(repo, "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\n"
                        "project(calc CXX)\nadd_executable(calc main.cc)\n", "cmake")]
    for i in range(1, 9):
        body = "a + b + 1" if i >= 6 else "a + b"
        shas.append(commit_file(repo, "main.cc", f"// rev {i}\nint add(int a, int b) {{ return "
                                f"{body}; }}\nint main() {{ return add(2, 2) == 4 ? 0 : 1; }}\n",
                                f"rev {i}"))
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[1], "--bad", "HEAD",
           "--check", '"$TK_BISECT_BUILD_DIR/calc"', env=env)
    assert r.returncode == 0, r.stderr
    assert "cmake --build" in r.stdout
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert "First bad commit: " + shas[6][:12] in r.stdout


def test_submodule_objects_missing_locally_skip_the_commit_and_nothing_is_fetched(tk, tmp_path,
                                                                                   env):
    def git(cwd: Path, *args: str) -> str:
        return subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd,
                              check=True, capture_output=True, text=True).stdout.strip()

    sub, repo = tmp_path / "sub", tmp_path / "repo"
    for root in (sub, repo):
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "t@tk.invalid")
        git(root, "config", "user.name", "tk test")
    (sub / "f").write_text("0\n")
    git(sub, "add", "-A")
    git(sub, "commit", "-q", "-m", "s0")
    s0 = git(sub, "rev-parse", "HEAD")
    git(repo, "submodule", "add", "-q", str(sub), "lib")  # the user's clone: .git/modules/lib
    (sub / "f").write_text("1\n")
    git(sub, "commit", "-q", "-am", "s1")  # upstream moves on; the user's clone never sees it
    s1 = git(sub, "rev-parse", "HEAD")
    shas = []
    for i, (val, gitlink) in enumerate([("ok", s0), ("ok", s0), ("ok", s0), ("ok", s1),
                                        ("bad", s0), ("bad", s0)]):
        (repo / "val").write_text(f"{val}\n")
        (repo / "n").write_text(f"{i}\n")
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{gitlink},lib")
        git(repo, "add", "val", "n")
        git(repo, "commit", "-q", "-m", f"step {i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--no-build", "--check", "grep -q ok val", env=env)
    assert r.returncode == 0, r.stderr
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    skipped = [s for s in data["steps"] if s["commit"] == shas[3]]
    assert skipped and skipped[0]["verdict"] == "skip"
    assert "never fetches" in skipped[0]["reason"]
    assert [c["hash"] for c in data["candidates"]] == shas[3:5]
    # s1 is reachable over file:// from its origin, yet nothing fetched it.
    clone = repo / ".git" / "modules" / "lib"
    assert subprocess.run(["git", "-C", str(clone), "cat-file", "-e", s1]).returncode != 0


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "user.name=tk",
                           "-c", "user.email=t@tk.invalid", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def _history(repo: Path, culprit: int, commits: int = 6) -> list[str]:
    """Commits changing ``val`` (ok until ``culprit``, bad from it on) and ``n``; the first
    one takes what the repository holds already."""
    _git(repo, "add", "-A")
    shas = []
    for i in range(commits):
        (repo / "val").write_text("bad\n" if i >= culprit else "ok\n")
        (repo / "n").write_text(f"{i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"step {i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    return shas


def test_submodules_never_initialised_are_left_alone_and_said(tk, tmp_path, env):
    """apache/tvm's layout: tvm-ffi initialised (its own dlpack not), cutlass and
    OpenCL-Headers never: like git bisect, the steps leave those as the checkout has them."""
    ffi, repo = tmp_path / "tvm-ffi", tmp_path / "tvm"
    for root in (ffi, repo):
        root.mkdir()
        _git(root, "init", "-q", "-b", "main")
    (ffi / "c_api.h").write_text("// ffi\n")
    (ffi / ".gitmodules").write_text('[submodule "3rdparty/dlpack"]\n\tpath = 3rdparty/dlpack\n'
                                     "\turl = https://github.com/dmlc/dlpack\n")
    (ffi / "3rdparty" / "dlpack").mkdir(parents=True)  # as a clone leaves it: empty
    _git(ffi, "update-index", "--add", "--cacheinfo", f"160000,{'d' * 40},3rdparty/dlpack")
    _git(ffi, "add", "-A")
    _git(ffi, "commit", "-q", "-m", "ffi")
    _git(repo, "submodule", "add", "-q", str(ffi), "3rdparty/tvm-ffi")  # not --recursive
    optional = {"3rdparty/cutlass": "https://github.com/NVIDIA/cutlass",
                "3rdparty/OpenCL-Headers": "https://github.com/KhronosGroup/OpenCL-Headers"}
    with (repo / ".gitmodules").open("a") as f:
        for path, url in optional.items():
            f.write(f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url}\n')
    for i, path in enumerate(optional):
        (repo / path).mkdir()
        _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{str(i + 1) * 40},{path}")
    shas = _history(repo, culprit=4)
    config = (repo / ".git" / "config").read_bytes()
    before = checkout_fingerprint(repo)

    check = "test -f 3rdparty/tvm-ffi/c_api.h && python -c \"open('val').read() == 'ok\\n' or exit(1)\""
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--no-build", "--check", check, env=env)
    assert r.returncode == 0, r.stderr
    left = "3rdparty/OpenCL-Headers, 3rdparty/cutlass, 3rdparty/tvm-ffi/3rdparty/dlpack"
    assert f"never initialised in your checkout, left so at every commit (as git bisect does; " \
           f"tk never fetches): {left}" in r.stdout
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert f"First bad commit: {shas[4][:12]}" in r.stdout
    assert f"- Submodules never initialised in your checkout, left so at every commit: {left}" \
        in r.stdout
    data = json.loads(tk("bisect", "report", "--json", "--source", str(repo), env=env).stdout)
    assert data["confirmed"] is True and data["submodules_left"] == left.split(", ")
    worktree = Path(state_file(env).parent, "worktree")
    assert (worktree / "3rdparty" / "tvm-ffi" / "c_api.h").is_file()
    for path in [*optional, "3rdparty/tvm-ffi/3rdparty/dlpack"]:
        assert not any((worktree / path).iterdir())  # as in the user's checkout: empty
    assert (repo / ".git" / "config").read_bytes() == config  # nothing recorded there
    assert checkout_fingerprint(repo) == before


def test_gitmodules_entries_committed_as_plain_files_are_no_submodules(tk, tmp_path, env):
    """A tree that vendored its 3rdparty content as files but kept .gitmodules."""
    repo = tmp_path / "repo"
    (repo / "3rdparty" / "dlpack").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitmodules").write_text('[submodule "3rdparty/dlpack"]\n\tpath = 3rdparty/dlpack\n'
                                      "\turl = https://github.com/dmlc/dlpack\n")
    (repo / "3rdparty" / "dlpack" / "dlpack.h").write_text("// vendored\n")
    shas = _history(repo, culprit=2)
    r = tk("bisect", "start", "--source", str(repo), "--good", shas[0], "--bad", "HEAD",
           "--no-build", "--check", "test -f 3rdparty/dlpack/dlpack.h && grep -q ok val",
           env=env)
    assert r.returncode == 0, r.stderr
    assert "never initialised" not in r.stdout
    r = tk("bisect", "run", "--source", str(repo), env=env)
    assert r.returncode == 0, r.stderr
    assert f"First bad commit: {shas[2][:12]}" in r.stdout and "Submodules" not in r.stdout


def _commit(repo: Path, name: str) -> str:
    (repo / f"{name}.txt").write_text(name)
    for args in (["add", f"{name}.txt"], ["-c", "user.name=a", "-c", "user.email=a@b", "commit",
                                         "-qm", name]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_range_is_the_first_parent_line_else_the_ancestry_path(tmp_path):
    """good..bad from one git process when good is on bad's first-parent line; a good end on
    a merged branch gets the commits between the two through the merge; a good end that is
    no ancestor, or the bad end itself, is the user's mistake."""
    from toolkit.bisect.worktree import commit_range, open_repo
    from toolkit.errors import UserError

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    good = _commit(repo, "good")
    main1 = _commit(repo, "main1")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "side", good], check=True)
    side1, side2 = _commit(repo, "side1"), _commit(repo, "side2")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b",
                    "merge", "-q", "--no-ff", "-m", "merge", "side"], check=True)
    merge = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                           capture_output=True, text=True).stdout.strip()
    r = open_repo(repo)
    assert commit_range(r, good, merge) == [good, main1, merge]
    assert commit_range(r, side1, merge) == [side1, side2, merge]
    with pytest.raises(UserError, match="not an ancestor"):
        commit_range(r, main1, side2)
    with pytest.raises(UserError, match="same commit"):
        commit_range(r, merge, merge)


def test_git_dirs_read_without_git_are_gits_own(tmp_path):
    """A main working tree's .git directory is its git dir and common dir, as git says; a
    linked worktree's (a .git file) are asked of git."""
    from toolkit.bisect.worktree import Repo

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    _commit(repo, "one")
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(linked)],
                   check=True)
    for top in (repo, linked):
        def ask(flag: str, top: Path = top) -> str:
            return str(Path(top, subprocess.run(["git", "-C", str(top), "rev-parse", flag],
                                                check=True, capture_output=True,
                                                text=True).stdout.strip()).resolve())
        r = Repo(top)
        assert str(Path(r.git_dir).resolve()) == ask("--git-dir")
        assert str(Path(r.common_dir).resolve()) == ask("--git-common-dir")
    assert Repo(linked).git_dir != Repo(linked).common_dir
