"""Regenerate tk's table of the attributes of a framework's objects that TVM's frontends
began to read only after checking that the object has them.

    python scripts/frontend_reads.py REPO [--out toolkit/data/explain/frontend_reads.json]

REPO is an apache/tvm clone (bare is fine). At every release tag from v0.6.0 on, each
importer under python/tvm/relay/frontend/ is searched for attribute reads ``obj.NAME`` on a
variable (not ``self`` nor a TVM module) and for ``hasattr(obj, "NAME")``; a NAME a frontend
read in one release and guarded with hasattr from a later one is recorded with both releases
(the framework dropped it: the frontend learned to do without). `tk explain` answers
"'Node' object has no attribute 'node_indices'" from it: the framework release is newer than
that TVM's frontend, and the TVM release whose frontend copes.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_READ = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b(?!\s*=[^=])")
# modules, not the framework's objects: TVM's own and the frameworks' packages
_MODULES = {"self", "tvm", "relay", "_op", "op", "_expr", "expr", "np", "numpy", "tf",
            "keras", "torch", "onnx", "tflite", "_ty", "ty", "_function", "analysis",
            "_qnn", "qnn", "_make", "os", "sys", "math", "logging", "itertools", "re",
            "collections", "functools", "copy", "warnings", "json", "_dyn", "_vision",
            "_transform", "transform", "_random", "_nd", "nd", "mx", "_mx", "ir", "_ir",
            "_module", "_prelude", "prelude", "_infer_type", "paddle", "oneflow", "flow",
            "caffe", "coremltools", "cm", "ast", "string", "types", "base"}
_GUARD = re.compile(r"hasattr\(([a-z_][a-z0-9_]*),\s*[\"']([A-Za-z_]\w*)[\"']\)")
_FRONTENDS = ("keras", "tensorflow", "tensorflow2", "tflite", "onnx", "pytorch", "mxnet",
              "caffe", "caffe2", "coreml", "darknet", "paddlepaddle", "oneflow")


def table(repo: Path) -> dict[str, object]:
    """``releases`` and ``guarded``: attribute -> [[frontend, first index reading it, first
    index guarding it with hasattr], ...], for reads that came before their guard."""
    releases = tvm_tags.releases(repo, 6)
    first_read: dict[tuple[str, str], int] = {}
    first_guard: dict[tuple[str, str], int] = {}
    for index, tag in enumerate(releases):
        for fw in _FRONTENDS:
            path = f"python/tvm/relay/frontend/{fw}.py"
            if not tvm_tags.git(repo, "ls-tree", f"refs/tags/{tag}", "--", path).strip():
                continue
            for line in tvm_tags.git(repo, "show", f"refs/tags/{tag}:{path}").splitlines():
                if line.lstrip().startswith("#"):
                    continue
                for var, name in _READ.findall(line):
                    if var not in _MODULES and not name.startswith("__"):
                        first_read.setdefault((name, fw), index)
                for var, name in _GUARD.findall(line):
                    if var not in _MODULES:
                        first_guard.setdefault((name, fw), index)
    guarded: dict[str, list[list[object]]] = {}
    for (name, fw), since in sorted(first_guard.items()):
        read = first_read.get((name, fw))
        if read is not None and read < since:
            guarded.setdefault(name, []).append([fw, read, since])
    return {"releases": releases, "guarded": guarded}


def main() -> None:
    tvm_tags.write_table(
        __doc__, "frontend_reads.json",
        "apache/tvm python/tvm/relay/frontend/*.py at release tags v0.6.0 on: obj.NAME reads "
        "a frontend later guarded with hasattr (scripts/frontend_reads.py)",
        table)


if __name__ == "__main__":
    main()
