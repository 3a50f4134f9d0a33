"""What a fork's change is, from where it is and what it adds: the rules as data.

``PATHS`` names the group of a file by its path in a TVM tree (the first pattern that matches
wins; both generations of the layout: ``tir`` and ``tirx``/``s_tir``, ``src/runtime/<device>``
and ``src/backend/<device>``). ``SIGNALS`` are lines a change adds that say more than its
place does: a pass, a target or a device registered from a file in a place of no particular
kind (``src/contrib/``, a Python module of the fork's own) belongs with passes, targets or
devices. ``KINDS`` are the groups ``tk ext`` carries out of tree, each with the scaffold kind
that does it.
"""

from __future__ import annotations

GROUPS: dict[str, str] = {
    "passes": "TIR/Relax passes and schedules",
    "codegen": "codegen and targets",
    "runtime": "runtime and devices",
    "ops": "ops and legalizations",
    "ir": "IR nodes",
    "core": "core C++ (arith, support, te, driver, ...)",
    "python": "Python API",
    "build": "build files",
    "tests": "tests",
    "other": "docs, CI and the rest",
}

_LAYERS = "tir|tirx|s_tir|relax|relay"

PATHS: list[tuple[str, str]] = [
    (r"^tests/|(^|/)tests?/|(^|/)test_[^/]*\.py$|(^|/)conftest\.py$", "tests"),
    (r"(^|/)CMakeLists\.txt$|\.cmake$|^cmake/|^pyproject\.toml$|(^|/)setup\.(py|cfg)$"
     r"|^\.gitmodules$|^3rdparty/|^Makefile$|^version\.py$|^python/tvm/libinfo\.py$", "build"),
    (r"^(docs|\.github|\.ci|ci|docker|apps|web|jvm|rust|golang|gallery|conda|licenses)/"
     r"|\.(md|rst|txt)$|^(LICENSE|NOTICE|KEYS)$|^\.[^/]+$", "other"),
    # Operators and their legalizations, before passes: legalize_ops lives among the passes.
    (rf"^python/tvm/relax/transform/legalize_ops/|^(src|python/tvm)/({_LAYERS})/op/"
     r"|^(src|include/tvm|python/tvm)/topi/|^include/tvm/relax/attrs/|^python/tvm/relax/op/",
     "ops"),
    (rf"^(src|python/tvm)/({_LAYERS})/transforms?/|^include/tvm/({_LAYERS})/transform\.h$"
     rf"|^(src|python/tvm)/({_LAYERS})/analysis/|^include/tvm/({_LAYERS})/analysis\.h$"
     r"|^(src|include/tvm|python/tvm)/(s_tir/)?(meta_schedule|dlight|schedule)/"
     r"|^(src|include/tvm|python/tvm)/tir/schedule|^python/tvm/relax/pipeline\.py$",
     "passes"),
    # A device backend (src/backend/<device>, newer layouts) holds its runtime beside its
    # code generator: the device API and modules are the runtime's.
    (r"^src/backend/[^/]+/.*(device_api|_module|runtime)[^/]*\.(cc|h|mm)$", "runtime"),
    (rf"^src/target/|^include/tvm/target/|^python/tvm/target/|^(src|python/tvm)/backend/"
     rf"|^(src|python/tvm)/({_LAYERS})/backend/"
     r"|^python/tvm/contrib/(nvcc|rocm|hipcc|cc|clang|ndk|xcode|emcc)\.py$", "codegen"),
    (r"^src/runtime/|^include/tvm/runtime/|^python/tvm/runtime/|^python/tvm/rpc/", "runtime"),
    (rf"^(src|include/tvm|python/tvm)/(ir|node|script)/|^src/({_LAYERS})/ir/"
     rf"|^include/tvm/({_LAYERS})/[^/]+\.h$|^ffi/|^include/tvm/ffi/"
     rf"|^python/tvm/({_LAYERS})/(expr|stmt|function|buffer|struct_info|ty|type)\.py$", "ir"),
    (r"^(src|include/tvm)/", "core"),
    (r"^python/", "python"),
    (r"", "other"),
]

# Groups a place says little about: an added line below may move a file out of them.
WEAK = frozenset({"core", "python", "other"})

SIGNALS: list[tuple[str, str]] = [
    (r"\bCreate(PrimFunc|Function|Module|DataflowBlock)Pass\s*\("
     r"|@(tvm\.)?(ir\.)?transform\.module_pass|@(tvm\.)?(tir|tirx|relax)\.transform\."
     r"(prim_func|function|dataflowblock)_pass", "passes"),
    (r"TVM_REGISTER_TARGET_KIND|[\"']target\.build\.", "codegen"),
    (r"[\"']device_api\.|public\s+(tvm::)?(runtime::)?DeviceAPI\b", "runtime"),
]

# The groups tk ext carries out of tree, and the scaffold (tk ext new --kind) that does.
KINDS: dict[str, str] = {"passes": "pass", "codegen": "target", "runtime": "runtime"}
# What may come along with a kind's own files in a change that moves out of tree.
ALONG = frozenset({"python", "tests", "build", "other"})
