"""Verdicts: what a check's outcome means (good, bad, skip or stop), and the verdicts already
known, kept across bisections.

A probe is one run of the check on one commit. Its raw outcome (exit status, output,
timeout, build failure) becomes a verdict through the user's ``--regress`` mode (``classify``);
``--count`` probes of one commit are folded into one verdict, and disagreement among them is
flaky (``combine``).

Known verdicts (``VerdictCache``): a check's outcome per (build, check, check inputs), so a
second bisection over the same range runs nothing it already knows. The key of a commit's
verdict is built from what decides it: the build's identity (the artifact-store key, or the
user's build command and the tree), the commit's tree (the check runs in the worktree: Python
files and in-tree scripts change verdicts without changing the build), the check's words with
the content of any file they name outside the tree, and how outcomes become verdicts
(``--regress``, ``--timeout``, ``--on-timeout``). All of it comes from git objects and the
state, so a known verdict needs no checkout and no build.

A verdict is firm only when every run agreed: an entry counts its agreeing runs, serves a
request for ``n`` runs only when it holds at least ``n``, and becomes flaky for good (never
served) the first time a run disagrees. Timeouts and skips are never kept: they say more
about the machine's load than about the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.bisect.protocol import (
    BAD,
    CHECK_NOT_EXECUTABLE,
    CHECK_NOT_FOUND,
    CHECK_SKIP,
    GOOD,
    SKIP,
    STOP,
)
from toolkit.errors import UserError
from toolkit.paths import cache_root

REGRESS_MODES = ("error", "success", "crash", "match:REGEX")


@dataclass(frozen=True)
class Outcome:
    """What one run of a check did."""

    returncode: int | None  # None when it timed out; negative when killed by a signal
    output: str = ""  # stdout and stderr together (tail kept for the report)
    seconds: float = 0.0
    timed_out: bool = False


@dataclass(frozen=True)
class Verdict:
    value: str  # GOOD, BAD, SKIP or STOP
    reason: str  # one line a person can read: "exit 1", "flaky: 2 good, 1 bad", ...

    def __str__(self) -> str:
        return f"{self.value} ({self.reason})"


def parse_regress(mode: str) -> str:
    """Validate a ``--regress`` value (``match:REGEX`` must compile)."""
    if mode in ("error", "success", "crash"):
        return mode
    if mode.startswith("match:"):
        try:
            re.compile(mode[len("match:"):])
        except re.error as e:
            raise UserError(f"--regress {mode!r}: bad regular expression: {e}") from None
        return mode
    raise UserError(f"--regress {mode!r}: expected one of {', '.join(REGRESS_MODES)}")


def crashed(returncode: int) -> bool:
    """Killed by a signal, directly (negative) or as a shell reports it (128+N)."""
    return returncode < 0 or returncode > 128


def classify(outcome: Outcome, regress: str = "error", timeout: str = "skip") -> Verdict:
    """One probe's verdict. 125 skips and 126/127 stop in every mode."""
    if outcome.timed_out:
        return Verdict(timeout, "timed out")
    rc = outcome.returncode
    assert rc is not None
    if rc == CHECK_SKIP:
        return Verdict(SKIP, "exit 125 (check says: cannot test)")
    if rc in (CHECK_NOT_EXECUTABLE, CHECK_NOT_FOUND):
        what = "not executable" if rc == CHECK_NOT_EXECUTABLE else "not found"
        return Verdict(STOP, f"exit {rc}: the check command is {what}; fix the check, then "
                             "'tk bisect run' continues")
    how = f"killed by signal {-rc if rc < 0 else rc - 128}" if crashed(rc) else f"exit {rc}"
    if regress == "error":
        return Verdict(GOOD if rc == 0 else BAD, how)
    if regress == "success":
        return Verdict(BAD if rc == 0 else GOOD, how)
    if regress == "crash":
        return Verdict(BAD if crashed(rc) else GOOD, how)
    pattern = regress[len("match:"):]
    found = re.search(pattern, outcome.output, re.MULTILINE)
    return Verdict(BAD if found else GOOD,
                   f"output {'matches' if found else 'does not match'} /{pattern}/ ({how})")


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Fold the ``--count`` probes of one commit: any stop stops; disagreement is flaky."""
    for v in verdicts:
        if v.value == STOP:
            return v
    values = [v.value for v in verdicts]
    if len(set(values)) == 1:
        return verdicts[0]
    tally = ", ".join(f"{values.count(x)} {x}" for x in (GOOD, BAD, SKIP) if x in values)
    return Verdict(SKIP, f"flaky: {tally} in {len(values)} runs")


def build_failed(policy: str) -> Verdict:
    """A commit that does not build: untestable (skip) unless the user said it is bad."""
    return Verdict(policy, "build failed")


# --- verdicts already known --------------------------------------------------------------
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
