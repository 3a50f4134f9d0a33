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
