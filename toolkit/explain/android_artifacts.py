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


def java_bindings_unbuilt(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """The app's build or run meets no tvm4j: ``package org.apache.tvm does not exist``
    (javac), ``Couldn't find native library tvm4j`` (the app's loader, logcat) or a missing
    LibInfo.java of TVM's jvm/ tree."""
    if groups.get("native"):
        return ("the app found no JNI library of tvm4j (TVM's jvm/core Base.java loads "
                "tvm4j, then falls back to tvm4j_runtime_packed) among the native libraries "
                "packaged into the APK: the step that builds "
                "it for the device's ABI has not run, or its output was not copied into the "
                "app's jniLibs.",
                "build it for the device (for an MLC-LLM app: mlc_llm package in the app's "
                "folder, which writes <abi>/libtvm4j_runtime_packed.so into the output folder of "
                "the mlc4j library), then rebuild and reinstall the APK")
    if groups.get("libinfo"):
        return ("the build compiles TVM's Java sources from the TVM tree it was pointed at "
                "(jvm/core/src/main/java/org/apache/tvm) and that tree is not there: the TVM "
                "submodule is not checked out, or TVM_SOURCE_DIR names another folder.",
                "check out TVM (git submodule update --init --recursive in the MLC-LLM clone) "
                "or set TVM_SOURCE_DIR to a TVM source tree, then build again")
    return ("javac found no org.apache.tvm: TVM's Java bindings (tvm4j, the tvm4j_core.jar "
            "the app's library depends on) are built by a packaging step from a TVM source "
            "tree, not fetched; that step has not run, or failed, or its output was removed "
            "(a Gradle clean can delete the output folder it is written to).",
            "run the step that builds it (MLC-LLM: mlc_llm package in the app's folder, with "
            "TVM_SOURCE_DIR or the 3rdparty/tvm submodule present; it writes "
            "tvm4j_core.jar into the mlc4j library's output folder), then build the app "
            "without cleaning it away")


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
