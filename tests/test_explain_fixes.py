"""tk explain names a fix whose commit message quotes the log's error (the fix history)."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

from test_explain_history import git

from toolkit.explain import explain
from toolkit.explain.fixes import index
from toolkit.explain.history import DATA

GENERATOR = Path(__file__).parent.parent / "scripts" / "explain_fixes.py"
# MLIR 16's Presburger coefficients, as a build of TVM v0.13 against it printed the error
MLIR16 = ("/src/tvm/src/arith/presburger_set.cc:57:10: error: no matching function for call "
          "to 'tvm::IntImm::IntImm(tvm::runtime::DataType, mlir::presburger::MPInt&)'\n")


def fixed(log: str) -> list:
    return [f for f in explain(log) if f.origin == "fix history"]


def test_a_compile_error_a_fix_quotes_names_the_fix_and_its_first_release():
    [f] = fixed(MLIR16)
    assert f.groups["ref"] == "#15638" and f.groups["first"] == "v0.14.0"
    assert "apache/tvm#15638" in f.cause and "MLIR" in f.cause
    assert "v0.14.0 or newer" in f.fix and "does not say whether its build has the fix" in f.cause
    # the error site and the rules still answer beside it; the fix does not hide them
    assert f.rank < max(g.rank for g in explain(MLIR16))


def test_a_log_whose_tvm_has_the_fix_is_not_answered_by_it():
    assert not fixed("pip list: apache-tvm==0.14.0\n" + MLIR16)
    older = fixed("pip list: apache-tvm==0.13.0\n" + MLIR16)
    assert older and "The TVM in this log is v0.13.0" in older[0].cause


def test_a_change_of_ci_or_tests_only_is_no_fix_of_the_tvm_in_use():
    # apache/tvm#9415 met TVM's own Python check in a test script that ran Python 2
    [f] = fixed("Exception: The minimal Python requirement is Python 3.6\n")
    assert f.title == "A change in apache/tvm's history met this error"
    assert "python3" in f.cause and "does not change this" in f.fix and "newer" not in f.cause


def test_a_generic_message_a_fix_also_quotes_names_no_fix():
    # Python's and TVM's own wording, quoted by fixes about other names
    for log in ("AttributeError: module 'tvm' has no attribute 'context'\n",
                "ValueError: Cannot find global function tvm.relay.build_module._BuildModule\n",
                "ImportError: cannot import name 'relay' from 'tvm' (/x/tvm/__init__.py)\n",
                "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"):
        assert not fixed(log), log


def test_a_quote_that_goes_on_otherwise_is_another_failure():
    # a fix quotes this check with kDLFloat; the log's differs after the shared words
    log = "TVMError: Check failed: type_code_ == kTVMObjectHandle (0 vs. 8) : expected Object\n"
    assert all("type_code_" not in f.groups.get("ref", "") for f in fixed(log))
    assert not fixed(log)


def test_shipped_fixes_are_fixes_with_their_quotes_and_no_code():
    rows = gzip.open(DATA / "fixes.txt.gz", "rt").read().splitlines()
    assert len(rows) > 100 and all(len(r.split("\t")) == 10 for r in rows)
    fixes = index().fixes
    assert {f.repo for f in fixes} == {"apache/tvm", "apache/tvm-ffi", "tile-ai/tilelang",
                                       "mlc-ai/mlc-llm"}
    assert all(f.rare and f.quote == f.quote.lower() for f in fixes)
    # (a line of code is what failed, not what it printed: "raise ValueError(...)")
    assert not [f for f in fixes if re.match(r"(?:assert not |raise \w+\(|i?check\()", f.quote)]
    # a fix reverted later is not one: "[ARITH] Fix InternalError: Check failed: (eval_vec_)"
    assert not [f for f in fixes if f.ref == "#18536"]


def test_generator_keeps_quoted_fixes_with_their_first_release(tmp_path: Path):
    root = tmp_path / "tvm"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")

    def commit(message: str, path: str = "src/f.cc") -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(message)
        git(root, "add", path)
        git(root, "commit", "-q", "-m", message)

    commit("[Runtime] Add the frobnicator (#1)")
    commit("[Fix] Link tvm_rpc with libtvm_runtime_extra (#2)\n\nThe RPC server missed the "
           "contrib modules, which moved to their own library in the split of the runtime.\n\n"
           "Without the library a tuning session on the server fails with this error:\n```\n"
           "    AttributeError: Unable to find function\n"
           "    tvm.contrib.random.random_fill_for_measure on the remote RPC server\n```\n")
    git(root, "tag", "v0.2.0")
    commit("[Fix] Fix TensorIntrin frob_4x4_sdot is not registered (#3)")
    commit("[TIR] Fix LowerFrob check failed frob_info_.size() == new_size (#6)\n\nHi "
           "Reviewers, this tries to fix an issue; suggestions are welcome if you have time.\n\n"
           "### Root Cause:\nThe recovery of each frob context assumed its vector kept its size."
           "\n\n### Solution:\nResize the vector back when a context ends.\n")
    commit('Revert "[Fix] Fix TensorIntrin frob_4x4_sdot is not registered" (#4)')
    commit("[CI] Fix the frob tests (#7)\n\nThey ran python 2:\nException: The minimal Python "
           "requirement is Python 3.6\n", "tests/scripts/task_frob.sh")
    commit("[Docs] Say how to build (#5)\n\nerror: this quoted error belongs to no repair at all\n")
    out = tmp_path / "fixes.txt.gz"
    run = subprocess.run([sys.executable, str(GENERATOR), f"apache/tvm={root / '.git'}", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    rows = [r.split("\t") for r in gzip.open(out, "rt").read().splitlines()]
    assert list(dict.fromkeys((r[0], r[1], r[2], r[9]) for r in rows)) == [
        ("apache/tvm", "#7", "", "outside"), ("apache/tvm", "#6", "", ""),
        ("apache/tvm", "#2", "v0.2.0", "")]
    # what a description says under its "Root Cause" heading, before its greeting
    about = [r[5] for r in rows if r[1] == "#6"][0]
    assert about.startswith("The recovery of each frob context")
    assert about.endswith("The fix: Resize the vector back when a context ends.")
    # the message wrapped over two lines is read whole, and the prose above it kept
    [whole] = [r for r in rows if r[1] == "#2" and "random_fill_for_measure" in r[6]]
    _, _, _, _, title, summary, quote, rare, lead, scope = whole
    assert title.startswith("[Fix] Link tvm_rpc") and summary.startswith("The RPC server missed")
    assert quote.startswith("attributeerror: unable to find function tvm.contrib.random")
    assert "tvm.contrib.random.random_fill_for_measure" in rare.split("|")
    assert lead == "Without the library a tuning session on the server fails with this error:"
    bad = subprocess.run([sys.executable, str(GENERATOR), f"apache/tvm={tmp_path / 'absent'}"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "GIT_DIR" in bad.stderr
