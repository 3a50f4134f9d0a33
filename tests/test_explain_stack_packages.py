"""A name of a package built on TVM (TileLang, MLC-LLM, tvm-ffi) that the installed release
lacks is answered from that package's own history (toolkit/explain/drift.py), with what the
user's own script using it says."""

from __future__ import annotations

from toolkit.explain import best

# A demo script written for a newer MLC-LLM than the one installed (script and path made up)
DEMO = ("$ python examples/chat_demo.py\nTraceback (most recent call last):\n"
        '  File "/srv/demo/examples/chat_demo.py", line 12, in <module>\n'
        '    engine = mlc_llm.MLCEngine(model_path, device="cuda")\n'
        "AttributeError: module 'mlc_llm' has no attribute 'MLCEngine'\n")


def test_missing_api_in_the_users_script_names_the_release_that_has_it() -> None:
    top = best(DEMO)
    assert top is not None and top.origin == "API history"
    assert top.title == "mlc_llm.MLCEngine exists from main@2024-07"
    assert "/srv/demo/examples/chat_demo.py" in top.cause and "nightly MLC wheels" in top.fix


def test_missing_api_raised_inside_the_package_is_not_put_on_a_script() -> None:
    inside = DEMO.replace("/srv/demo/examples/chat_demo.py",
                          "/venv/lib/python3.11/site-packages/mlc_llm/serve/engine.py")
    top = best(inside)
    assert top is not None and "was written for" not in top.cause
