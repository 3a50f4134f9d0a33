"""A script uses an API the installed release of a package built on TVM lacks
(toolkit/explain/stack_packages.py). The sample is under tests/fixtures/explain/."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_missing_api_in_the_users_script_names_the_package_and_a_newer_release() -> None:
    top = best((FIXTURES / "stack-package-api-missing.log").read_text())
    assert top is not None and top.id == "stack-package-api-missing"
    said = f"{top.cause} {top.fix}"
    assert "mlc_llm.MLCEngine" in said and "mlc-llm" in said and "newer" in said
    assert "chat_demo.py" in said


def test_missing_api_raised_inside_the_package_is_not_claimed() -> None:
    text = ('  File "/venv/lib/python3.11/site-packages/tilelang/jit/kernel.py", line 9, in f\n'
            "    T.Buffer\nAttributeError: module 'tilelang.language' has no attribute 'Buffer'\n")
    assert "stack-package-api-missing" not in {f.id for f in explain(text)}
    other = "AttributeError: module 'numpy' has no attribute 'float'\n"
    assert "stack-package-api-missing" not in {f.id for f in explain(other)}
