"""Regenerate tk's table of which TVM release first lowers each TIR math intrinsic per backend.

    python scripts/intrin_rules.py REPO [--out toolkit/data/explain/intrin_rules.json]

REPO is an apache/tvm clone (bare is fine). At every release tag from v0.8.0 on, the
intrinsic rule files (``src/**/intrin_rule*.cc``) are read for each ``tir.X`` operator's
lowering: ``TVM_REGISTER_OP("tir.X").set_attr<FLowerIntrinsic>("llvm.FLowerIntrinsic", ...)``
(or ``FLegalize``; ``default.`` applies to every backend that has no own rule), and before
those attributes ``TVM_REGISTER_GLOBAL("tvm.intrin.rule.llvm.X")``. Each (operator, backend)
is recorded with the first release that has it and the file. `tk explain` answers
"unknown intrinsic Op(tir.acos)" / "Unresolved call Op(tir.X)" from it: since which release
the backend in the log lowers that operator, or that none does.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_OP = re.compile(r'TVM_REGISTER_OP\(\s*"tir\.(?P<op>\w+)"\s*\)(?P<body>[^;]*);')
_ATTR = re.compile(r'"(?P<backend>\w+)(?:\.\w+)?\.F(?:LowerIntrinsic|Legalize)"')
_GLOBAL = re.compile(r'TVM_REGISTER_GLOBAL\(\s*"tvm\.intrin\.rule\.(?P<backend>\w+)\.(?P<op>\w+)"')


def table(repo: Path) -> dict[str, dict[str, dict[str, list[str]]]]:
    """ops: operator -> backend -> [first release, file]."""
    ops: dict[str, dict[str, list[str]]] = {}
    for tag in tvm_tags.releases(repo, 8):
        files = tvm_tags.git(repo, "ls-tree", "-r", "--name-only", f"refs/tags/{tag}",
                             "--", "src").split()
        for path in (f for f in files if re.search(r"/intrin_rule[\w]*\.cc$", f)):
            source = tvm_tags.git(repo, "show", f"refs/tags/{tag}:{path}")
            found = [(m["op"], a["backend"]) for m in _OP.finditer(source)
                     for a in _ATTR.finditer(m["body"])]
            found += [(m["op"], m["backend"]) for m in _GLOBAL.finditer(source)]
            for op, backend in found:
                ops.setdefault(op, {}).setdefault(backend, [tag, path])
    return {"ops": ops}


if __name__ == "__main__":
    tvm_tags.write_table(__doc__, "intrin_rules.json",
                         "apache/tvm src/**/intrin_rule*.cc at each release tag from v0.8.0",
                         table)
