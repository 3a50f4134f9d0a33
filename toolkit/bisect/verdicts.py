"""Verdicts already known: a check's outcome per (build, check, check inputs), kept across
bisections, so a second bisection over the same range runs nothing it already knows.

The key of a commit's verdict is built from what decides it: the build's identity (the
artifact-store key, or the user's build command and the tree), the commit's tree (the check
runs in the worktree: Python files and in-tree scripts change verdicts without changing the
build), the check's words with the content of any file they name outside the tree, and how
outcomes become verdicts (``--regress``, ``--timeout``, ``--on-timeout``). All of it comes
from git objects and the state, so a known verdict needs no checkout and no build.

A verdict is firm only when every run agreed: an entry counts its agreeing runs, serves a
request for ``n`` runs only when it holds at least ``n``, and becomes flaky for good (never
served) the first time a run disagrees. Timeouts and skips are never kept: they say more
about the machine's load than about the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.bisect.verdict import BAD, GOOD
from toolkit.build.store import cache_root

FIRM = (GOOD, BAD)
# A check word naming a file bigger than this (an interpreter, a compiler) is identified by
# size and modification time instead of content: hashing it at every step would cost more
# than it protects.
HASH_LIMIT = 1 << 20


def root() -> Path:
    return cache_root() / "bisect-verdicts"


@dataclass(frozen=True)
class Known:
    verdict: str
    reason: str
    runs: int  # agreeing runs behind it
    returncodes: list[int | None]
    output_tail: str


def file_identity(word: str, tree: Path) -> str | None:
    """What a check word contributes beyond its text: the content of a file outside the tree
    (a file inside it is covered by the tree's hash)."""
    path = Path(word)
    if not path.is_absolute() or not path.is_file():
        return None
    try:
        path.resolve().relative_to(tree.resolve())
        return None
    except ValueError:
        pass
    st = path.stat()
    if st.st_size > HASH_LIMIT:
        return f"{st.st_size}:{st.st_mtime_ns}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_identity(argv: Sequence[str], regress: str, timeout: float | None, on_timeout: str,
                   tree: Path) -> str:
    parts = [json.dumps(list(argv)), regress, repr(timeout), on_timeout]
    parts += [ident for w in argv if (ident := file_identity(w, tree)) is not None]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class VerdictCache:
    """Known verdicts, one file each under ``root()``; ``key_of(sha)`` names a commit's."""

    def __init__(self, key_of: Callable[[str], str], directory: Path | None = None) -> None:
        self.key_of = key_of
        self.directory = directory or root()

    def _path(self, sha: str) -> Path:
        return self.directory / f"{self.key_of(sha)}.json"

    def _read(self, sha: str) -> dict | None:
        try:
            return json.loads(self._path(sha).read_text())
        except (OSError, ValueError):
            return None

    def lookup(self, sha: str, runs: int) -> Known | None:
        """The verdict of ``sha`` when at least ``runs`` agreeing runs stand behind it."""
        data = self._read(sha)
        if not data or data.get("flaky") or data.get("runs", 0) < runs:
            return None
        try:
            return Known(data["verdict"], data["reason"], data["runs"],
                         list(data.get("returncodes", [])), data.get("output_tail", ""))
        except KeyError:
            return None

    def add(self, sha: str, verdict: str, reason: str, returncodes: Sequence[int | None],
            output_tail: str) -> None:
        """Record agreeing runs of a firm verdict; one that contradicts the verdict known makes
        it flaky. Anything else (a skip, a timeout) teaches nothing and is not kept."""
        data = self._read(sha) or {}
        if data.get("flaky") or verdict not in FIRM:
            return
        if data and data.get("verdict") != verdict:
            self.spoil(sha, f"{data.get('verdict')} before, {verdict} now")
            return
        self._write(sha, {"verdict": verdict, "reason": reason,
                          "runs": data.get("runs", 0) + len(returncodes),
                          "returncodes": list(returncodes), "output_tail": output_tail})

    def spoil(self, sha: str, reason: str) -> None:
        """Runs of ``sha`` disagreed: whatever was known of it is flaky from now on."""
        self._write(sha, {"flaky": True, "reason": reason})

    def _write(self, sha: str, data: dict) -> None:
        path = self._path(sha)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # a concurrent reader sees all or none
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
