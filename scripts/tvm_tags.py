"""What the table generators beside this file share: git's output and the release tags of an
apache/tvm clone (bare is fine), and their command line."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "toolkit" / "data" / "explain"


def git(repo: Path, *args: str) -> str:
    """git's output; ``git grep`` finding nothing is an empty answer, any other failure ends
    the script with git's words."""
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if run.returncode and not (args[0] == "grep" and run.returncode == 1):
        raise SystemExit(f"git {' '.join(args)}: {run.stderr.strip()}")
    return run.stdout


def releases(repo: Path, first: int = 0, bare: bool = False) -> list[str]:
    """The release tags ``v0.N.0`` from ``v0.{first}.0`` on, oldest first (``bare``: the early
    ``v0.N`` tags too)."""
    form = r"v0\.\d+(?:\.0)?" if bare else r"v0\.\d+\.0"
    tags = [t for t in git(repo, "tag", "-l", "v0.*").split()
            if re.fullmatch(form, t) and int(t.split(".")[1]) >= first]
    return sorted(tags, key=lambda t: int(t.split(".")[1]))


def write_table(doc: str, name: str, source: str, make: Callable[[Path], dict]) -> None:
    """The command line of every generator (``REPO [--out FILE]``): ``{"source": SOURCE,
    **make(REPO)}`` written as JSON, by default to toolkit/data/explain/NAME."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--out", type=Path, default=DATA / name)
    args = parser.parse_args()
    table = {"source": source, **make(args.repo)}
    args.out.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    sizes = ", ".join(f"{len(v)} {k}" for k, v in table.items() if k != "source")
    print(f"{sizes} -> {args.out}")
