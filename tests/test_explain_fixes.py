"""tk explain names a fix whose commit message quotes the log's error (the fix history)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

from test_explain_history import git

from toolkit.explain import explain
from toolkit.explain.fixes import index, names_in
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


def test_a_title_that_quotes_an_error_after_its_own_words_names_the_fix():
    # apache/tvm#18435 "[FRONTEND][ONNX] Fix operator Transpose: TVMError: PermuteDims ...":
    # the quote starts at the exception's name, so the log's line is most of it
    [f] = fixed("TVMError: PermuteDims expects the number of input axes to equal the ndim of "
                "the input tensor.\n")
    assert f.groups["ref"] == "#18435" and f.groups["by"] == "quote"
    assert f.groups["first"] == "v0.23.0"


def test_a_change_titled_with_the_errors_words_is_a_lead_not_an_answer():
    # tile-ai/tilelang#1175 added tl.infinity for bfloat16; its message quotes no error
    [f] = fixed("error: Cannot decide infinity for type bfloat16\n")
    assert f.groups["by"] == "title" and f.groups["ref"] == "#1175"
    assert "tile-ai/tilelang#1175" in f.cause and "(first in v0.1.7)" in f.cause
    assert "whether it addresses this failure is not known" in f.cause
    assert "if it is this failure, use tile-ai/tilelang v0.1.7 or newer" in f.fix
    # words many titles use (int64, extent) are no lead, and the traceback's answer stays
    key = ("KeyError: IterSplit(IterMark(v1, extent=T.int64(4096)), lower_factor=T.int64(1), "
           "extent=T.int64(4096), scale=T.int64(1))\n")
    assert not fixed(key) and [g.id for g in explain(key)] == ["ir-object-key"]


def test_an_onnx_node_the_importer_cannot_convert_lists_its_converters_changes():
    log = ("Error converting operator CumSum when 'reverse=1': (ptr) is false: The struct_info "
           "is not populated, check if you have normalized the expr\n")
    [f] = [g for g in explain(log) if g.id == "converter-changes"]
    assert f.groups == {"op": "CumSum", "by": "title"} and f.origin == "fix history"
    assert ('apache/tvm#18137 "[Fix][ONNX] Fix CumSum conversion when loading ONNX model" (first '
            'in v0.22.0)') in f.cause
    assert "Which of them, if any, is this failure is not known" in f.cause
    assert "does not say which TVM" in f.cause
    # the remedy is the release that has them all: the newest change's
    newest = re.findall(r"\(first in (v[\d.]+)\)|in no release", f.cause)[-1]
    assert (f"try apache/tvm {newest} or newer" if newest else "built after") in f.fix
    # a TVM that has a change is not told of it; one that has them all is told nothing
    newer = [g for g in explain("pip list: apache-tvm==0.22.0\n" + log)
             if g.id == "converter-changes"]
    assert newer and "#18137" not in newer[0].cause and "#19467" in newer[0].cause
    assert "converter-changes" not in {g.id for g in explain(
        log.replace("CumSum", "NoSuchOperatorX"))}


def test_shipped_fixes_are_fixes_with_their_quotes_and_no_code():
    rows = gzip.open(DATA / "fixes.txt.gz", "rt").read().splitlines()
    assert len(rows) > 100 and all(len(r.split("\t")) == 10 for r in rows)
    fixes = [f for f in index().fixes if f.quote]
    assert {f.repo for f in fixes} == {"apache/tvm", "apache/tvm-ffi", "tile-ai/tilelang",
                                       "mlc-ai/mlc-llm"}
    assert all(f.rare and f.quote == f.quote.lower() for f in fixes)
    # a change kept by its title is matched on a name in code its title has (CamelCase
    # too: CommReduce), or names ONNX
    titled = [f for f in index().fixes if not f.quote]
    assert len(titled) > 1000 and all(f.rare & names_in(f.title) or
                                      "onnx" in f.title.lower() for f in titled)
    assert any("commreduce" in f.rare for f in titled)
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
    commit("[Runtime] Add frob_8x8 kernels for bfloat16 (#8)")
    commit("[ONNX] Fix Frob conversion (#10)", "python/onnx.py")
    commit("[Frontend] Fix operator Frob: TVMError: FrobDims expects as many axes as the rank "
           "(#9)", "python/frob.py")
    out = tmp_path / "fixes.txt.gz"
    run = subprocess.run([sys.executable, str(GENERATOR), f"apache/tvm={root / '.git'}", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    every = [r.split("\t") for r in gzip.open(out, "rt").read().splitlines()]
    rows = [r for r in every if r[6]]
    assert list(dict.fromkeys((r[0], r[1], r[2], r[9]) for r in rows)) == [
        ("apache/tvm", "#9", "", ""), ("apache/tvm", "#7", "", "outside"),
        ("apache/tvm", "#6", "", ""), ("apache/tvm", "#2", "v0.2.0", "")]
    # a title's words after its own: the quote from the exception's name on
    assert "tvmerror: frobdims expects as many axes as the rank" in [r[6] for r in rows]
    # changes with a name in their title, fix or not, by their title's words; not the one
    # reverted, nor a change of CI or docs only, nor a title without a name (#1; #9's is
    # CamelCase, FrobDims) unless it names ONNX (#10: tk lists an ONNX converter's changes)
    titles = {r[1]: r for r in every if not r[6]}
    assert sorted(titles) == ["#10", "#2", "#6", "#8", "#9"]
    assert {"frob_8x8", "kernels", "bfloat16"} <= set(titles["#8"][7].split("|"))
    assert titles["#8"][5] == "" and titles["#2"][5].startswith("The RPC server missed")
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


def test_the_answer_does_not_depend_on_pythons_hash_seed():
    # the word lookups once took the first LOOKUPS of words tied in rarity in set order, so a
    # round-15 log got a fix under some PYTHONHASHSEED values and none under others
    log = next(Path(__file__).parent.glob("fixtures/explain/corpus/c349-*.log"))
    script = ("import sys, json; from toolkit.explain import explain; print(json.dumps("
              "[(f.id, f.groups.get('ref'), f.line) for f in explain(open(sys.argv[1]).read())]))")
    runs = {subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True,
                           text=True, check=True, cwd=Path(__file__).parent.parent,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "4")}
    assert len(runs) == 1, runs


def test_the_changes_to_the_function_that_raises_are_listed_for_a_tvm_that_may_lack_them():
    log = ("InternalError: Check failed: ndim != 0 (0 vs. 0) : Cannot reduce a 0 dim Tensor\n"
           '  File "/src/tvm/include/tvm/topi/reduction.h", line 187, in tvm::topi::CommReduce(\n')
    [f] = [g for g in explain(log) if g.id == "code-changes"]
    assert f.groups == {"function": "CommReduce", "by": "title"} and f.origin == "fix history"
    assert 'apache/tvm#19683 "[Fix] CommReduce could handle 0-dim data" (first in v0.26.0)' \
        in f.cause and "whether" not in f.cause and "is not known" in f.cause
    assert "try apache/tvm v0.26.0 or newer" in f.fix
    # a TVM that has it is not told of it; a message five functions raise names none of them
    assert "code-changes" not in {g.id for g in explain("pip list: apache-tvm==0.26.0\n" + log)}
    assert "code-changes" not in {g.id for g in explain(log.splitlines()[0])}
    # a function many files define (VisitExpr_) is not what a title naming it is about
    assert "code-changes" not in {g.id for g in explain(
        "tvm.error.InternalError: CodeGenVM cannot handle this intrinsic now:\n")}


def test_an_error_raised_in_an_onnx_converter_lists_that_converters_changes():
    [f] = [g for g in explain("ValueError: Dynamic Split not yet supported\n")
           if g.id == "converter-changes"]
    assert f.groups["op"] == "Split" and f.line == 1
    assert "#20091" in f.cause and "keep_params_in_input" in f.cause


def test_a_title_naming_what_a_quoted_fix_does_not_stands_beside_it():
    log = "tvm.error.InternalError: CodeGenVM cannot handle this intrinsic now:\nOp(relax.nn.dropout)\n"
    found = {f.groups["ref"]: f.groups["by"] for f in explain(log) if f.id == "fixed-upstream"}
    # the quote is isnan's fix (its message's common part); the title names nn.dropout
    assert found == {"#19492": "quote", "#19841": "title"}
    # a name TVM's name supply numbered (gpu_2d_continuous_cumsum1) is the title's name
    numbered = ("InternalError: Check failed: undefined.size() == 0 (1 vs. 0) : In PrimFunc "
                "gpu_2d_continuous_cumsum1 variables [ceil_log2] are used, but are not passed in "
                "as API arguments\n")
    assert "#18957" in {f.groups["ref"] for f in explain(numbered) if f.id == "fixed-upstream"}
    # two names that are one (func_name, funcname) or the same end of two other dotted names
    # (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor) are no lead
    assert not [f for f in explain("ptxas error   : Feature 'cp.async.bulk.tensor' requires "
                                   ".target sm_90 or higher\n") if f.origin == "fix history"]


def test_a_crash_is_led_to_a_fix_of_a_crash_in_what_the_log_names():
    log = ("[2] tvm.relax.frontend.torch.from_exported_program ...\n"
           "!!!!!!! TVM FFI encountered a Segfault !!!!!!!\nSegmentation fault (core dumped)\n")
    [f] = [f for f in explain(log) if f.origin == "fix history"]
    assert f.groups["ref"] == "#19488" and f.groups["by"] == "title"
    # not without a crash, nor for a TVM that has the fix
    assert not [f for f in explain(log.replace("Segfault", "error").replace(
        "Segmentation fault (core dumped)", "")) if f.groups.get("ref") == "#19488"]
    assert not [f for f in explain("pip list: apache-tvm==0.25.0\n" + log)
                if f.groups.get("ref") == "#19488"]
