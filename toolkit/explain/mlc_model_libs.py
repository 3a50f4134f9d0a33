"""MLC-LLM finds no compiled model library for the model it is asked to run.

MLC-LLM runs a model from two parts: its weights (the model folder with mlc-chat-config.json)
and a model library compiled from it for one device (``mlc_llm compile``; a packaged iOS or
Android app links them in as a system library). The weights do not hold the library: a folder
downloaded or converted without compiling (or fetching the prebuilt one) has nothing to run.
Each lookup fails in its own words: ``_get_lib_module_path`` of the Python package ("Cannot
find the model library that corresponds to `X`"), the CLI's ``cli_main.cc`` (the same
words), the serving engine's ``function_table.cc`` ("Cannot find system lib with X") and
the app's linker (``-lmodel_iphone``).
"""

from __future__ import annotations

from toolkit.explain.refine import NOT_THIS

_COMPILE = ("compile the library for this device (mlc_llm compile MODEL_DIR/mlc-chat-config.json "
            "--device DEVICE -o LIB.so; older MLC-LLM: python -m mlc_llm.build), or fetch the "
            "prebuilt library of the same model and quantization (MLC-LLM's binary-mlc-llm-libs), "
            "then name its path as model_lib (model_lib_path in older releases)")


def not_found(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """The model library MLC-LLM looked for, by which of its lookups failed."""
    if groups.get("syslib"):
        prefix = groups["syslib"]
        return (f"the packaged app loads the model from the libraries linked into it, each "
                f"registered under the prefix of its model_lib; none is registered as {prefix}: "
                "the app was packaged with another model list, or the model was recompiled "
                "since (the prefix carries a hash of the model's configuration and "
                "compile options), so the model_lib the app asks for and the library it links "
                "differ.",
                "package again with mlc_llm package (the model_lib of each model in "
                "mlc-package-config.json is what the app asks for), then rebuild the app so it "
                "links the new libmodel_* archive")
    if groups.get("link") or groups.get("link2"):
        name = groups.get("link") or groups.get("link2")
        return (f"the app links lib{name}.a, the archive of compiled model libraries that "
                "`mlc_llm package` writes (under dist/ of the app's folder); it is not there: "
                "the packaging step has not run, or failed, or wrote another folder.",
                "run mlc_llm package in the app's folder (with mlc-package-config.json listing "
                "the models; MLC_LLM_SOURCE_DIR set to the MLC-LLM checkout) and build the app "
                "again once it has written the library")
    lib = groups.get("lib", "").strip("'\" ")
    if not lib:
        return NOT_THIS
    if lib == "None":
        return ("no model library was named: neither the call nor the model's "
                "mlc-chat-config.json gives a model_lib, so MLC-LLM searched for `None` plus the "
                "device's suffix. The model folder holds the weights only; the library is "
                "compiled from it separately.", _COMPILE)
    return (f"MLC-LLM looked for the compiled model library `{lib}` (the model_lib of the call "
            "or of mlc-chat-config.json) under the paths it lists and found none: the library "
            "was not compiled for this device, or the prebuilt one was not downloaded, or it "
            "was written under another name or folder. The model folder holds the weights "
            "only.", _COMPILE)
