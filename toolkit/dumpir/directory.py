"""A dump directory: what may be written where, and how a finished dump replaces an old one.

The dump is built in a temporary sibling directory and swapped in whole at the end, so a
directory from an earlier run is either kept or replaced, never half-overwritten. A pass
that raises still yields a complete dump (status ``failed``) and a ``repro.py``.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.dumpir import index
from toolkit.errors import TvmFailure, UserError

MODULES = "modules"
# "+SEQ NAME" when a pass starts, "-SEQ" when it ends: what survives a segfault in a pass.
JOURNAL = "passes.journal"
FAILED = "failed"


@dataclass
class DumpResult:
    directory: Path
    index: index.DumpIndex
    failure: TvmFailure | None
    crashed_runs: list[str] = field(default_factory=list)  # notes on earlier runs that died

    @property
    def summary(self) -> dict[str, Any]:
        return self.index.summary


def check_output_dir(out: Path) -> None:
    """Refuse a directory tk would have to mix its files into (user data is never touched)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not index.is_dump(out):
        raise UserError(
            f"{out} is not empty and is not a tk dump; pick a new or empty directory"
        )


def work_dir(out: Path) -> Path:
    """A private sibling of ``out`` to build the dump in (swapped in by :func:`swap_in`)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tk-{os.getpid()}-", dir=out.parent))
    work.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the dump is an ordinary directory
    return work


def crashed_runs(out: Path) -> list[str]:
    """Notes on earlier runs into ``out`` whose process died (a segfault in a pass).

    Their private directories are left alone (they hold what was recorded); the journal
    says which pass was running.
    """
    notes = []
    for work in sorted(out.parent.glob(f".{glob.escape(out.name)}.tk-*-*")):
        pid = work.name[len(out.name) + 5:].split("-")[0]
        journal = work / JOURNAL
        if not pid.isdigit() or _alive(int(pid)) or not journal.is_file():
            continue
        running: dict[str, str] = {}
        for line in journal.read_text().splitlines():
            if line.startswith("+"):
                seq, _, name = line[1:].partition(" ")
                running[seq] = name
            elif line.startswith("-"):
                running.pop(line[1:], None)
        if running:
            seq, name = list(running.items())[-1]
            notes.append(f"an earlier run died inside pass {name} (#{seq}); "
                         f"what it recorded is in {work}")
    return notes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def swap_in(work: Path, out: Path) -> None:
    """Make ``work`` become ``out``; an earlier dump there is replaced as a whole."""
    if out.is_dir():
        # Checked again: another process may have written there while we compiled.
        check_output_dir(out)
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / "dump")
        try:
            os.replace(work, out)
        except OSError:
            os.replace(old / "dump", out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(work, out)
