"""Regenerate tk's table of what each TVM release's Python build imports and declares.

    python scripts/build_requires.py REPO [--out toolkit/data/explain/build_requires.json]

REPO is an apache/tvm clone (bare is fine). At every release tag (v0.N and v0.N.0): the
modules outside Python's standard library that python/setup.py imports (Cython in
config_cython, numpy, ...), and the build requirements each pyproject.toml of the tree declares
(``[build-system] requires``; python/pyproject.toml from v0.20.0, the top-level one when it
builds the package). `tk explain` answers pip's and uv's isolated builds from it: an isolated
build installs only the declared requirements, so a module setup.py imports and no
pyproject.toml declares is missing there.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tvm_tags

_IMPORT = re.compile(r"^\s*(?:from|import)\s+(\w+)", re.MULTILINE)
_BUILD_SYSTEM = re.compile(r"^\[build-system\](?P<body>.*?)(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
_REQUIRES = re.compile(r"requires\s*=\s*\[(?P<list>[^\]]*)\]", re.DOTALL)
_NAME = re.compile(r"[\"']\s*([A-Za-z0-9_.-]+)")


def _show(repo: Path, tag: str, path: str) -> str | None:
    listed = tvm_tags.git(repo, "ls-tree", "--name-only", f"refs/tags/{tag}", "--", path)
    return tvm_tags.git(repo, "show", f"refs/tags/{tag}:{path}") if listed.strip() else None


def collect(repo: Path) -> list[dict[str, object]]:
    releases = []
    for tag in tvm_tags.releases(repo, bare=True):
        entry: dict[str, object] = {"tag": tag}
        setup = _show(repo, tag, "python/setup.py")
        if setup is not None:
            entry["setup_imports"] = sorted({m for m in _IMPORT.findall(setup)
                                             if m not in sys.stdlib_module_names
                                             and m not in ("tvm", "__future__")})
        declared = {}
        for path in ("python/pyproject.toml", "pyproject.toml"):
            text = _show(repo, tag, path)
            build = _BUILD_SYSTEM.search(text or "")
            requires = _REQUIRES.search(build.group("body")) if build else None
            if requires:
                declared[path] = [n.lower() for n in _NAME.findall(requires.group("list"))]
        entry["declared"] = declared
        releases.append(entry)
    return releases


def main() -> None:
    tvm_tags.write_table(
        __doc__, "build_requires.json",
        "apache/tvm python/setup.py and pyproject.toml [build-system] at each release tag "
        "(scripts/build_requires.py)",
        lambda repo: {"releases": collect(repo)})


if __name__ == "__main__":
    main()
