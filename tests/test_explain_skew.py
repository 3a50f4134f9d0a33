"""Round 8's shapes: LLVM's own link dependencies and conda's libstdc++
(toolkit/explain/llvm_link.py), a library linked as an executable (shared_output.py), MLC-LLM
and web-llm builds that do not match (mlc_skew.py), a CLI of another version (cli_options.py)
and params that are not the build's. Samples are under tests/fixtures/explain/."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def said(text: str) -> tuple[str, str]:
    top = best(text)
    assert top is not None
    return top.id, f"{top.title} {top.cause} {top.fix}"


def test_llvm_system_lib_names_its_dev_package_and_llvm() -> None:
    rule, text = said((FIXTURES / "llvm-system-lib-not-found.log").read_text())
    assert rule == "llvm-system-lib-not-found"
    assert "libtinfo-dev" in text and "llvm-config --system-libs" in text
    rule, text = said("/usr/bin/ld: cannot find -lxml2\n")
    assert "libxml2-dev" in text and "LLVM_ENABLE_LIBXML2" in text
    # a library LLVM does not depend on keeps the generic answer
    assert said("/usr/bin/ld: cannot find -lcudnn\n")[0] == "link-library-not-found"


def test_conda_llvm_against_system_libstdcxx_names_conda() -> None:
    rule, text = said((FIXTURES / "conda-llvm-libstdcxx.log").read_text())
    assert rule == "conda-llvm-libstdcxx"
    assert "conda deactivate" in text and "libLLVMCodeGen.a" in text
    one_line = ("/usr/bin/ld: /opt/conda/envs/b/lib/libLLVMSupport.a(Path.cpp.o):Path.cpp:"
                "(.text+0x1): more undefined references to `std::__throw_bad_array_new_length()'"
                " follow\n")
    assert said(one_line)[0] == "conda-llvm-libstdcxx"
    system = "/usr/bin/ld: /usr/lib/llvm-14/lib/libLLVMSupport.a(Path.cpp.o): undefined " \
             "reference to `std::__throw_bad_array_new_length()'\n"
    assert "conda-llvm-libstdcxx" not in {f.id for f in explain(system)}


def test_link_without_shared_names_the_suffix_in_an_export() -> None:
    rule, text = said((FIXTURES / "link-made-executable.log").read_text())
    assert rule == "link-made-executable" and ".so" in text and "v0.7.0" in text
    plain = ("/usr/bin/ld: /usr/lib/x86_64-linux-gnu/crt1.o: in function `_start':\n"
             "(.text+0x24): undefined reference to `main'\n")
    rule, text = said(plain)
    assert rule == "link-made-executable" and "-shared" in text and "export" not in text


def test_mlc_on_a_tvm_without_relax_names_unity() -> None:
    rule, text = said((FIXTURES / "mlc-tvm-without-relax.log").read_text())
    assert rule == "mlc-tvm-without-relax" and "Unity" in text and "mlc-ai-nightly" in text
    plain = "ImportError: cannot import name 'relax' from 'tvm'\n"
    assert "mlc-tvm-without-relax" not in {f.id for f in explain(plain)}


def test_web_runtime_global_names_the_wasm() -> None:
    rule, text = said((FIXTURES / "web-runtime-lacks-global.log").read_text())
    assert rule == "web-runtime-lacks-global" and "wasm" in text and "web-llm" in text
    native = "TVMError: Cannot find global function mlc.foo\n"
    assert best(native).id == "missing-global-function"


def test_vm_version_check_names_the_mismatch_and_where() -> None:
    rule, text = said((FIXTURES / "vm-executable-version-mismatch.log").read_text())
    assert rule == "vm-executable-version-mismatch"
    assert "0.15.dev0" in text and "LoadHeader" in text and "executable.cc" in text
    assert "rebuild" in text


def test_webgpu_without_f16_names_the_f32_variant() -> None:
    rule, text = said((FIXTURES / "webgpu-shader-f16-missing.log").read_text())
    assert rule == "webgpu-shader-f16-missing" and "q4f32" in text


def test_unknown_option_lists_what_this_version_accepts() -> None:
    rule, text = said((FIXTURES / "cli-unknown-option.log").read_text())
    assert rule == "cli-unknown-option"
    assert "--artifact-path" in text and "--model-lib-path" in text and "--help," not in text


def test_param_not_among_inputs_names_the_build_params() -> None:
    rule, text = said((FIXTURES / "graph-param-not-an-input.log").read_text())
    assert rule == "graph-param-not-an-input" and "params" in text and "build" in text


def test_comdat_rejected_by_link_exe_names_lld_link() -> None:
    rule, text = said((FIXTURES / "msvc-link-llvm-comdat.log").read_text())
    assert rule == "msvc-link-llvm-comdat" and "lld-link" in text and "v0.6.0" in text


def test_posix_type_on_msvc_names_msvc_and_the_cstdint_type() -> None:
    rule, text = said((FIXTURES / "msvc-posix-type.log").read_text())
    assert rule == "msvc-posix-type" and "MSVC" in text and "uint16_t" in text
    assert "src/runtime/graph/graph_executor.cc" in text


def test_qcom_symbol_names_the_option_and_release() -> None:
    rule, text = said((FIXTURES / "opencl-qcom-symbol.log").read_text())
    assert rule == "opencl-qcom-symbol"
    assert "USE_OPENCL_EXTN_QCOM" in text and "v0.23.0" in text


def test_partially_initialized_tells_a_cycle_from_a_missing_subpackage() -> None:
    rule, text = said((FIXTURES / "tvm-import-partially-initialized.log").read_text())
    assert rule == "tvm-import-partially-initialized" and "circular" in text
    assert "tvm/relay/base.py" in text and "update TVM" in text
    log = FIXTURES / "tvm-import-partially-initialized--missing-subpackage.log"
    rule, text = said(log.read_text())
    assert rule == "tvm-import-partially-initialized"
    assert "tvm/relax/transform/tuning_api/__init__.py" in text and "wheel" in text
    user = ("ImportError: cannot import name 'a' from partially initialized module 'mypkg.b'\n")
    assert "tvm-import-partially-initialized" not in {f.id for f in explain(user)}


def test_topi_cpp_name_missing_names_pythonpath() -> None:
    rule, text = said((FIXTURES / "topi-cpp-unregistered.log").read_text())
    assert rule == "topi-cpp-unregistered" and "PYTHONPATH" in text and "libtvm_topi" in text
    other = "  File \"x.py\", line 1, in <module>\n    from foo import bar\n" \
            "ImportError: cannot import name 'bar'\n"
    assert "topi-cpp-unregistered" not in {f.id for f in explain(other)}


def test_cuda_not_initialized_names_the_module_and_the_bundled_libraries() -> None:
    rule, text = said((FIXTURES / "cuda-driver-not-initialized.log").read_text())
    assert rule == "cuda-driver-not-initialized"
    assert "cuModuleGetFunction" in text and "cuda_module.cc" in text and "wheel" in text


def test_schedule_error_in_parallel_search_names_metaschedule_and_release() -> None:
    rule, text = said((FIXTURES / "metaschedule-replay-escaped.log").read_text())
    assert rule == "metaschedule-replay-escaped"
    assert "evolutionary search" in text and "v0.24.0" in text


def test_attribute_a_frontend_later_guarded_names_the_framework_and_release() -> None:
    import json

    rule, text = said((FIXTURES / "frontend-attr-dropped.log").read_text())
    assert rule == "frontend-attr-dropped" and "Keras" in text
    shipped = json.loads((FIXTURES.parent.parent.parent / "toolkit" / "data" / "explain" /
                          "frontend_reads.json").read_text())
    fw, _read, since = shipped["guarded"]["node_indices"][0]
    assert fw == "keras" and f"TVM to {shipped['releases'][since]}" in text
    other = "AttributeError: 'Node' object has no attribute 'spelling_mistake'\n"
    assert "frontend-attr-dropped" not in {f.id for f in explain(other)}
