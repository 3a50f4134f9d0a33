"""A Gradle or Maven build that cannot find TVM's Java/Android libraries in any repository.

TVM's JVM and Android libraries (``org.apache.tvm:tvm4j-core``, ``tvm-android``, MLC-LLM's
``mlc4j`` on top) are built from a source tree into the local Maven repository or a Gradle
subproject, not fetched from a remote repository. A build that
resolves them from remote repositories fails until the step that builds them has run.
"""

from __future__ import annotations

from toolkit.explain.refine import NOT_THIS


def unresolved(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``Could not find org.apache.tvm:tvm-android:0.1.0.`` (Gradle) or Maven's wording."""
    coordinate = groups.get("coord") or groups.get("coord2") or ""
    if not coordinate:
        return NOT_THIS
    return (f"the build asks for {coordinate}, a library of TVM (or of MLC-LLM on TVM) that "
            "is built locally from a source tree; the repositories the build searched do not "
            "have it, so the step that builds it has not run (or wrote it elsewhere).",
            "run the step that builds it first: for an MLC-LLM Android app, `mlc_llm package` "
            "in the app's folder (it builds mlc4j with TVM's Android runtime, per MLC-LLM's "
            "Android docs); for TVM's own Java/Android apps, build tvm4j from the TVM tree "
            "(make jvmpkg, then make jvminstall to put it in the local Maven repository, in "
            "releases whose Makefile has those targets)")


# `mlc_llm package` (python/mlc_llm/cli/package.py, build_android_binding) runs the script
# after compiling the app's model libraries; its own frames or name show it did.
_BY_PACKAGE = ("mlc_llm/cli/package.py", "mlc_llm package", "build_android_binding")


def prepare_libs_by_hand(groups: dict[str, str], text: str) -> tuple[str, str]:
    """A traceback whose outermost frame is MLC-LLM's android/mlc4j/prepare_libs.py."""
    if any(mark in text for mark in _BY_PACKAGE):
        return NOT_THIS
    return (f"{groups.get('path', 'prepare_libs.py')} was run by hand: it is the step "
            "`mlc_llm package` runs (build_android_binding) after it has compiled the app's "
            "model libraries into one static library and written mlc-app-config.json, with "
            "the environment MLC-LLM's Android docs set up; run alone, the mlc4j build it "
            "starts misses what that command prepares.",
            "run `mlc_llm package` in the app's folder (with its mlc-package-config.json, "
            "MLC_LLM_SOURCE_DIR, ANDROID_NDK, TVM_NDK_CC and JAVA_HOME set as the Android docs "
            "say) instead of the script; if that fails too, read the first compiler error of "
            "the mlc4j build above the traceback")
