"""The build tools' own failures (toolkit/explain/buildtools.py): a compiler crash, a linker
flag, a CMake file with a literal escape, a missing configuration key, a moved LLVM header.

Samples are under tests/fixtures/explain/ (SOURCES.md says how each was made); the live tests
feed what GNU ld and CMake print here, and the LLVM header table is regenerated from a real git
repository with release tags.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from explain_tables import generate, release, top_said

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent


def _said(text: str, rule: str) -> str:
    found = [f for f in explain(text) if f.id == rule]
    assert found, f"{rule} does not fire"
    return f"{found[0].title} {found[0].cause} {found[0].fix}"


def test_compiler_crash_is_a_compiler_bug_for_gcc_and_msvc() -> None:
    gcc = _said((FIXTURES / "compiler-internal-error.log").read_text(), "compiler-internal-error")
    assert "internal compiler error" in gcc and "compiler bug" in gcc
    assert "src/relax/transform/fold_constant.cc" in gcc and "TVM's own" in gcc
    msvc = _said((FIXTURES / "compiler-internal-error--msvc.log").read_text(),
                 "compiler-internal-error")
    assert "MSVC" in msvc and "fold_constant.cc" in msvc and "#pragma optimize" in msvc
    older = ("C:\\tvm\\src\\arith\\x.cc(7) : fatal error C1001: An internal error has "
             "occurred in the compiler.\n")
    assert "MSVC" in _said(older, "compiler-internal-error")
    # a user's file: not said to be TVM's
    user = "app/main.cpp:3:1: internal compiler error: in tsubst, at cp/pt.cc:1\n"
    assert "TVM's own" not in _said(user, "compiler-internal-error")
    # a compiler the kernel killed (out of memory) did not crash on its own
    killed = "c++: internal compiler error: Killed (program cc1plus)\n"
    assert best(killed).id == "compiler-killed"
    assert "compiler-internal-error" not in {f.id for f in explain(killed)}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc and GNU ld")
def test_live_linker_rejects_a_flag(tmp_path: Path) -> None:
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    run = subprocess.run(["gcc", "main.c", "-o", "app", "-Wl,--tk-flag-nobody-takes"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode != 0
    finding = best(run.stderr)
    assert finding is not None and finding.id == "linker-unknown-flag"
    assert "--tk-flag-nobody-takes" in finding.cause and finding.fix.startswith("remove ")
    # Apple's and lld's wordings name the flag too
    for line in ("ld: unknown option: -tk_flag\n", "ld.lld: error: unknown argument: -tk-flag\n",
                 "Unknown linker flag `-tk_flag`\n"):
        assert "-tk" in _said(line, "linker-unknown-flag")
    # GNU ld given a single-dash flag it cannot tell from its own (-n...): "unable to disambiguate"
    run = subprocess.run(["gcc", "main.c", "-o", "app", "-Wl,-nothing_tk"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert "-nothing_tk" in best(run.stderr).cause
    # the compiler driver's complaint about -fuse-ld stays the alternative linker's
    gcc = "g++: error: unrecognized command-line option '-fuse-ld=lld'\n"
    assert "linker-unknown-flag" not in {f.id for f in explain(gcc)}


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_live_cmake_file_with_a_literal_newline(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(demo NONE)\ninclude(cfg/options.cmake)\n")
    (tmp_path / "cfg").mkdir()
    # what bash's echo writes for "...\n...": the two characters, not a line break
    (tmp_path / "cfg" / "options.cmake").write_text("set(USE_A ON)\\nset(USE_B OFF)\n")
    run = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                         capture_output=True, text=True)
    assert run.returncode != 0
    finding = best(run.stdout + run.stderr)
    assert finding is not None and finding.id == "cmake-literal-escape"
    assert "cfg/options.cmake:1" in finding.cause and "line break" in finding.cause
    assert "printf" in finding.fix
    # an unquoted argument that is not an escape is left to the generic CMake answer
    plain = ('CMake Error at x.cmake:2:\n  Parse error.  Expected a command name, got unquoted '
             'argument with text\n  "ON".\n')
    assert "cmake-literal-escape" not in {f.id for f in explain(plain)}


def test_missing_config_key_names_the_projects_config() -> None:
    said = _said((FIXTURES / "config-key-missing.log").read_text(), "config-key-missing")
    assert "max_window_size" in said and "mlc-chat-config.json" in said and "MLC-LLM" in said
    other = ("/src/myproj/runtime/loader.cc:88: Check failed: (ok) is false: "
             "Key \"eos_id\" not found.\n")
    said = _said(other, "config-key-missing")
    assert "eos_id" in said and "MLC-LLM" not in said and "configuration file" in said
    # the same words in one of TVM's own files are TVM's check, not a project's config
    tvm = ("/home/u/tvm/src/runtime/vm/executable.cc:88: Check failed: (ok) is false: "
           "Key \"eos_id\" not found.\n")
    assert "config-key-missing" not in {f.id for f in explain(tvm)}


def test_moved_llvm_header_names_the_llvm_and_the_tvm_release() -> None:
    said = _said((FIXTURES / "llvm-header-moved.log").read_text(), "llvm-header-moved")
    assert "llvm/TargetParser/Host.h" in said and "LLVM 18" in said and "v0.16.0" in said
    triple = ("src/target/llvm/codegen_llvm.cc:30:10: fatal error: llvm/ADT/Triple.h: No such "
              "file or directory\n")
    said = _said(triple, "llvm-header-moved")
    assert "LLVM 17" in said and "llvm/TargetParser/Triple.h" in said and "v0.12.0" in said
    # a header TVM includes only below an LLVM major (one that LLVM removed), no other path
    removed = ("src/target/llvm/codegen_amdgpu.cc:45:10: fatal error: "
               "'llvm/Transforms/IPO/PassManagerBuilder.h' file not found\n")
    said = _said(removed, "llvm-header-moved")
    assert "older than 17" in said and "v0.12.0" in said and "None" not in said
    # an LLVM header no TVM release chooses by version stays a plain missing header
    plain = "x.cc:3:10: fatal error: llvm/IR/Module.h: No such file or directory\n"
    assert {f.id for f in explain(plain)} & {"llvm-header-moved"} == set()


def test_llvm_header_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "src" / "target" / "llvm").mkdir(parents=True)
    source = repo / "src" / "target" / "llvm" / "codegen.cc"
    source.write_text("#include <llvm/Old/Thing.h>\n")
    release(repo, "v0.8.0")
    source.write_text("#if TVM_LLVM_VERSION >= 190\n#include <llvm/New/Thing.h>\n#else\n"
                      "#include <llvm/Old/Thing.h>\n#endif\n"
                      "#if TVM_LLVM_VERSION < 170\n#include <llvm/Gone/Legacy.h>\n#endif\n"
                      "#if TVM_LLVM_VERSION >= 200\n#include <llvm/A.h>\n#else\n"
                      "#if TVM_LLVM_VERSION >= 140\n#include <llvm/Range/Only.h>\n#endif\n"
                      "#endif\n")
    release(repo, "v0.9.0", "v0.10.0")
    headers = generate("llvm_headers.py", repo)["headers"]
    assert headers["llvm/Old/Thing.h"] == {"kind": "old", "llvm": 19, "other": "llvm/New/Thing.h",
                                          "since": "v0.9.0", "file": "src/target/llvm/codegen.cc"}
    assert headers["llvm/New/Thing.h"]["kind"] == "new"
    # guarded alone: LLVM 17 and newer do not have it; no other path
    assert headers["llvm/Gone/Legacy.h"] == {"kind": "old", "llvm": 17, "other": None,
                                            "since": "v0.9.0",
                                            "file": "src/target/llvm/codegen.cc"}
    # inside another guard's #else it holds for a range of LLVMs only: not recorded
    assert "llvm/Range/Only.h" not in headers
    # the shipped table holds what the apache/tvm sources say for the header of LLVM 17
    shipped = json.loads((REPO / "toolkit" / "data" / "explain" / "llvm_headers.json").read_text())
    assert shipped["headers"]["llvm/ADT/Triple.h"]["llvm"] == 17


def test_cython_syntax_error_in_tvm_sources_names_an_old_cython() -> None:
    said = _said((FIXTURES / "cython-too-old.log").read_text(), "cython-too-old")
    assert "packed_func.pxi" in said and "too old" in said and "upgrade Cython" in said
    assert "/home/dev/.venvs/old/lib/python3.6/site-packages" in said
    # the user's own .pyx is not TVM's: no claim about TVM's sources
    own = "mylib/fast.pyx:3:10: Syntax error in C variable declaration\n"
    assert "cython-too-old" not in {f.id for f in explain(own)}


def test_msvc_stl_static_assert_names_the_macro_to_define() -> None:
    said = _said((FIXTURES / "msvc-stl-acknowledge-macro.log").read_text(),
                 "msvc-stl-acknowledge-macro")
    assert "_ENABLE_ATOMIC_ALIGNMENT_FIX" in said and "add_definitions" in said
    two = ("error C2338: ... Please define either (1) _ENABLE_FOO_BAR to acknowledge this, or "
           "(2) _DISABLE_FOO_BAR to silence this message\n")
    said = _said(two, "msvc-stl-acknowledge-macro")
    assert "_ENABLE_FOO_BAR" in said and "_DISABLE_FOO_BAR" in said
    # a static_assert that names no such macro is not this
    plain = "x.cc(3): error C2338: static_assert failed: 'T must be trivially copyable'\n"
    assert "msvc-stl-acknowledge-macro" not in {f.id for f in explain(plain)}


def test_intrinsic_rule_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    rules = repo / "src" / "target" / "llvm" / "intrin_rule_llvm.cc"
    rules.parent.mkdir(parents=True)
    # v0.8's form (a global per backend and op), then the op attribute with two backends
    rules.write_text('TVM_REGISTER_GLOBAL("tvm.intrin.rule.llvm.exp").set_body(f);\n')
    (repo / "src" / "other.cc").write_text('TVM_REGISTER_OP("tir.acos").set_attr<X>("llvm.X", f);\n')
    release(repo, "v0.8.0")
    rules.write_text('TVM_REGISTER_GLOBAL("tvm.intrin.rule.llvm.exp").set_body(f);\n'
                     'TVM_REGISTER_OP("tir.acos")\n    .set_attr<FLowerIntrinsic>(\n'
                     '        "llvm.FLowerIntrinsic", DispatchPureExtern<FloatSuffix>);\n'
                     'TVM_REGISTER_OP("tir.erf").set_attr<FLegalize>("default.FLegalize", g)'
                     '.set_attr<FLowerIntrinsic>("cuda.FLowerIntrinsic", h);\n')
    release(repo, "v0.9.0")
    ops = generate("intrin_rules.py", repo)["ops"]
    path = "src/target/llvm/intrin_rule_llvm.cc"
    assert ops["exp"] == {"llvm": ["v0.8.0", path]}
    assert ops["acos"] == {"llvm": ["v0.9.0", path]}  # other.cc is no intrinsic rule file
    assert ops["erf"] == {"default": ["v0.9.0", path], "cuda": ["v0.9.0", path]}
    # the shipped table holds what apache/tvm says: tir.acos lowered for LLVM from v0.21.0
    shipped = json.loads((REPO / "toolkit" / "data" / "explain" / "intrin_rules.json").read_text())
    assert shipped["ops"]["acos"]["llvm"][0] == "v0.21.0"


def test_llvm_guard_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    code = repo / "src" / "target" / "llvm" / "codegen_nvptx.cc"
    code.parent.mkdir(parents=True)
    code.write_text("llvm::Value* v = builder_->CreateAtomicRMW(op, a, b, order);\n")
    release(repo, "v0.7.0")
    code.write_text("#if TVM_LLVM_VERSION >= 130\n"
                    "return builder_->CreateAtomicRMW(op, a, b, llvm::MaybeAlign(), order);\n"
                    "#else\nreturn builder_->CreateAtomicRMW(op, a, b, order);\n#endif\n"
                    "#if TVM_LLVM_VERSION < 170\nllvm::Optional<int> x;\n#endif\n")
    release(repo, "v0.8.0")
    names = generate("llvm_guards.py", repo)["names"]
    path = "src/target/llvm/codegen_nvptx.cc"
    assert names["CreateAtomicRMW"] == [[13, "v0.8.0", path, "both"]]  # called on both sides
    assert names["MaybeAlign"] == [[13, "v0.8.0", path, "new"]]  # only for LLVM 13 and newer
    assert names["Optional"] == [[17, "v0.8.0", path, "old"]]  # only for LLVM older than 17
    # the shipped table holds what apache/tvm says (git show v0.8.0:src/target/llvm/...)
    shipped = json.loads((REPO / "toolkit" / "data" / "explain" / "llvm_guards.json").read_text())
    assert [13, "v0.8.0", path, "both"] in shipped["names"]["CreateAtomicRMW"]


def test_an_llvm_api_the_sources_call_per_llvm_names_the_llvm_and_the_release() -> None:
    # a call whose arguments changed (MSVC's words, apache/tvm#7576's log)
    rule, said = top_said("error C2660: 'llvm::IRBuilderBase::CreateAtomicRMW': function does "
                          "not take 4 arguments\n")
    assert rule == "llvm-api-changed" and "LLVM 13" in said and "v0.8.0" in said
    # a name the headers lack that TVM uses only for a newer LLVM: an older LLVM's headers or
    # a fork numbered ahead of its API - not "update TVM"
    rule, said = top_said("/tvm/src/target/llvm/codegen_x86_64.cc:144:30: error: "
                          "'llvm::FixedVectorType' has not been declared\n")
    assert rule == "llvm-api-changed" and "LLVM 11" in said and "fork" in said
    assert "update TVM" not in said
    # an LLVM name TVM calls the same way for every LLVM is not this rule's
    assert "llvm-api-changed" not in {f.id for f in explain(
        "x.cc:3:1: error: cannot convert 'llvm::Value*' to 'int'\n")}
