"""Write a dump directory: compile a workload under the recorder, then index, page and repro.

The dump is built in a temporary sibling directory and swapped in whole at the end, so a
directory from an earlier run is either kept or replaced, never half-overwritten. A pass
that raises still yields a complete dump (status ``failed``) and a ``repro.py``.
"""

from __future__ import annotations

import datetime
import glob
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit import compat, stack
from toolkit.dumpir import html, index
from toolkit.dumpir.instrument import Recorder, instrument
from toolkit.dumpir.repro import write_repro
from toolkit.dumpir.store import DIRECTORY as STORE
from toolkit.dumpir.store import FunctionStore, write_atomic
from toolkit.errors import TkError, TvmFailure, UserError
from toolkit.workload import Workload

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


def dump(
    workload: Workload,
    target_spec: str,
    out: Path,
    *,
    passes: str | None = None,
    funcs: str | None = None,
    full_modules: bool = False,
    pass_config: dict[str, Any] | None = None,
) -> DumpResult:
    """Compile ``workload`` for ``target_spec`` recording every pass into ``out``."""
    check_output_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    crashed = crashed_runs(out)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tk-{os.getpid()}-", dir=out.parent))
    work.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the dump is an ordinary directory
    try:
        result = _record(
            workload, target_spec, work, out, passes, funcs, full_modules, pass_config
        )
        _swap_in(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    result.directory = out
    result.crashed_runs = crashed
    return result


def _record(
    workload: Workload, target_spec: str, work: Path, out: Path,
    passes: str | None, funcs: str | None,
    full_modules: bool, pass_config: dict[str, Any] | None,
) -> DumpResult:
    store = FunctionStore(work / STORE)
    journal = (work / JOURNAL).open("w")
    recorder = Recorder(
        store, modules_dir=work / MODULES if full_modules else None,
        pass_glob=passes, func_glob=funcs, journal=journal,
    )
    failure: TvmFailure | None = None
    failed_at = 0.0
    start = time.perf_counter()
    try:
        stack.compile(
            workload, target_spec, instruments=[instrument(recorder)], pass_config=pass_config
        )
    except TvmFailure as e:
        failure, failed_at = e, time.perf_counter()
    journal.close()
    (work / JOURNAL).unlink()
    try:
        recorder.finish()
    except Exception as e:  # noqa: BLE001 - a bug of ours, not a failure of the pass
        raise TkError(f"dump-ir's pass instrument failed: {type(e).__name__}: {e}") from e
    seconds = time.perf_counter() - start

    failed_pass = None
    if failure is not None:
        cause = failure.__cause__ or failure
        frame = recorder.fail(_error_text(cause), failed_at)
        if frame is not None:
            failed_pass = frame.record
            failed_pass.module = _save_failed(work, frame.mod, workload.mod)
            write_repro(work, failed_pass.name, workload.source, target_spec, pass_config)
            failure = TvmFailure(
                f"pass {failed_pass.name} (#{failed_pass.seq}) raised while compiling "
                f"{workload.source} for {target_spec}: {_first_line(cause)}",
                reproduce=f"python {out / 'repro.py'}",
            )

    records = recorder.records
    leaves = [r for r in records if r.kind == "pass"]
    summary = {
        "workload": workload.source,
        "target": target_spec,
        "tvm_version": getattr(compat.tvm(), "__version__", "unknown"),
        "status": "failed" if failure else "ok",
        "failed_pass": failed_pass.seq if failed_pass else None,
        "passes": len(leaves),
        "wrappers": len(records) - len(leaves),
        "changed_passes": sum(1 for r in leaves if r.change not in (None, index.UNCHANGED)),
        "functions_stored": len(store.loaded()),
        "compile_seconds": round(seconds, 4),
        "instrument_seconds": round(recorder.overhead, 4),
        "worker_seconds": round(recorder.worker_seconds, 4),
        "pass_filter": passes,
        "func_filter": funcs,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    dump_index = index.DumpIndex(summary, recorder.input or {}, records)
    index.write(work, dump_index)
    write_atomic(work / "index.html", html.render(dump_index, store.loaded()).encode())
    return DumpResult(work, dump_index, failure)


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


def _error_text(e: BaseException) -> str:
    lines = [ln.rstrip() for ln in str(e).splitlines() if ln.strip()]
    return "\n".join(lines[-20:]) if lines else type(e).__name__


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


def _save_failed(work: Path, received: Any, compile_input: Any) -> str:
    """The module as the failing pass received it, and the one the compile started from."""
    directory = work / FAILED
    directory.mkdir(exist_ok=True)
    for name, mod in (("input.py", received), ("compile_input.py", compile_input)):
        try:
            text = mod.script()
        except Exception as e:  # noqa: BLE001 - keep going: the index still says what failed
            text = f"# printing the module failed: {e}\n"
        write_atomic(directory / name, text.encode())
    return f"{FAILED}/input.py"


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _swap_in(work: Path, out: Path) -> None:
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
