"""MLC-LLM and web-llm failures that come from mixing builds: an MLC package with a TVM that
is not the one it was made for, a model library with another runtime, a web page's code with
an older web runtime (the wasm), a model's dtype with the browser's WebGPU.

MLC-LLM runs on its own TVM (the unity branch until Relax reached Apache TVM in v0.16.0,
shipped as the mlc-ai-nightly / mlc_ai wheels); its model libraries embed a Relax VM
executable whose header carries the version of the TVM that wrote it.
"""

from __future__ import annotations

from toolkit.explain.refine import NOT_THIS

# What a log shows when MLC-LLM (or web-llm) is the program: its packages, CLIs, web runtime.
_MLC = ("mlc_llm", "mlc_chat", "mlc-llm", "mlc-chat", "mlc.serve", "web-llm", "webllm")
# tvmjs (TVM's web runtime, web/src/runtime.ts) looks global functions up through these.
_TVMJS = ("getGlobalFuncInternal", "getGlobalFunc (", "tvmjs", ".wasm")


def tvm_without_relax(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``cannot import name 'relax' from 'tvm'`` (or no attribute 'relax') under MLC-LLM."""
    if not any(mark in text for mark in _MLC):
        return NOT_THIS
    return ("MLC-LLM is built on TVM Unity (Relax), and the tvm this Python imports has no "
            "tvm.relax: it is an Apache TVM release older than v0.16.0 or another TVM build, "
            "found before (or instead of) the one MLC-LLM needs.",
            "install the TVM Unity build MLC-LLM's install page names (the mlc-ai-nightly "
            "wheel for your CUDA/ROCm/Metal, `import tvm` then shows its site-packages path), "
            "or build TVM Unity from the tree MLC-LLM pins (3rdparty/tvm), and remove the "
            "other tvm from the environment or PYTHONPATH")


def runtime_lacks_global(groups: dict[str, str], text: str) -> tuple[str, str]:
    """A global of MLC's (``mlc.*``) or the Relax VM's that a web runtime does not have."""
    name = groups.get("name", "")
    if not any(mark in text for mark in _TVMJS):
        return NOT_THIS
    return (f"the page's JavaScript (web-llm or an app on it) calls {name}, and the web "
            "runtime it loaded (the tvmjs wasm linked into the model library) does not "
            "register it: the web-llm code is newer than the model library / wasm it runs "
            "with, or uses a feature not released in that runtime yet.",
            "use a web-llm release together with the prebuilt model libraries (wasm) made for "
            "it (the model list of that release), or rebuild the model library with the MLC-LLM "
            "and TVM that web-llm's version expects; a feature only on web-llm's main branch "
            "waits for its runtime to be released")


def vm_version_mismatch(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``Invalid VM file format in the version section`` from the VM executable's header."""
    runtime = groups.get("runtime")
    mlc = any(mark in text for mark in _MLC) or "mlc" in text.lower()
    seen = f" (the runtime's is {runtime})" if runtime else ""
    who = ("the model library and the runtime that loads it (mlc_chat_cli, the MLC-LLM "
           "package or app)" if mlc else "the VM executable and the runtime that loads it")
    return (f"version mismatch between {who}: LoadHeader in TVM's "
            "src/runtime/relax_vm/executable.cc (src/runtime/vm/executable.cc for the Relay "
            "VM and from v0.21.0) checks that the version written into the executable equals "
            f"the loading runtime's version{seen}, so a library compiled by one TVM cannot be "
            "loaded by a runtime built from another.",
            "rebuild the model library with the same TVM the runtime was built from, or "
            "rebuild (or update) the runtime from the TVM that compiled the library; for "
            "MLC-LLM, take the prebuilt CLI/package and model libraries from the same release")


def webllm_conv_template(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """web-llm's ``Unknown conv template phi-2``: a model newer than the package."""
    name = groups["name"]
    return (f"the model's mlc-chat-config.json names the conversation template `{name}`, which "
            "this web-llm release does not define (its getConversation knows a fixed list): "
            "the model was prepared for a newer web-llm, which added that template.",
            "upgrade web-llm (@mlc-ai/web-llm) to a release that defines the template (its "
            f"src/conversation.ts lists `{name}`), or use a model built for the release in use")


def webgpu_f16(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """The model needs WebGPU's shader-f16 feature and the browser's adapter lacks it."""
    return ("the model was compiled with float16 (a q4f16 / q0f16 quantization), so its "
            "WebGPU shaders need the adapter's shader-f16 feature, and this browser on this "
            "GPU does not expose it (WebGPU exposes f16 only where the browser supports it for "
            "that GPU and driver).",
            "pick the same model's float32 variant (q4f32_1 in place of q4f16_1 in web-llm's "
            "model list), or a browser/GPU whose WebGPU has shader-f16 (check "
            "navigator.gpu.requestAdapter() then adapter.features.has('shader-f16'))")
