"""A compile error that names an LLVM API TVM's sources call one way for a newer LLVM and
another way for an older one (tk's table, ``scripts/llvm_guards.py``): which LLVM changed it,
and from which TVM release the sources follow that LLVM."""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table
from toolkit.explain.toolchain import llvm_shown, missing_name

_QUALIFIED = re.compile(r"\bllvm::(?:\w+::)*(?P<name>\w+)")


def changed_api(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """``error C2660: 'llvm::IRBuilderBase::CreateAtomicRMW': function does not take 4
    arguments``, ``'llvm::FixedVectorType' has not been declared``."""
    names = table("llvm_guards")["names"]
    missing = missing_name(groups["rest"]) is not None
    # A name the headers lack is answered by what one side of a test uses; a call they reject,
    # by a function both sides call with other arguments. The first LLVM name on the line
    # that has such a fact ("cannot convert 'llvm::Value*'" names a type no test changed).
    hit, facts = None, []
    for m in _QUALIFIED.finditer(groups["rest"]):
        facts = [f for f in names.get(m["name"], ()) if (f[3] != "both") == missing]
        if facts:
            hit = m
            break
    if hit is None:
        return NOT_THIS  # APIs TVM calls the same way for every LLVM: not this answer
    shown = llvm_shown(text)
    seen = f"; the log shows LLVM {shown}" if shown is not None else ""

    def where(chosen: list[list]) -> str:
        major = chosen[0][0]
        files = sorted({f[2] for f in chosen})
        return (f"`#if TVM_LLVM_VERSION >= {major}0` in {', '.join(files[:3])}, first in TVM "
                f"{min(f[1] for f in chosen)}")

    brought = [f for f in facts if f[3] == "new"]
    removed = [f for f in facts if f[3] == "old"]
    if brought and not removed:  # the LLVM lacks a name TVM uses from LLVM N on
        major = min(f[0] for f in brought)
        chosen = [f for f in brought if f[0] == major]
        return (f"{hit.group(0)} is not in the LLVM compiled against: TVM's sources use it only "
                f"for LLVM {major} and newer ({where(chosen)}){seen}, so the build was "
                f"configured with an LLVM that reports {major} or newer while the headers it "
                "compiles with lack the name: headers of an older LLVM first on the include "
                "path, or a vendor's fork of LLVM (such as ROCm's) numbered ahead of the "
                "released API.",
                "configure with the llvm-config of the LLVM whose headers are used (USE_LLVM="
                "/path/to/llvm-config), and with a vendor's fork use a released LLVM of the "
                "version it reports")
    if removed and not brought:  # an LLVM newer than the sources lacks it
        major = min(f[0] for f in removed)
        chosen = [f for f in removed if f[0] == major]
        first = min(f[1] for f in chosen)
        return (f"{hit.group(0)} is not in LLVM {major} and newer: TVM's sources use it only "
                f"for older LLVMs ({where(chosen)}){seen}; these sources are older than "
                f"{first} and the LLVM is {major} or newer.",
                f"update TVM to {first} or newer, or build this TVM against an LLVM older than "
                f"{major} (USE_LLVM=/path/to/llvm-config of it)")
    if missing:
        return NOT_THIS  # used on one side in some tests, the other in others: no one answer
    # The call's arguments changed: the change the log's LLVM has crossed (the newest at or
    # below it), else every one known.
    crossed = [f for f in facts if shown is not None and f[0] <= shown]
    newest = max(f[0] for f in crossed or facts)
    chosen = [f for f in crossed or facts if f[0] == newest]
    first = min(f[1] for f in chosen)
    return (f"{hit.group(0)} is an LLVM API that changed in LLVM {newest}: TVM's sources call "
            f"it one way for LLVM {newest} and newer and another for older LLVMs "
            f"({where(chosen)}){seen}. The TVM sources and the LLVM they are compiled against "
            f"disagree about it: sources older than {first} meet LLVM {newest} or newer, or "
            "the LLVM reports a version whose API it does not have (a vendor's fork of LLVM, "
            "such as ROCm's, numbered ahead of the released API).",
            f"update TVM to {first} or newer, or build this TVM against an LLVM older than "
            f"{newest} (USE_LLVM=/path/to/llvm-config of it); with a vendor's fork, use a "
            "released LLVM of the version it reports")
