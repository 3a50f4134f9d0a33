"""A dump directory: what may be written where, and how a finished dump replaces an old one.

The dump is built in a temporary sibling directory and swapped in whole at the end, so a
directory from an earlier run is either kept or replaced, never half-overwritten. A pass
that raises still yields a complete dump (status ``failed``) and a ``repro.py``.

tk deletes or replaces only what it can prove it wrote: every dump carries a manifest
(:data:`MARKER`) naming each file tk put there with its sha256. A directory holding anything
else (a file the user added or edited, a copied ``index.json`` without a manifest) is refused,
never replaced because of one file's name. The private work directories carry the marker
from their first moment, so those a killed run left behind are recognised and reaped.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.dumpir import index
from toolkit.dumpir.store import write_atomic
from toolkit.errors import TvmFailure, UserError
from toolkit.outputs import probe_writable, read_manifest, sha256_file
from toolkit.outputs import write_manifest as write_manifest_file

MODULES = "modules"
# "+SEQ NAME" when a pass starts, "-SEQ" when it ends: what survives a segfault in a pass.
JOURNAL = "passes.journal"
FAILED = "failed"
MARKER = ".tk-dump"
MARKER_FORMAT = "tk-dump-files/1"


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
    """Refuse a directory unless it is new, empty, or exactly a dump tk wrote (user data is
    never touched)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} exists and is not a directory")
    probe_writable(out.parent, f"-o {out}")  # the dump is made beside it, then renamed
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not (out / MARKER).is_file():
        what = ("holds an index.json but no tk manifest (.tk-dump): tk replaces only a dump it "
                "can prove it wrote" if (out / index.INDEX).exists()
                else "is not empty and is not a tk dump")
        raise UserError(f"{out} {what}; pick a new or empty directory")
    stranger = foreign_file(out)
    if stranger is not None:
        raise UserError(
            f"{out} holds {stranger}, which tk did not write (or which changed since); tk "
            "replaces only its own files: move it out or pick a new or empty directory")


def foreign_file(out: Path) -> str | None:
    """The first path under ``out`` that its manifest does not vouch for, or None."""
    files = read_manifest(out / MARKER, MARKER_FORMAT)
    if files is None:
        return MARKER
    dirs = {str(Path(f).parent) for f in files}
    dirs |= {str(p) for f in files for p in Path(f).parents}
    for root, subdirs, names in os.walk(out):
        rel_root = Path(root).relative_to(out)
        for d in subdirs:
            rel = rel_root / d
            if Path(root, d).is_symlink() or str(rel) not in dirs:
                return str(rel)
        for name in names:
            rel = str(rel_root / name)
            if rel == MARKER:
                continue
            path = Path(root, name)
            if rel not in files or path.is_symlink() or sha256_file(path) != files[rel]:
                return rel
    return None


def write_manifest(work: Path) -> None:
    """Name every file now in ``work`` as tk's own (the last file a dump writes)."""
    files = {}
    for root, _, names in os.walk(work):
        for name in names:
            path = Path(root, name)
            rel = str(path.relative_to(work))
            if rel != MARKER:
                files[rel] = sha256_file(path)
    write_manifest_file(work / MARKER, MARKER_FORMAT, files)


def work_dir(out: Path) -> Path:
    """A private sibling of ``out`` to build the dump in (swapped in by :func:`swap_in`).

    Marked at once (an empty manifest) so that, should this process die, a later run knows
    the directory as tk's and reaps it.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tk-{os.getpid()}-", dir=out.parent))
    work.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the dump is an ordinary directory
    write_atomic(work / MARKER, json.dumps({"format": MARKER_FORMAT, "files": {}}).encode())
    return work


@dataclass(frozen=True)
class DeadRun:
    """A run into the same directory whose process died, as its work directory tells."""

    pid: int
    running: tuple[int, str] | None  # (seq, name) of the pass it died inside, from the journal

    def note(self) -> str | None:
        if self.running is None:
            return None
        seq, name = self.running
        return f"an earlier run (pid {self.pid}) died inside pass {name} (#{seq})"


def reap_dead_runs(out: Path) -> list[DeadRun]:
    """Remove the private directories of earlier runs into ``out`` whose process died.

    Only directories named like :func:`work_dir`'s, with a dead pid and tk's marker inside, are
    removed. Returns each such run, with the pass it died inside (a segfault) when its journal
    says one was running.
    """
    dead = []
    for work in sorted(out.parent.glob(f".{glob.escape(out.name)}.tk-*-*")):
        pid = work.name[len(out.name) + 5:].split("-")[0]
        if (not pid.isdigit() or _alive(int(pid)) or work.is_symlink()
                or not (work / MARKER).is_file()):
            continue
        journal = work / JOURNAL
        running: dict[str, str] = {}
        if journal.is_file():
            for line in journal.read_text(errors="replace").splitlines():
                if line.startswith("+"):
                    seq, _, name = line[1:].partition(" ")
                    if seq.isdigit():
                        running[seq] = name
                elif line.startswith("-"):
                    running.pop(line[1:], None)
        innermost = list(running.items())[-1] if running else None
        dead.append(DeadRun(int(pid), (int(innermost[0]), innermost[1]) if innermost else None))
        shutil.rmtree(work, ignore_errors=True)
    return dead


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


def update(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (names relative to ``out``) into the dump ``out``, manifest and all.

    Built as a dump is: the other files hard-linked into a work directory (tk replaces its
    files whole, never edits them in place), the new ones written, the manifest made, the
    whole swapped in; a reader or a kill sees the old dump or the new one, never half.
    """
    check_output_dir(out)
    work = work_dir(out)
    try:
        shutil.copytree(out, work, dirs_exist_ok=True, copy_function=os.link,
                        ignore=lambda root, names: [MARKER, *files] if root == str(out) else [])
        for name, data in files.items():
            write_atomic(work / name, data)
        write_manifest(work)
        swap_in(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def swap_in(work: Path, out: Path) -> None:
    """Make ``work`` become ``out``; an earlier dump there is replaced as a whole."""
    if out.is_dir():
        # Checked again: another process may have written there while we compiled.
        check_output_dir(out)
        # Renamed onto an empty directory of ours (named like a work directory, so a kill
        # right here leaves something the next run reaps), then removed.
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.tk-{os.getpid()}-old-", dir=out.parent))
        os.replace(out, old)
        try:
            os.replace(work, out)
        except OSError:
            os.replace(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(work, out)
