"""Regenerate tk's table of the GPU architectures each TileLang release's target checks cover.

    python scripts/tilelang_archs.py REPO [--out toolkit/data/explain/tilelang_archs.json]

REPO is a tile-ai/tilelang clone (bare is fine). At every release tag (v0.1.N, v0.1.N.postM)
the architecture predicates of its sources (src/target/utils.cc, later src/cuda/
target_utils.cc: ``bool TargetIsHopper(Target target)`` ... ``return arch >= 90 && arch <
100;``) are read as ranges of the compute capability. TileLang's
operators dispatch on them (src/op/gemm.cc raises "Not supported <target>" when none holds),
so `tk explain` answers that message with the first release whose predicates cover the arch.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_TAG = re.compile(r"v?0\.(\d+)\.(\d+)(?:\.post(\d+))?")
_PREDICATE = re.compile(r"bool (?P<name>TargetIs\w+)\(Target target\)\s*\{(?P<body>[^}]*)\}")
_RANGE = re.compile(r"return arch >= (?P<lo>\d+)(?: && arch (?P<op><=?) (?P<hi>\d+))?;")


def tags(repo: Path) -> list[str]:
    """Release tags, oldest first (``0.1.6`` and ``v0.1.6`` name one release: the v one)."""
    found = {}
    for tag in tvm_tags.git(repo, "tag", "-l").split():
        m = _TAG.fullmatch(tag)
        if m:
            key = tuple(int(g or 0) for g in m.groups())
            if key not in found or tag.startswith("v"):
                found[key] = tag
    return [found[k] for k in sorted(found)]


def collect(repo: Path) -> list[dict[str, object]]:
    releases = []
    for tag in tags(repo):
        # src/target/utils.cc until v0.1.10; later src/cuda/target_utils.cc and others
        files = tvm_tags.git(repo, "grep", "-l", "bool TargetIsHopper(Target target)",
                             f"refs/tags/{tag}", "--", "src").split()
        if not files:
            continue
        text = "".join(tvm_tags.git(repo, "show", f) for f in files)
        archs = []
        for p in _PREDICATE.finditer(text):
            r = _RANGE.search(p.group("body"))
            if r and "TargetIsCuda" in p.group("body"):
                hi = int(r.group("hi")) + (r.group("op") == "<=") if r.group("hi") else None
                archs.append([p.group("name"), int(r.group("lo")), hi])
        releases.append({"tag": tag, "cuda_archs": archs})
    return releases


def main() -> None:
    tvm_tags.write_table(
        __doc__, "tilelang_archs.json",
        "tile-ai/tilelang's TargetIs* predicates (src/target/utils.cc ...) at each release tag "
        "(scripts/tilelang_archs.py)",
        lambda repo: {"releases": collect(repo)})


if __name__ == "__main__":
    main()
