"""A model attribute a TVM frontend passes on to an op that does not take it
(toolkit/explain/frontend_attrs.py). The sample is under tests/fixtures/explain/."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_attribute_passed_on_by_the_converter_names_the_framework_and_attribute() -> None:
    top = best((FIXTURES / "frontend-attribute-passed-on.log").read_text())
    assert top is not None and top.id == "frontend-attribute-passed-on"
    said = f"{top.cause} {top.fix}"
    assert "dilations" in said and "ONNX" in said and "max_pool2d" in said
    assert "update TVM" in said and "newer ONNX" in said


def test_unexpected_keyword_outside_the_converter_is_not_claimed() -> None:
    text = ('  File "run.py", line 3, in <module>\n    f(x, scale=2)\n'
            "TypeError: f() got an unexpected keyword argument 'scale'\n")
    assert "frontend-attribute-passed-on" not in {f.id for f in explain(text)}
