"""Regenerate tk's table of LLVM headers that moved between LLVM releases, from TVM's sources.

    python scripts/llvm_headers.py REPO [--out toolkit/data/explain/llvm_headers.json]

REPO is an apache/tvm clone (bare is fine). At every release tag from v0.8.0 on, TVM's LLVM
code (src/) is searched for an include chosen by LLVM version:

    #if TVM_LLVM_VERSION >= 170          (or LLVM_VERSION_MAJOR >= 17)
    #include <llvm/TargetParser/Triple.h>
    #else
    #include <llvm/ADT/Triple.h>
    #endif

and each header of such a pair is recorded with the LLVM major that switches them, the other
path, the first release whose sources make the choice and a file that makes it; so is an
include guarded alone (``#if TVM_LLVM_VERSION < 170`` around PassManagerBuilder.h: a header
LLVM 17 removed), with no other path. `tk explain`
answers "llvm/ADT/Triple.h: No such file" from it: which LLVM moved the header, and which TVM
release handles that LLVM.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_IF = r"#if\s+(?P<macro>TVM_LLVM_VERSION|LLVM_VERSION_MAJOR)\s*(?P<op>>=|<)\s*(?P<n>\d+)\s*\n"
_GUARD = re.compile(
    _IF + r"\s*#include\s*<(?P<a>llvm/[\w/.]+)>\s*\n\s*#else\s*\n\s*#include\s*<(?P<b>llvm/[\w/.]+)>")
# Includes with no other branch: a header LLVM removed (``< N``) or added (``>= N``).
_ALONE = re.compile(_IF + r"(?P<body>(?:[ \t]*#include\s*<llvm/[\w/.]+>[^\n]*\n)+)[ \t]*#endif")
_INCLUDE = re.compile(r"#include\s*<(llvm/[\w/.]+)>")


def _major(m: re.Match[str]) -> int:
    n = int(m["n"])
    return n // 10 if m["macro"] == "TVM_LLVM_VERSION" else n


def table(repo: Path) -> dict[str, dict[str, object]]:
    """Each guarded LLVM header: kind (``old``: used below the LLVM major, ``new``: from it),
    llvm (the major), other (the header of the other branch; None for an include with no
    other branch: a header LLVM added or removed), since (first release), file."""
    headers: dict[str, dict[str, object]] = {}
    for tag in tvm_tags.releases(repo, 8):
        files = tvm_tags.git(repo, "grep", "-l", "-E", "#if (TVM_LLVM_VERSION|LLVM_VERSION_MAJOR)",
                     f"refs/tags/{tag}", "--", "src").split()
        for entry in files:
            path = entry.split(":", 1)[1]
            source = tvm_tags.git(repo, "show", f"refs/tags/{tag}:{path}")
            for m in _GUARD.finditer(source):
                major = _major(m)
                new, old = (m["a"], m["b"]) if m["op"] == ">=" else (m["b"], m["a"])
                if new == old:
                    continue
                for header, kind, other in ((old, "old", new), (new, "new", old)):
                    headers.setdefault(header, {"kind": kind, "llvm": major, "other": other,
                                                "since": tag, "file": path})
            for m in _ALONE.finditer(source):
                if source[:m.start()].rstrip().endswith("#else"):
                    continue  # the inner guard of another's #else: a range, not one bound
                kind = "new" if m["op"] == ">=" else "old"
                for header in _INCLUDE.findall(m["body"]):
                    headers.setdefault(header, {"kind": kind, "llvm": _major(m), "other": None,
                                                "since": tag, "file": path})
    return dict(sorted(headers.items()))


def main() -> None:
    tvm_tags.write_table(
        __doc__, "llvm_headers.json",
        "apache/tvm src/ at release tags v0.8.0 on, #if TVM_LLVM_VERSION / "
        "LLVM_VERSION_MAJOR guards around LLVM includes (scripts/llvm_headers.py)",
        lambda repo: {"headers": table(repo)})


if __name__ == "__main__":
    main()
