"""tk fork status and rebase-check, and tk bisect upstream, on a fork made from real apache/tvm
history (tests/fork_helpers.py; TK_TVM_GIT names the history, the tests skip without it);
the rules that classify a change, on diffs written here. The fork's repository stays byte for
byte as it was (refs, index, working tree, config - all of .git) after every command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fork_helpers import (
    BRANCH_POINT,
    MAIN,
    RELEASE_BUMP,
    RELEASE_FIX,
    Edit,
    git,
    make_fork,
    plant,
    snapshot,
    unchanged,
)

from toolkit.fork.classify import parse

CHECK = "python tests/fork/check_api.py"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"TK_CACHE": str(tmp_path / "cache")}


# -- the rules, on diffs written here -------------------------------------------------------

def diff(path: str, added: list[str], removed: int = 0, new: bool = False) -> str:
    head = [f"diff --git a/{path} b/{path}"]
    if new:
        head.append("new file mode 100644")
    head += [f"--- {'/dev/null' if new else 'a/' + path}", f"+++ b/{path}",
             f"@@ -1,{removed} +1,{len(added)} @@"]
    return "\n".join(head + [f"-old {i}" for i in range(removed)] + [f"+{x}" for x in added])


@pytest.mark.parametrize("path, added, removed, new, group, carry", [
    # Both layouts of TVM: tir/transforms and tirx|s_tir/transform, runtime/<dev> and backend.
    ("src/tir/transforms/my_pass.cc", ["int x;"], 0, True, "passes", True),
    ("src/s_tir/transform/my_pass.cc", ["int x;"], 0, True, "passes", True),
    ("python/tvm/relax/transform/legalize_ops/mine.py", ["x = 1"], 0, True, "ops", False),
    ("src/relax/transform/fuse_ops.cc", ["int y;"], 1, False, "passes", False),
    ("src/relax/transform/fuse_ops.cc", ["int y;"], 0, False, "passes", False),
    ("include/tvm/relax/transform.h", ["TVM_DLL Pass Mine();"], 0, False, "passes", True),
    ("src/runtime/mydev/mydev_device_api.cc", ["int z;"], 0, True, "runtime", True),
    ("src/backend/mydev/runtime/mydev_device_api.cc", ["int z;"], 0, True, "runtime", True),
    ("src/backend/mydev/codegen/codegen_mydev.cc", ["int z;"], 0, True, "codegen", True),
    ("include/tvm/runtime/device_api.h", ["  kDLMyDev = 20,"], 0, False, "runtime", False),
    ("include/tvm/relax/expr.h", ["  bool pinned;"], 0, False, "ir", False),
    ("src/arith/analyzer.cc", ["int a;"], 0, False, "core", False),
    ("python/tvm/relax/transform/__init__.py", ["from .mine import Mine"], 0, False,
     "passes", True),
    ("python/tvm/contrib/myfork/fuse.py",
     ["@tvm.transform.module_pass(opt_level=0)", "class Fuse:", "    pass"], 0, True,
     "passes", True),
    ("src/contrib/myfork/target.cc", ['TVM_REGISTER_TARGET_KIND("mine", kDLExtDev);'], 0, True,
     "codegen", True),
    ("CMakeLists.txt", ["include(cmake/modules/MyDev.cmake)"], 0, False, "build", True),
    ("CMakeLists.txt", ["set(X ON)"], 1, False, "build", False),
    ("tests/python/relax/test_mine.py", ["def test(): pass"], 0, True, "tests", True),
    ("docs/mine.rst", ["Mine"], 0, True, "other", None),
])
def test_a_change_is_classified_by_its_place_and_what_it_adds(path, added, removed, new,
                                                               group, carry):
    [change] = parse(diff(path, added, removed, new))
    assert (change.group, change.carry) == (group, carry), change.why
    assert change.why or carry is None


def test_a_diff_of_several_files_is_read_file_by_file():
    text = "\n".join([diff("src/relax/transform/a.cc", ["+++ a line of C++"], new=True),
                      diff("include/tvm/ir/expr.h", ["  int pinned;"], removed=1)])
    a, b = parse(text)
    assert (a.path, a.change, a.added) == ("src/relax/transform/a.cc", "added",
                                           ["+++ a line of C++"])
    assert (b.path, b.change, b.removed, b.carry) == ("include/tvm/ir/expr.h", "modified", 1, False)


# -- a real fork ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def release_fork(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The fork on the v0.26.0 release (its own two commits come along)."""
    path = tmp_path_factory.mktemp("release") / "tvm"
    return path, make_fork(path)


