"""TVM's OpenCL runtime calling a vendor extension the OpenCL library it loads lacks.

Up to v0.22.0 OpenCLWorkspace::SetPerfHint (src/runtime/opencl/opencl_device_api.cc) called
clSetPerfHintQCOM whenever the OpenCL headers defined CL_CONTEXT_PERF_HINT_QCOM; newer
Khronos OpenCL-Headers define it on every platform, so a build against them references a
Qualcomm-only function. From v0.23.0 the call also needs USE_OPENCL_EXTN_QCOM (git show
v0.22.0 / v0.23.0 of that file).
"""

from __future__ import annotations


def qcom_symbol(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``undefined symbol: clSetPerfHintQCOM`` (or another cl*QCOM)."""
    sym = groups.get("sym", "")
    return (f"{sym} is a Qualcomm (QCOM) OpenCL extension function; the OpenCL library "
            "loaded here (an ICD loader, PoCL, another vendor's) does not export it, but this "
            "TVM runtime was built to call it: up to v0.22.0 TVM's OpenCL runtime called "
            "clSetPerfHintQCOM whenever the OpenCL headers defined CL_CONTEXT_PERF_HINT_QCOM, "
            "and recent Khronos OpenCL-Headers define it everywhere.",
            "use TVM v0.23.0 or newer, where the call is compiled only with "
            "USE_OPENCL_EXTN_QCOM (leave it OFF unless the device is Qualcomm Adreno), or "
            "build against OpenCL headers older than the ones that define the QCOM names")
