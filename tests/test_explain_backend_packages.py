"""A TVM module imports a package no TVM release requires (toolkit/explain/
backend_packages.py). The sample is tests/fixtures/explain/tvm-backend-package-missing.log."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_a_backends_package_names_the_tvm_module_that_imports_it() -> None:
    top = best((FIXTURES / "tvm-backend-package-missing.log").read_text())
    assert top is not None and top.id == "tvm-backend-package-missing"
    assert "python/tvm/contrib/target/vitis_ai.py imports pyxir" in top.cause
    assert "no TVM release lists pyxir" in top.cause
    assert "install pyxir" in top.fix and "tvm.contrib.target.vitis_ai" in top.fix


def test_requirements_and_other_imports_are_left_to_their_answers() -> None:
    # decorator is one of TVM's requirements: the requirements table answers it
    listed = ('  File "/w/tvm/python/tvm/relay/op/op.py", line 19, in <module>\n'
              "    import decorator\nModuleNotFoundError: No module named 'decorator'\n")
    assert "tvm-backend-package-missing" not in {f.id for f in explain(listed)}
    # the import is the user's own, not TVM's
    own = ('  File "/home/u/app.py", line 3, in <module>\n'
           "    import pyxir\nModuleNotFoundError: No module named 'pyxir'\n")
    assert "tvm-backend-package-missing" not in {f.id for f in explain(own)}
