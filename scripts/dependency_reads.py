"""Regenerate tk's table of the names TVM's Python code reads from the packages it imports.

    python scripts/dependency_reads.py REPO [--out toolkit/data/explain/dependency_reads.json]

REPO is an apache/tvm clone (bare is fine). At every release tag from v0.6.0 on, the Python
sources under python/tvm are searched for ``PACKAGE.NAME`` (``torch.broadcast_shapes``,
``np.asscalar``, ``tf.compat``), the package spelled as TVM's code imports it, and each
name is recorded with the releases whose code reads it and one file that does. `tk explain`
answers "module 'torch' has no attribute 'X'" from it: which TVM releases call X, so whether
the TVM in use was written for an older or a newer release of the package.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

# how TVM's code spells each package it imports (import torch; import numpy as np; ...)
ALIASES = {"torch": "torch", "np": "numpy", "numpy": "numpy", "tf": "tensorflow",
           "tensorflow": "tensorflow", "onnx": "onnx", "keras": "keras", "xgb": "xgboost",
           "xgboost": "xgboost", "ml_dtypes": "ml_dtypes", "scipy": "scipy",
           "psutil": "psutil", "tflite": "tflite", "paddle": "paddle", "mx": "mxnet",
           "coremltools": "coremltools", "cloudpickle": "cloudpickle"}
_NAMES = "|".join(sorted(ALIASES, key=len, reverse=True))
_READ = re.compile(r"(?<![\w.])(" + _NAMES + r")\.([A-Za-z_]\w*)")
# a read TVM's code makes only when the package has the name (it falls back otherwise)
_GUARD = re.compile(r"hasattr\((" + _NAMES + r"),\s*[\"'](\w+)[\"']\)")


def table(repo: Path) -> dict[str, object]:
    """``releases`` (the tags, oldest first) and ``reads``: package -> name -> [first index,
    last index, a file reading it at the last, the first index whose code checks
    ``hasattr(package, name)`` before it (-1: none)]; a name read in non-adjacent releases
    keeps its first and last (the table says where it was read, not every gap)."""
    releases = tvm_tags.releases(repo, 6)
    reads: dict[str, dict[str, list[object]]] = {}
    pattern = "(" + "|".join(ALIASES) + r")\.[A-Za-z_]|hasattr\((" + "|".join(ALIASES) + "),"
    for index, tag in enumerate(releases):
        out = tvm_tags.git(repo, "grep", "-E", pattern, f"refs/tags/{tag}", "--", "python/tvm")
        for line in out.splitlines():
            _ref, path, text = line.split(":", 2)
            if text.lstrip().startswith("#"):
                continue
            for alias, name in _READ.findall(text):
                entry = reads.setdefault(ALIASES[alias], {}).setdefault(
                    name, [index, index, path, -1])
                entry[1], entry[2] = index, path
            for alias, name in _GUARD.findall(text):
                entry = reads.setdefault(ALIASES[alias], {}).setdefault(
                    name, [index, index, path, -1])
                if entry[3] == -1:
                    entry[3] = index
    return {"releases": releases,
            "reads": {pkg: dict(sorted(names.items())) for pkg, names in sorted(reads.items())}}


def main() -> None:
    tvm_tags.write_table(
        __doc__, "dependency_reads.json",
        "apache/tvm python/tvm at release tags v0.6.0 on: PACKAGE.NAME reads "
        "(scripts/dependency_reads.py)",
        table)


if __name__ == "__main__":
    main()
