"""Python halves of TVM that found a different native half than they were built with: TOPI's
C++ functions not registered (a topi egg without libtvm_topi), the CUDA driver not
initialized under TVM's CUDA module (two CUDA runtimes in one process).

TOPI's python/topi/cpp modules (topi/python/topi/cpp in v0.6.0) are filled by
``_init_api_prefix`` from functions the TOPI C++ library registers; impl.py loads
libtvm_topi from next to the package (libinfo.find_lib_path, optional=True), so an install
that copied the Python files without it leaves the names undefined. TVM's
src/runtime/cuda/cuda_module.cc (CUDAModuleNode::GetFunc, GetGlobal) sets the device with
the CUDA runtime API and then loads kernels with the driver API's cuModuleLoadData.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

_TOPI_CPP = re.compile(r"topi[/\\]cpp[/\\]|from \.{1,2}cpp(?:\.\w+)? import")


def topi_cpp_unregistered(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``cannot import name X`` from TOPI's cpp modules."""
    if "cpp" not in text or not _TOPI_CPP.search(text):
        return NOT_THIS
    name = groups.get("name", "")
    return (f"{name} is one of TOPI's C++ functions: topi.cpp's modules get them from the "
            "TOPI C++ library (libtvm_topi.so, loaded by topi/cpp/impl.py from next to the "
            "package, optional), and this topi found none. One way to get there is topi installed "
            "as a package (setup.py install, an egg) that copied the Python files but not "
            "the library, or a library from another build.",
            "do not install the packages: point PYTHONPATH at the built source tree's "
            "python/ and topi/python/ (TVM's install-from-source docs), or put the folder "
            "with the built libtvm_topi.so on LD_LIBRARY_PATH")


def cuda_driver_not_initialized(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``cuModuleLoadData(...) failed with error: CUDA_ERROR_NOT_INITIALIZED``."""
    call = groups.get("call") or "a CUDA driver call"
    return (f"{call} (TVM's CUDA module, src/runtime/cuda/cuda_module.cc, loads kernels "
            "with the driver API after setting the device with the runtime API) found the "
            "CUDA driver not initialized in this process: the CUDA runtime TVM loaded and "
            "the driver library its driver calls reach are not the same installation, as "
            "when a wheel bundles its own copies of CUDA libraries (an auditwheel repair "
            "step packs them in) beside the system's, or the driver itself failed to load.",
            "check which CUDA libraries the process uses (ldd on libtvm.so / "
            "libtvm_runtime.so, looking for libcuda and libcudart inside the wheel's folder); "
            "use a wheel that links the system's driver (a fixed or newer build of that "
            "wheel) or build TVM from source against the installed CUDA; nvidia-smi shows "
            "whether the driver works at all")


def metaschedule_replay(groups: dict[str, str], text: str) -> tuple[str, str]:
    """A ScheduleError that escaped parallel_for_dynamic while MetaSchedule tuned (the rule
    matches the error; the log must name parallel_for_dynamic too)."""
    if "parallel_for_dynamic" not in text:
        return NOT_THIS
    return ("MetaSchedule's evolutionary search replays candidate traces on a schedule in "
            "parallel (parallel_for_dynamic), and one replay raised a ScheduleError that "
            "escaped and aborted the tuning run: up to v0.23.0 the search did not treat a "
            "failed trace replay as a failed candidate; apache/tvm#19438 (first in v0.24.0) "
            "makes it do so.",
            "update TVM to v0.24.0 or newer; on an older TVM, narrow the search space that "
            "produced the trace (the schedule rules or the workload's sketch)")
