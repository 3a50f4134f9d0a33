"""A name TileLang's CUDA template headers declare in some releases only, or use only with a
CUDA new enough to have it, in nvcc's ``identifier "X" is undefined``.

The kernels TileLang prints include its template headers (src/tl_templates/cuda/): a name its
printer uses and its headers of that release lack (``make_fp8_e4_16_t`` before v0.1.6.post2),
or one of CUDA's own headers that older toolkits lack (``__nv_fp8_e8m0``, CUDA 12.8), stops
nvcc. Which releases declare which names, and which CUDA names they guard by version, come from
TileLang's history (toolkit/data/explain/tilelang_templates.json, by
scripts/tilelang_templates.py).
"""

from __future__ import annotations

from toolkit.explain.history import Versions, parse_ranges
from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table
from toolkit.explain.toolchain import printed_by_tvm


def undefined(groups: dict[str, str], text: str) -> tuple[str, str] | str:
    name = groups.get("ident") or groups.get("ident2") or ""
    data = table("tilelang_templates")
    if name in data["cuda"]:
        needs, first = data["cuda"][name]
        return (f"{name} is in CUDA's own headers only from CUDA {needs}, and the CUDA toolkit "
                "compiling this kernel is older. TileLang's CUDA templates "
                f"(src/tl_templates/cuda/) use it only when the CUDA version is {needs} or newer "
                f"from TileLang {first} on; an older TileLang uses it unconditionally "
                "(TileLang's history).",
                f"use CUDA {needs} or newer, or TileLang {first} or newer (which builds on an "
                "older CUDA without it)")
    if name not in data["names"] or printed_by_tvm("cuda").get(name) and "tilelang" not in \
            text.lower():
        return NOT_THIS  # (a name TVM's own CUDA printer writes too: TileLang's only if named)
    header, ranges = data["names"][name]
    mask, v = parse_ranges(ranges), Versions(tuple(data["versions"]))
    span, gone = v.span(mask), v.after_last(mask)
    where = f"TileLang's CUDA template headers (src/{header})"
    if gone is None:  # main has it: it came in a release
        first = v.first(mask)
        return (f"{name} is declared by {where} only in TileLang {span}: the kernel TileLang "
                f"printed uses it, and the template headers it was compiled with predate "
                f"{first} (a gap of that release's templates, not the kernel's code).",
                f"upgrade TileLang to {first} or newer (pip install -U tilelang)")
    return (f"{name} is declared by {where} in TileLang {span} and not from {gone}: the "
            "kernel source uses a name the template headers it is compiled with no longer "
            "declare (source printed by, or written for, another TileLang release).",
            f"regenerate the kernel with the TileLang in use, or use TileLang {span}")
