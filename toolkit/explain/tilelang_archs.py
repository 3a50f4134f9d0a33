"""A CUDA architecture the installed TileLang release does not dispatch on.

TileLang's operators choose their code by the target's architecture through predicates
(``TargetIsHopper``: sm_90 up to sm_100, ...); GEMM's layout inference (src/op/gemm.cc)
raises ``Not supported <target>`` when none holds. Which releases' predicates cover which
compute capabilities comes from TileLang's history (toolkit/data/explain/tilelang_archs.json,
by scripts/tilelang_archs.py).
"""

from __future__ import annotations

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table


def _covers(release: dict, arch: int) -> str | None:
    for name, lo, hi in release["cuda_archs"]:
        if lo <= arch and (hi is None or arch < hi):
            return name
    return None


def arch_not_supported(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``Not supported cuda -keys=cuda,gpu -arch=sm_100 ...``."""
    arch = int(groups.get("arch") or 0)
    if not arch:
        return NOT_THIS
    releases = table("tilelang_archs")["releases"]
    lacking = [r["tag"] for r in releases if _covers(r, arch) is None]
    if not lacking:
        return NOT_THIS  # every release knows it: not this failure
    newest = releases[-1]
    covering = [r["tag"] for r in releases[releases.index(next(
        r for r in releases if r["tag"] == lacking[-1])) + 1:]]
    span = lacking[0] if len(lacking) == 1 else f"{lacking[0]} to {lacking[-1]}"
    cause = (f"TileLang dispatches its operators (GEMM's layout inference, src/op/gemm.cc) on "
             f"the GPU architecture, and no architecture check (TargetIs*) of the installed "
             f"release holds for sm_{arch}: the TileLang releases {span} do not cover sm_"
             f"{arch}")
    if covering:
        cause += (f"; {covering[0]} and later do ({_covers(newest, arch)})."
                  if _covers(newest, arch) else ".")
        fix = (f"upgrade TileLang to {covering[0]} or newer (pip install -U tilelang), or build "
               f"its main branch from source")
    else:
        cause += "; no release does yet."
        fix = "build TileLang's main branch from source, or compile for an architecture it knows"
    return cause, fix
