"""A Gradle or Maven build that cannot find TVM's Java/Android libraries
(toolkit/explain/android_artifacts.py). The sample is under tests/fixtures/explain/."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_unresolved_tvm_artifact_names_the_step_that_builds_it() -> None:
    top = best((FIXTURES / "tvm-java-artifact-unbuilt.log").read_text())
    assert top is not None and top.id == "tvm-java-artifact-unbuilt"
    said = f"{top.cause} {top.fix}"
    assert "org.apache.tvm:tvm4j-core" in said and "jvminstall" in said
    gradle = "   > Could not find ai.mlc:mlc4j:0.2.0.\n     Searched in the following locations:\n"
    top = best(gradle)
    assert top is not None and top.id == "tvm-java-artifact-unbuilt"
    assert "ai.mlc:mlc4j:0.2.0" in top.cause and "mlc_llm package" in top.fix


def test_other_unresolved_artifacts_are_not_claimed() -> None:
    text = "   > Could not find com.example:lib:1.0.\n"
    assert "tvm-java-artifact-unbuilt" not in {f.id for f in explain(text)}


def test_tvm4j_not_built_is_named_at_compile_and_at_run_time() -> None:
    top = best((FIXTURES / "tvm-java-bindings-unbuilt.log").read_text())
    assert top is not None and top.id == "tvm-java-bindings-unbuilt"
    assert "tvm4j_core.jar" in top.cause and "mlc_llm package" in top.fix
    run = best((FIXTURES / "tvm-java-bindings-unbuilt--logcat.log").read_text())
    assert run is not None and run.id == "tvm-java-bindings-unbuilt"
    assert "tvm4j_runtime_packed" in run.cause and "APK" in run.fix
    tree = best("error: file not found: /w/app/../../build/tvm_home/jvm/core/src/main/java/org/"
                "apache/tvm/LibInfo.java\n")
    assert tree is not None and tree.id == "tvm-java-bindings-unbuilt"
    assert "submodule" in tree.fix


def test_other_missing_java_packages_are_not_claimed() -> None:
    text = "Foo.java:3: error: package org.example.util does not exist\n"
    assert "tvm-java-bindings-unbuilt" not in {f.id for f in explain(text)}
