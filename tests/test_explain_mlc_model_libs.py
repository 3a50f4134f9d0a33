"""MLC-LLM finds no compiled model library (toolkit/explain/mlc_model_libs.py). The samples
are under tests/fixtures/explain/mlc-model-library-not-found*.log."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def _top(name: str):
    top = best((FIXTURES / name).read_text())
    assert top is not None and top.id == "mlc-model-library-not-found"
    return top


def test_a_named_library_not_found_says_the_weights_are_not_the_library() -> None:
    top = _top("mlc-model-library-not-found.log")
    assert "`Qwen2-0.5B-Instruct-q4f16_1`" in top.cause and "weights only" in top.cause
    assert "mlc_llm compile" in top.fix and "model_lib" in top.fix


def test_no_library_named_is_told_apart() -> None:
    top = best("FileNotFoundError: Cannot find the model library that corresponds to `None`.\n")
    assert top is not None and top.id == "mlc-model-library-not-found"
    assert "no model library was named" in top.cause


def test_a_packaged_app_names_the_packaging_step() -> None:
    link = _top("mlc-model-library-not-found--ios-link.log")
    assert "libmodel_iphone.a" in link.cause and "mlc_llm package" in link.fix
    system = _top("mlc-model-library-not-found--system-lib.log")
    assert "gemma2_q4f16_1_9f8e7d6c5b4a39281706f5e4d3c2b1a0" in system.cause
    assert "mlc-package-config.json" in system.fix


def test_other_missing_libraries_are_not_claimed() -> None:
    text = "ld: library not found for -lmodelio\nFileNotFoundError: Cannot find the model folder.\n"
    assert "mlc-model-library-not-found" not in {f.id for f in explain(text)}
