"""TVM's optional libraries (toolkit/explain/optional_libs.py): a symbol or function of a
library TVM links only with its USE_X option is named with that option and its history.

Samples are under tests/fixtures/explain/ (SOURCES.md); the option table is regenerated from a
real git repository with release tags.
"""

from __future__ import annotations

import json
from pathlib import Path

from explain_tables import generate, git, top_said

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent



def test_undefined_symbol_of_an_optional_library_names_its_option() -> None:
    rule, said = top_said((FIXTURES / "optional-library-unlinked.log").read_text())
    assert rule == "optional-library-unlinked"
    assert "cblas_sgemm" in said and "USE_BLAS" in said and "BLAS.cmake" in said
    assert "not linked" in said
    nnpack = "OSError: /opt/t/build/libtvm.so: undefined symbol: nnp_initialize\n"
    rule, said = top_said(nnpack)
    assert rule == "optional-library-unlinked" and "USE_NNPACK" in said and "NNPack.cmake" in said
    # a CUDA function tk knows the first CUDA of: an older CUDA, not an unlinked library
    newer = "OSError: /opt/t/build/libtvm.so: undefined symbol: cuLaunchKernelEx\n"
    assert best(newer).id == "undefined-symbol"
    # a symbol of no optional library keeps the generic answer
    other = "OSError: /opt/t/build/libfoo.so: undefined symbol: foo_bar_baz\n"
    assert "optional-library-unlinked" not in {f.id for f in explain(other)}


def test_missing_function_of_an_optional_library_names_its_option() -> None:
    rule, said = top_said((FIXTURES / "optional-library-function-missing.log").read_text())
    assert rule == "optional-library-function-missing"
    assert "USE_CUTLASS" in said and "v0.8.0" in said
    flashinfer = ("Cannot find PackedFunc flashinfer.batch_decode_run in either Relax VM kernel "
                  "library, or in TVM runtime PackedFunc registry\n")
    rule, said = top_said(flashinfer)
    assert rule == "optional-library-function-missing" and "USE_FLASHINFER" in said
    contrib = ("Cannot find PackedFunc tvm.contrib.cudnn.conv2d.forward in either Relax VM kernel "
               "library, or in TVM runtime PackedFunc registry\n")
    assert "USE_CUDNN" in top_said(contrib)[1]
    # a project's own function is no optional library's: the generic rule answers
    own = ("Cannot find PackedFunc myproj.fused_rope in either Relax VM kernel library, or in "
           "TVM runtime PackedFunc registry\n")
    assert top_said(own)[0] == "vm-function-not-found"



def test_option_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "cmake" / "modules" / "contrib").mkdir(parents=True)
    git(repo, "init", "-q")
    lists = repo / "CMakeLists.txt"
    lists.write_text('tvm_option(USE_CUDA "Build with CUDA" OFF)\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.6.0")
    lists.write_text('tvm_option(USE_CUDA "Build with CUDA" OFF)\n'
                     'tvm_option(USE_FOO "Build with foo" OFF)\n')
    (repo / "cmake" / "modules" / "contrib" / "Foo.cmake").write_text(
        "if(USE_CUDA AND USE_FOO)\n  file(GLOB F src/runtime/contrib/foo/*.cc)\n"
        "  find_library(FOO_LIB foo ${FOO_PATH})\nendif()\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    git(repo, "tag", "v0.7.0")
    git(repo, "branch", "-M", "main")
    options = generate("optional_libs.py", repo)["options"]
    assert options["USE_FOO"] == {"first": "v0.7.0", "last": "main", "default": "OFF",
                                  "doc": "Build with foo", "libraries": ["foo"],
                                  "contrib": ["foo"], "module": "cmake/modules/contrib/Foo.cmake"}
    assert options["USE_CUDA"]["first"] == "v0.6.0" and options["USE_CUDA"]["libraries"] == []
    # the shipped table holds what apache/tvm's CMake says of NNPACK
    shipped = json.loads((REPO / "toolkit" / "data" / "explain" / "optional_libs.json").read_text())
    assert "nnpack" in shipped["options"]["USE_NNPACK"]["libraries"]

