"""``TensorIntrin 'X' is not registered``: TVM's tensor intrinsics are registered by Python
modules that ``import tvm`` does not import.

Each target's intrinsics (``dot_4x4_i8i8s32_sdot`` in arm_cpu, the wmma and mma ones in cuda,
...) are registered with ``TensorIntrin.register`` when the module of its target under
``tvm.tir.tensor_intrin`` (``tvm.s_tir.tensor_intrin`` from v0.24.0) is imported, and that
package's ``__init__`` imports them all; a schedule or tuning run that names an intrinsic
before that import finds none. Where that package lies in each release comes from TVM's API
history.
"""

from __future__ import annotations

from toolkit.explain.history import api


def unregistered(groups: dict[str, str], _text: str) -> tuple[str, str]:
    name = groups["name"]
    history = api()
    v = history.versions
    places = [(m, mask) for m in ("tvm.tir.tensor_intrin", "tvm.s_tir.tensor_intrin")
              if (mask := history.python(m))]
    where = "; ".join(f"{m} ({v.span(mask)})" for m, mask in places)
    newest = places[-1][0] if places else "tvm.s_tir.tensor_intrin"
    return (f"TensorIntrin {name!r} is registered by TVM's Python, when the module of its "
            f"target in the tensor_intrin package ({where}: arm_cpu, cuda, x86, rocm, hexagon, "
            "...) is imported; `import tvm` does not import that package, so a schedule or a "
            "tuning run that asks for the intrinsic before it is imported finds none. If the "
            "package is imported, the intrinsic is another target's or another TVM version's "
            "(or the package's __init__ of this release skips its module).",
            f"import {newest} (or the package of the TVM in use, above) before the schedule, "
            "tuning or build that uses the intrinsic")
