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

import argparse
import json
import re
import subprocess
from pathlib import Path

OUT = (Path(__file__).resolve().parent.parent / "toolkit" / "data" / "explain"
       / "python_versions.json")
_CHECK = re.compile(r"minimal Python requirement is Python (\d+\.\d+)")
_META = re.compile(r"(?:python_requires\s*=\s*|requires-python\s*=\s*)[\"']>=\s*(\d+\.\d+)")


def _git(repo: Path, *args: str) -> str:
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if run.returncode and not (args[0] == "grep" and run.returncode == 1):  # 1: no match
        raise SystemExit(f"git {' '.join(args)}: {run.stderr.strip()}")
    return run.stdout


def _tags(repo: Path) -> list[str]:
    tags = [t for t in _git(repo, "tag").split() if re.fullmatch(r"v0\.\d+(?:\.0)?", t)]
    return sorted(tags, key=lambda t: int(t.split(".")[1]))


def collect(repo: Path) -> list[dict[str, str]]:
    releases = []
    for tag in _tags(repo):
        entry = {"tag": tag}
        hits = _git(repo, "grep", "-E", "minimal Python requirement is Python|python_requires|"
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    table = {"source": "apache/tvm python/ and pyproject.toml at each release tag "
                       "(scripts/python_versions.py)", "releases": collect(args.repo)}
    args.out.write_text(json.dumps(table, indent=0) + "\n")
    print(f"{len(table['releases'])} releases -> {args.out}")


if __name__ == "__main__":
    main()
