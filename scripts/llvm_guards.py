"""Regenerate tk's table of the LLVM APIs TVM's sources call one way for a newer LLVM and
another way for an older one.

    python scripts/llvm_guards.py REPO [--out toolkit/data/explain/llvm_guards.json]

REPO is an apache/tvm clone (bare is fine). At every release tag (``vX.Y`` from v0.2, then
``vX.Y.0``), each C++ file under src/, include/ and tests/cpp that tests ``TVM_LLVM_VERSION``
is read: the names called or named inside an ``#if TVM_LLVM_VERSION >= N`` block (either
branch, up to its ``#endif``; the innermost such test decides) are compared: a name only the
newer LLVM's branch uses (one LLVM N brought), a name only the older one's uses (one it
removed), a function both branches call (with other arguments). Each is recorded under N's
LLVM major with the first release that tests it in that file. Tests around more than
``MAX_LINES`` lines (a whole function or file) say nothing of one call and are skipped.
`tk explain` answers a compile error that names an LLVM API (``'llvm::IRBuilderBase::
CreateAtomicRMW': function does not take 4 arguments``) from it: which LLVM changed that API
and from which TVM release the sources follow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import tvm_tags

_TEST = re.compile(r"TVM_LLVM_VERSION\s*(?P<op>>=|<=|>|<|==)\s*(?P<n>\d+)")
# What a guarded line calls or names: a component of an llvm:: or Intrinsic:: name, or a
# method called through -> or . (LLVM's IRBuilder, Type, Module ...).
_NAMES = re.compile(r"(?:\bllvm::(?:\w+::)*|\bIntrinsic::|->|\.)\s*(?P<name>[A-Za-z_]\w{4,})")
_QUALIFIED = re.compile(r"\bllvm::(?P<path>(?:\w+::)*\w+)")
_CALLED = re.compile(r"(?P<name>[A-Za-z_]\w{4,})\s*\(")
# Names too common to say which API changed.
_COMMON = {"push_back", "emplace_back", "begin", "insert", "value", "second", "first", "empty",
           "operator", "c_str", "reset", "release", "append"}


# A test around more than this many lines guards a whole function or file (codegen_hexagon.cc
# under TVM_LLVM_VERSION >= 70), not a changed call.
MAX_LINES = 40


@dataclass
class _Block:
    """An open ``#if``: the LLVM major it tests (None for another test), whether the branch
    being read is the newer LLVM's, and what each side's lines use."""

    major: int | None
    newer: bool = True
    lines: int = 0
    names: dict[bool, set[str]] = field(default_factory=lambda: {True: set(), False: set()})
    calls: dict[bool, set[str]] = field(default_factory=lambda: {True: set(), False: set()})


def _changed(block: _Block) -> dict[str, str]:
    """What a closed LLVM test says: names one side only uses (``new``: from that LLVM on;
    ``old``: before it) and functions both sides call differently (``both``)."""
    if block.lines > MAX_LINES:
        return {}
    new, old = block.names[True], block.names[False]
    out = {n: "new" for n in new - old} | {n: "old" for n in old - new}
    if new and old:  # an #else: a function both sides call, with other arguments
        out |= {n: "both" for n in block.calls[True] & block.calls[False]}
    return out


def guarded_names(source: str) -> dict[str, tuple[int, str]]:
    """name -> (the LLVM major of the innermost ``TVM_LLVM_VERSION`` test around its uses, the
    side: ``new``, ``old`` or ``both``)."""
    found: dict[str, tuple[int, str]] = {}
    stack: list[_Block] = []
    for line in source.splitlines():
        directive = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if directive:
            kind, rest = directive.groups()
            test = _TEST.search(rest)
            major = int(test["n"]) // 10 + (test["op"] == ">") if test else None
            newer = bool(test) and test["op"] in (">=", ">")
            if kind in ("if", "ifdef", "ifndef"):
                stack.append(_Block(major, newer))
            elif kind == "elif" and stack and major is not None:
                stack[-1].major, stack[-1].newer = major, newer
            elif kind == "else" and stack:
                stack[-1].newer = not stack[-1].newer
            elif kind == "endif" and stack:
                block = stack.pop()
                if block.major is not None:
                    for name, side in _changed(block).items():
                        found.setdefault(name, (block.major, side))
            continue
        inner = next((b for b in reversed(stack) if b.major is not None), None)
        if inner is None or line.lstrip().startswith("//"):
            continue
        inner.lines += 1
        names = {m["name"] for m in _NAMES.finditer(line)}
        for q in _QUALIFIED.finditer(line):
            names.update(p for p in q["path"].split("::") if len(p) >= 5)
        inner.names[inner.newer] |= names - _COMMON
        inner.calls[inner.newer] |= {m["name"] for m in _CALLED.finditer(line)} - _COMMON
    return found


def table(repo: Path) -> dict[str, dict[str, list[list]]]:
    """names: name -> [[LLVM major, first release, file, side], ...] (one per major and
    file; the side as the first release has it)."""
    names: dict[str, dict[tuple[int, str], tuple[str, str]]] = {}
    for tag in tvm_tags.releases(repo, bare=True):
        files = tvm_tags.git(repo, "grep", "-l", "TVM_LLVM_VERSION", f"refs/tags/{tag}", "--",
                             "src", "include", "tests/cpp").split()
        for hit in files:
            path = hit.split(":", 1)[1]
            if not path.endswith((".cc", ".h", ".cpp")):
                continue
            source = tvm_tags.git(repo, "show", f"refs/tags/{tag}:{path}")
            for name, (major, side) in guarded_names(source).items():
                names.setdefault(name, {}).setdefault((major, path), (tag, side))
    return {"names": {n: sorted([m, t, p, side] for (m, p), (t, side) in by.items())
                      for n, by in sorted(names.items())}}


if __name__ == "__main__":
    tvm_tags.write_table(__doc__, "llvm_guards.json",
                         "apache/tvm's TVM_LLVM_VERSION tests in src/, include/ and tests/cpp "
                         "at each release tag", table)
