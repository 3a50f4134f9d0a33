"""Logs pasted through a forum or a word processor: typographic quotes (‘’ “”) where Python,
CMake and TVM print plain ones are read as the plain ones (toolkit/explain/match.py)."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

PASTED = Path(__file__).parent / "fixtures" / "explain" / "pasted"


def test_curly_quoted_attribute_error_is_answered() -> None:
    log = (PASTED / "te-create-schedule-curly-quotes.log").read_text()
    found = best(log)
    assert found is not None and "create_schedule" in found.cause
    history = [f for f in explain(log) if f.origin == "API history"]
    assert history and "v0.20.0" in history[0].cause
    # line numbers are those of the log as pasted
    assert found.line == history[0].line == 4


def test_curly_quoted_check_and_package_names() -> None:
    check = "/src/proj/cpp/loader.cc:9: Check failed: (ok) is false: Key “eos_id” not found.\n"
    assert "eos_id" in best(check).cause
    package = "AttributeError: module ‘numpy’ has no attribute ‘asscalar’\n"
    assert any("v0.8.0" in f.fix for f in explain(package))
