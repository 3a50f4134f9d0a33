"""What the tests of explain's generated tables share: the best answer's words, and a table
generator (scripts/) run on a real git repository with release tags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolkit.explain import best

REPO = Path(__file__).resolve().parent.parent


def top_said(text: str) -> tuple[str, str]:
    """The best finding's rule and its words (title, cause, fix)."""
    top = best(text)
    assert top is not None
    return top.id, f"{top.title} {top.cause} {top.fix}"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def release(repo: Path, *tags: str) -> None:
    """Commit everything in ``repo`` (a repository from its first release on) and tag it."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", tags[0])
    for tag in tags:
        git(repo, "tag", tag)


def generate(script: str, repo: Path) -> dict:
    """Run ``scripts/SCRIPT`` on ``repo`` and read the table it writes."""
    out = repo.parent / f"{Path(script).stem}.json"
    subprocess.run([sys.executable, str(REPO / "scripts" / script), str(repo), "--out", str(out)],
                   check=True)
    return json.loads(out.read_text())