def test_status_classifies_each_change_and_says_what_can_move(tk, release_fork, env):
    repo, shas = release_fork
    before = snapshot(repo)
    r = tk("fork", "status", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["upstream"] == {"ref": "upstream/main", "hash": MAIN,
                                "subject": data["upstream"]["subject"]}
    assert data["merge_base"]["hash"] == BRANCH_POINT
    assert (data["behind"], data["ahead"]) == (35, 6)
    kinds = {c["hash"]: c["kind"] for c in data["commits"]}
    assert kinds == {RELEASE_BUMP: None, RELEASE_FIX: None, shas["python_pass"]: "pass",
                     shas["cpp_pass"]: "pass", shas["target"]: "target", shas["ir_node"]: None}
    why = {c["hash"]: c["kind_why"] for c in data["commits"]}
    assert why[shas["ir_node"]].startswith("include/tvm/ir/expr.h: changes the IR itself")
    files = {f["path"]: (g["group"], f["change"], f["carry"])
             for g in data["groups"] for f in g["files"]}
    assert files["python/tvm/relax/transform/fork_fold_scale.py"] == ("passes", "added", True)
    assert files["python/tvm/relax/transform/__init__.py"] == ("passes", "modified", True)
    assert files["src/relax/transform/fork_tag_calls.cc"] == ("passes", "added", True)
    assert files["include/tvm/relax/transform.h"] == ("passes", "modified", True)
    assert files["src/backend/forkdev/codegen/codegen_forkdev.cc"] == ("codegen", "added", True)
    assert files["src/backend/forkdev/runtime/forkdev_device_api.cc"] == (
        "runtime", "added", True)
    assert files["include/tvm/ir/expr.h"] == ("ir", "modified", False)
    assert files["web/package.json"] == ("other", "modified", None)
    groups = {g["group"]: g for g in data["groups"]}
    assert groups["passes"]["carry"] is True and groups["passes"]["kind"] == "pass"
    assert groups["ir"]["carry"] is False
    text = tk("fork", "status", cwd=repo, env=env).stdout
    assert "35 upstream commits behind, 6 commits of its own" in text
    assert f"tk fork extract {shas['target'][:10]} --kind target" in text
    unchanged(repo, before)


def test_rebase_check_onto_a_newer_upstream_reports_the_real_conflicts(tk, release_fork, env):
    repo, shas = release_fork
    before = snapshot(repo)
    r = tk("fork", "rebase-check", "--onto", "upstream/main", "--json", cwd=repo, env=env)
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    status = {p["patch"]: (p["status"], p["files"]) for p in data["patches"]}
    # The release's version bump meets main's own bumps; its fix is main's already.
    assert status[RELEASE_BUMP] == ("conflict", ["web/package-lock.json", "web/package.json"])
    assert status[RELEASE_FIX] == ("empty", [])
    for name in ("python_pass", "cpp_pass", "target", "ir_node"):
        assert status[shas[name]] == ("applies", []), name
    assert data["commit"] is None and data["conflicts"] == 1
    text = tk("fork", "rebase-check", "--onto", "upstream/main", cwd=repo, env=env).stdout
    assert "conflict in web/package-lock.json, web/package.json" in text
    assert "empty (upstream has its change: dropped)" in text
    unchanged(repo, before)
    worktrees = git(repo, "worktree", "list").splitlines()
    assert len(worktrees) == 1


@pytest.mark.parametrize("args, message", [
    (["fork", "status", "--upstream", "no-such-ref"], "--upstream 'no-such-ref' is not a commit"),
    (["fork", "rebase-check", "--onto", "nope"], "--onto 'nope' is not a commit"),
    (["fork", "rebase-check", "--onto", "upstream/main", "--bogus"], "No such option '--bogus'"),
    (["fork", "rebase-check"], "Missing option '--onto'"),
    (["fork", "status", "--fork", "nope"], "--fork 'nope' is not a commit"),
    (["bisect", "upstream", "--onto", "nope", "--check", "true"], "--onto 'nope' is not a commit"),
    (["bisect", "upstream", "--onto", "upstream/main"], "missing check"),
    (["fork", "extract", "HEAD", "--kind", "pass"], "cannot move out of tree: "
                                                    "include/tvm/ir/expr.h: changes the IR itself"),
    (["fork", "extract", "HEAD~1", "--kind", "pass"], "is a target change"),
    (["fork", "extract", BRANCH_POINT, "--kind", "pass"], "is not one of the fork's own commits"),
    (["fork", "extract", "HEAD~3", "--kind", "pass", "--name", "tvm"], "would shadow a package"),
])
def test_a_mistake_is_one_line_and_exit_2_and_changes_nothing(tk, release_fork, env, tmp_path,
                                                              args, message):
    repo, _ = release_fork
    before = snapshot(repo)
    out = tmp_path / "out"
    out.mkdir()
    extra = ["--dir", str(out)] if args[:2] == ["fork", "extract"] else []
    r = tk(*args, *extra, cwd=repo, env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not list(out.iterdir())
    unchanged(repo, before)


def test_no_upstream_ref_is_said_with_what_to_give(tk, tmp_path, env):
    repo = tmp_path / "plain"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    r = tk("fork", "status", cwd=repo, env=env)
    assert r.returncode == 2
    assert "has none of upstream/main, upstream/master, apache/main: give --upstream REF" in r.stderr


# -- the upstream bisection -------------------------------------------------------------------

@pytest.fixture(scope="module")
def main_fork(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The fork on main at the branch point: its own commits apply all along main's line."""
    path = tmp_path_factory.mktemp("main") / "tvm"
    return path, make_fork(path, base=BRANCH_POINT)


def test_rebase_check_runs_the_check_on_the_replayed_fork(tk, main_fork, env):
    repo, _ = main_fork
    before = snapshot(repo)
    r = tk("fork", "rebase-check", "--onto", "upstream/main", "--no-build", "--check", CHECK,
           "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert all(p["status"] == "applies" for p in data["patches"]) and data["commit"]
    assert data["step"]["verdict"] == "good" and data["ok"] is True
    # The check is the fork's own (tests/fork/check_api.py): it ran on the replayed tree.
    assert "ok: 1 modules" in data["step"]["output_tail"]
    unchanged(repo, before)


def test_the_users_hooks_stay_out_of_the_replay(tk, main_fork, env, tmp_path):
    """The replay's checkouts and commits are tk's: hooks the user's git config names for
    every repository do not run in tk's repository for the fork (fork.repo.own_repo)."""
    repo, _ = main_fork
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    ran = tmp_path / "hook-ran"
    for name in ("post-checkout", "pre-commit", "post-commit"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
        (hooks / name).chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    r = tk("fork", "rebase-check", "--onto", "upstream/main", "--no-build", "--check", "true",
           "--json", cwd=repo, env={**env, "GIT_CONFIG_GLOBAL": str(config)})
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert all(p["status"] == "applies" for p in data["patches"]) and data["commit"]
    assert not ran.exists(), ran.read_text()


@pytest.mark.slow
def test_bisect_upstream_names_the_planted_commit_with_the_patches_at_every_probe(
        tk, main_fork, env):
    repo, shas = main_fork
    init = "python/tvm/relax/transform/__init__.py"
    last = "from . import legalize_ops\n"
    # An upstream commit that appends where the fork appends (its patch conflicts), another
    # that takes it back, then the one that breaks the fork: it renames a name the fork's pass
    # imports.
    planted, tip = plant(repo, [
        Edit(15, init, last, last + "from .upstream_pass import UpstreamPass\n",
             "[Relax] Register UpstreamPass (planted)\n"),
        Edit(19, init, last + "from .upstream_pass import UpstreamPass\n", last,
             "Revert: Register UpstreamPass (planted)\n"),
        Edit(24, "python/tvm/relax/expr_functor.py", "mutator = derived_object",
             "expr_mutator = derived_object",
             "[Relax] Rename the mutator decorator to expr_mutator (planted)\n"),
    ])
    git(repo, "update-ref", "refs/remotes/upstream/planted", tip)
    before = snapshot(repo)
    r = tk("bisect", "upstream", "--onto", "upstream/planted", "--no-build", "--check", CHECK,
           "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(r.stdout)
    assert data["first_bad"]["hash"] == planted[2]
    assert data["confirmed"] is True
    assert data["range"]["good"]["hash"] == BRANCH_POINT and data["range"]["commits"] == 38
    assert [p["hash"] for p in data["stack"]["patches"]] == [
        shas[n] for n in ("python_pass", "cpp_pass", "target", "ir_node")]
    # Where the fork's patches do not apply, the probe is skipped with the patch and the file.
    skipped = [s for s in data["steps"] if s["verdict"] == "skip"]
    assert skipped, data["steps"]
    assert all("the patch stack does not apply" in s["reason"] and shas["python_pass"][:10]
               in s["reason"] and init in s["reason"] for s in skipped)
    # Every other probe checked the upstream commit with the fork's four commits on top.
    own = Path(r.stderr.split("--source ")[1].split()[0])
    stacks = json.loads(next(Path(env["TK_CACHE"], "bisect-stacks").glob("*.json")).read_text())
    for step in data["steps"]:
        commit = stacks[step["commit"]]["commit"]
        if step["verdict"] == "skip":
            assert commit is None
            continue
        subjects = git(own, "log", "--format=%s", "-4", commit).splitlines()
        assert subjects == [git(repo, "show", "-s", "--format=%s", shas[n]) for n in
                            ("ir_node", "target", "cpp_pass", "python_pass")]
        assert git(own, "rev-parse", f"{commit}~4") == step["commit"]
    assert data["reproduce"].startswith(f"tk bisect upstream --source {repo} --fork ")
    unchanged(repo, before)
    # Run again: every verdict is known (the commit each stack made is remembered too).
    r = tk("bisect", "upstream", "--onto", "upstream/planted", "--no-build", "--check", CHECK,
           "--restart", "--json", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    again = json.loads(r.stdout)
    assert again["first_bad"]["hash"] == planted[2]
    tested = [s for s in again["steps"] if s["verdict"] != "skip"]
    assert tested and all(s["known"] for s in tested)
    assert tk("bisect", "upstream", "--reset", cwd=repo, env=env).returncode == 0
    unchanged(repo, before)
