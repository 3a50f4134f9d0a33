"""Regenerate tk's table of the Python version each TVM release requires.

    python scripts/python_versions.py REPO [--out toolkit/data/explain/python_versions.json]

REPO is an apache/tvm clone (bare is fine). At every release tag (v0.N and v0.N.0) TVM's
Python package is searched for its import-time check (python/tvm/_pyversion.py, later
_ffi/_pyversion.py and base.py: "The minimal Python requirement is Python 3.6") and its
packaging metadata (python/setup.py's python_requires, pyproject.toml's requires-python).
`tk explain` answers "The minimal Python requirement is Python 3.6" and pip's "requires a
different Python" from it: which releases ask for that Python, and which asked for less.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_CHECK = re.compile(r"minimal Python requirement is Python (\d+\.\d+)")
_META = re.compile(r"(?:python_requires\s*=\s*|requires-python\s*=\s*)[\"']>=\s*(\d+\.\d+)")


def collect(repo: Path) -> list[dict[str, str]]:
    releases = []
    for tag in tvm_tags.releases(repo, bare=True):
        entry = {"tag": tag}
        hits = tvm_tags.git(repo, "grep", "-E", "minimal Python requirement is Python|python_requires|"
                    "requires-python", f"refs/tags/{tag}", "--", "python", "pyproject.toml")
        for line in hits.splitlines():
            _ref, path, text = line.split(":", 2)
            for key, pattern in (("check", _CHECK), ("metadata", _META)):
                found = pattern.search(text)
                if found and key not in entry:
                    entry[key], entry[f"{key}_file"] = found.group(1), path
        releases.append(entry)
    return releases


def main() -> None:
    tvm_tags.write_table(
        __doc__, "python_versions.json",
        "apache/tvm python/ and pyproject.toml at each release tag "
        "(scripts/python_versions.py)",
        lambda repo: {"releases": collect(repo)})


if __name__ == "__main__":
    main()
