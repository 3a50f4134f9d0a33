"""The __NAME__ target: ``tvm.target.Target("__NAME__")`` and the TIR pipeline it compiles with.

Why ``ext_dev`` and a tag, not a target kind of its own: a target kind is registered by
``TVM_REGISTER_TARGET_KIND`` in C++, whose setters (``set_default_device_type``,
``add_attr_option``, ...) are inline code in ``tvm/target/target_kind.h`` - a compiler header
the apache-tvm wheel does not ship - and no Python or tvm-ffi function registers one. TVM
does register, for exactly this use, the kind ``ext_dev`` (device type ``kDLExtDev``, the one
DLPack reserves for extension devices): TVM compiles for it through ``target.build.ext_dev``
and runs on it through ``device_api.ext_dev``, two global functions an extension may define
(VTA did). A target tag (``target.TargetTagAddTag``, a global function the wheel exports)
gives it this extension's name, and the key ``__NAME__`` that tk and TVM dispatch on. One
ext_dev extension per process: a second one's registrations are refused.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import s_tir

NAME = "__NAME__"
CONFIG = {"kind": "ext_dev", "keys": [NAME]}


def tir_pipeline():
    """TVM's default TIR lowering, with every PrimFunc's body marked as device code first
    (``DecorateDeviceScope``), so that ``SplitHostDevice`` moves it into a kernel that
    ``target.build.ext_dev`` prints; the host keeps the calls (a GPU target gets the same
    split from its thread bindings)."""
    lower, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline("s_tir")
    return (tvm.transform.Sequential([s_tir.transform.DecorateDeviceScope(), lower],
                                     name=f"{NAME}.lower"),
            finalize_host, finalize_device)


def target(host: str | None = None) -> tvm.target.Target:
    """The __NAME__ target (with ``host`` code for the CPU side, TVM's default otherwise)."""
    t = tvm.target.Target(NAME)
    return tvm.target.Target(t, host=host) if host else t


def register() -> None:
    """Name the target (a tag) and its TIR pipeline (registered under the target's key: the
    pipeline ``tk`` compiles an ext_dev target with, and ``tvm.compile(...,
    tir_pipeline="__NAME__")``)."""
    tvm_ffi.get_global_func("target.TargetTagAddTag")(NAME, CONFIG, True)
    tvm.tirx.compilation_pipeline.register_tir_pipeline(NAME, tir_pipeline)
