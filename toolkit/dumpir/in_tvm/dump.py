"""Compile a workload under dump-ir's recorder into a work directory (the in-TVM half).

``toolkit.dumpir.directory`` says what may be written where (refusal, swap-in); this module
runs the compile, indexes what the recorder saw and, when a pass raises, writes its repro.
The function texts are not printed here: ``render.py`` prints them when first asked for, by
compiling again with what the index's ``Recompile`` records.
"""

from __future__ import annotations

import datetime
import hashlib
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from toolkit import outputs, process, reproduce, stack
from toolkit.cause import first_cause as first_cause_of
from toolkit.cause import one_line
from toolkit.dumpir import directory, index
from toolkit.dumpir.directory import FAILED, JOURNAL, MODULES, DumpResult
from toolkit.dumpir.in_tvm import repro
from toolkit.dumpir.in_tvm.recorder import HOST_KINDS, Recorder, instrument
from toolkit.dumpir.store import PACK, FunctionStore, write_atomic
from toolkit.errors import TkError, TvmFailure
from toolkit.libraries import mapped_paths
from toolkit.stack import codegen, compat
from toolkit.stack import target as targets
from toolkit.stack.workload import Workload


def dump(
    workload: Workload,
    target: str | targets.Target,
    out: Path,
    *,
    passes: str | None = None,
    funcs: str | None = None,
    full_modules: bool = False,
    pass_config: dict[str, Any] | None = None,
    verify: bool = False,
    assembly: bool = False,
    after_crash: process.Crash | None = None,
    extensions: tuple[str, ...] = (),
) -> DumpResult:
    """Compile ``workload`` for ``target`` recording every pass into ``out``.

    A pass that crashes the process (a segfault in TVM) takes every text recorded in memory
    with it. Under tk's guard the first run asks for a second (``process.rerun_after_crash``),
    which comes back here with ``after_crash``: it compiles again and stops before the pass
    the first run died inside, so the dump holds every pass before it, the module it
    received and a repro.py, as for a pass that raised.

    ``extensions``: the ``--ext`` specs the caller loaded, recorded so that the texts are
    rendered with them loaded too.
    """
    directory.check_output_dir(out)
    target = targets.resolve(target)
    dead = directory.reap_dead_runs(out)
    crashed_in = None
    if after_crash is not None:
        first = next((d for d in dead if d.pid == after_crash.pid), None)
        dead = [d for d in dead if d is not first]
        if first is None or first.running is None:
            raise TvmFailure(
                f"compiling {workload.source} for {target.spec} killed the process "
                f"({process.signal_name(after_crash.signal)}) outside any pass (in code generation, or "
                "after it): there is no pass to stop before, and no dump",
                reproduce=reproduce.tk_command("dump-ir", workload.source, target.spec,
                                               "-o", str(out)))
        crashed_in = first.running
    else:
        process.rerun_after_crash()
    crashed = [note for d in dead if (note := d.note()) is not None]
    with outputs.users(out):
        work = directory.work_dir(out)
        try:
            result = record(
                workload, target, work, out, passes, funcs, full_modules,
                pass_config, crashed, verify, assembly,
                crash=None if after_crash is None else (after_crash.signal, crashed_in),
                extensions=extensions,
            )
            directory.write_manifest(work)
            directory.swap_in(work, out)
        except BaseException as e:
            shutil.rmtree(work, ignore_errors=True)
            if isinstance(e, OSError) and e.errno in outputs.ENVIRONMENT:
                raise outputs.refused(e, f"-o {out}") from None
            raise
    result.directory = out
    result.crashed_runs = crashed
    return result


def record(
    workload: Workload, target: targets.Target, work: Path, out: Path,
    passes: str | None, funcs: str | None,
    full_modules: bool, pass_config: dict[str, Any] | None, crashed: list[str],
    verify: bool = False, assembly: bool = False,
    crash: tuple[int, tuple[int, str]] | None = None,
    extensions: tuple[str, ...] = (),
) -> DumpResult:
    """``crash``: (signal, (seq, name)) - the first run died of that signal while that pass ran;
    stop before it."""
    store = FunctionStore(work / PACK)  # the generated sources (read back, not printed)
    journal = (work / JOURNAL).open("w")
    recorder = Recorder(
        modules_dir=work / MODULES if full_modules else None,
        pass_glob=passes, func_glob=funcs, journal=journal,
        stop_before=None if crash is None else crash[1],
    )
    failure: TvmFailure | None = None
    failed_at = 0.0
    start = time.perf_counter()
    try:
        with codegen.capture(assembly) as codegens, \
                codegen.dlight_rules(compat.structural_hash()) as rules:
            stack.compile(
                workload, target, instruments=[instrument(recorder)],
                pass_config=pass_config,
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
    died = None if recorder.stopped is None or crash is None else crash[0]
    if failure is not None:
        cause = failure.__cause__ or failure
        error = (_error_text(cause) if died is None else
                 f"the process died of {process.signal_name(died)} while this pass ran")
        frame = recorder.fail(error, failed_at)
        if frame is not None:
            failed_pass = frame.record
            failed_pass.module = _save_failed(work, frame.mod, workload.mod)
            script = repro.write_repro(work, failed_pass.name, workload.source, target.spec,
                                 pass_config)
            why_not = (repro.verify(script, first_cause_of(cause).message()) if died is None
                       else repro.verify_crash(script, died))
            failed_pass.repro = "reproduces" if why_not is None else f"does not reproduce: {why_not}"
            which = f"pass {failed_pass.name} (#{failed_pass.seq})"
            # A crash is only known to have come while the pass ran (the journal says which
            # was running): the repro's verdict says whether the pass alone brings it back.
            what = (f"{which} raised while compiling {workload.source} for {target.spec}: "
                    f"{one_line(cause)}" if died is None else
                    f"the process died of {process.signal_name(died)} while {which} ran, compiling "
                    f"{workload.source} for {target.spec}; a second run stopped before that "
                    f"pass: the dump holds every pass before it and the module it received "
                    f"({out / FAILED / 'input.py'})")
            failure = TvmFailure(
                what
                + ("" if why_not is None else f"\n  {out / 'repro.py'} does not reproduce it "
                   f"({why_not}): rerun the dump-ir command"),
                reproduce=shlex.join(["python", str(out / "repro.py")]) if why_not is None
                else reproduce.tk_command("dump-ir", workload.source, target.spec,
                                          "-o", str(out)),
            )

    records = recorder.records
    for record, vids in recorder.inputs_of(SCHEDULER):
        record.schedule_rules = {name: rules[vid] for name, vid in vids.items() if vid in rules}
    verify_failure = _codegen_records(records, codegens, store, work, verify, out)
    if failure is None and verify_failure is not None:
        failure = verify_failure
    if failed_pass is None and failure is not None:
        # Codegen raised (or nvcc rejected its output): that record is the failure.
        failed_pass = next((r for r in records if r.kind == index.CODEGEN
                            and r.status == "failed"), None)
    first_cause = None
    if failure is not None:
        first_cause = one_line(failed_pass.error if failed_pass and failed_pass.error
                               else str(failure))
    leaves = [r for r in records if r.kind in index.LEAF_KINDS]
    summary = {
        "workload": workload.source,
        "target": target.spec,
        "tvm_version": getattr(compat.tvm(), "__version__", "unknown"),
        "status": "failed" if failure else "ok",
        "failed_pass": failed_pass.seq if failed_pass else None,
        "first_cause": first_cause,  # the line that says what went wrong (headers, compare)
        "passes": len(leaves),
        "wrappers": sum(1 for r in records if r.kind == index.WRAPPER),
        "changed_passes": sum(1 for r in leaves if r.change not in (None, index.UNCHANGED)),
        "functions_stored": recorder.versions + len(store.loaded()),
        "compile_seconds": round(seconds, 4),
        "instrument_seconds": round(recorder.overhead, 4),
        "worker_seconds": round(recorder.worker_seconds, 4),
        "pass_filter": passes,
        "func_filter": funcs,
        "earlier_crashes": crashed,  # runs into the same directory that died (reaped)
        # This is the second run of a command whose first died inside a pass: which, of what,
        # and whether this run stopped before it (the crash repeated) or went past it.
        "first_run_crash": None if crash is None else {
            "signal": process.signal_name(crash[0]), "seq": crash[1][0], "pass": crash[1][1],
            "stopped_before_it": died is not None},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    recompile = index.Recompile(
        workload=_workload_source(workload), workload_sha256=_workload_sha256(workload),
        target=target.spec, extensions=[str(Path(e).resolve()) for e in extensions],
        passes=passes, funcs=funcs, pass_config=pass_config,
        tvm_version=summary["tvm_version"], tvm_build=tvm_build(),
        # The second compile stops where this one did: before the pass the first run died
        # in, when this run reached it; a crash that did not repeat left a whole compile.
        stop_before=None if recorder.stopped is None else (recorder.stopped.seq,
                                                           recorder.stopped.name),
    )
    dump_index = index.DumpIndex(summary, recorder.input or {}, records, recompile)
    index.write(work, dump_index)
    store.save()
    if crash is not None and died is None:
        failure = _crash_not_repeated(crash, failure, workload, target, out)
    return DumpResult(work, dump_index, failure)


def _workload_source(workload: Workload) -> str:
    source = workload.source
    return source if source.startswith("builtin:") else str(Path(source).resolve())


def _workload_sha256(workload: Workload) -> str | None:
    if workload.source.startswith("builtin:"):
        return None
    return hashlib.sha256(Path(workload.source).read_bytes()).hexdigest()


def tvm_build() -> str | None:
    """Which build of TVM this process runs: its git commit where libinfo says (a source
    build), else a digest of the libtvm libraries it mapped (path, size, mtime: the wheel's
    libinfo names no commit). None where neither is known."""
    try:
        commit = compat.tvm().support.libinfo().get("GIT_COMMIT_HASH")
    except Exception:  # noqa: BLE001 - a build without libinfo: the libraries still say
        commit = None
    if commit and commit != "NOTFOUND":
        return f"commit {commit}"
    libraries = sorted(p for p in mapped_paths() if "libtvm" in Path(p).name)
    if not libraries:
        return None
    digest = hashlib.sha256()
    for lib in libraries:
        stat = Path(lib).stat()
        digest.update(f"{lib}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return f"libraries {digest.hexdigest()[:16]}"


SCHEDULER = "ApplyDefaultSchedule"  # dlight's pass: its records say which rule did what


def _codegen_records(records: list[index.PassRecord], codegens: list[codegen.Codegen],
                     store: FunctionStore, work: Path, verify: bool,
                     out: Path) -> TvmFailure | None:
    """Append one record per codegen call (device modules first, as TVM builds them); under
    ``verify`` compile CUDA sources with nvcc. Returns the first verification failure."""
    failure = None
    for call in codegens:
        lane = index.HOST if call.target_kind in HOST_KINDS else index.DEVICE
        record = index.PassRecord(
            seq=len(records), name=call.target, depth=0, parent=None, kind=index.CODEGEN,
            seconds=round(call.seconds, 6), status="failed" if call.error else "ok",
            change=index.CHANGED, functions=len(call.functions), lane=lane,
            lane_target=call.target, error=call.error,
            sources={name: store.put(text) for name, text in call.sources.items()},
        )
        records.append(record)
        cuda = call.sources.get("cuda.cu")
        if verify and cuda is not None:
            verdict = codegen.verify_cuda(cuda, call.arch)
            if verdict is None:
                record.verify = {"tool": "nvcc", "ok": None, "error": "nvcc is not on PATH"}
                continue
            record.verify = {"tool": verdict.tool, "ok": verdict.ok, "error": verdict.error}
            if not verdict.ok:
                record.status = "failed"
                record.error = verdict.error
                failed = work / FAILED
                failed.mkdir(exist_ok=True)
                write_atomic(failed / "cuda.cu", cuda.encode())
                write_atomic(failed / "nvcc.log", verdict.output.encode())
                failure = failure or TvmFailure(
                    f"{verdict.tool} rejects the CUDA source TVM generated: {verdict.error}",
                    reproduce=shlex.join([*verdict.tool.split(), "-o", "/dev/null",
                                          str(out / FAILED / "cuda.cu")]),
                )
    return failure


def _crash_not_repeated(crash: tuple[int, tuple[int, str]], failure: TvmFailure | None,
                        workload: Workload, target: targets.Target, out: Path) -> TvmFailure:
    """The second run after a crash did not reach the pass to stop before as it was: the
    crash did not repeat (a race, memory corruption, something outside), or the compile
    took another path. The dump is the second run's; the first run's crash is not lost."""
    signum, (seq, name) = crash
    said = (f"the first run died of {process.signal_name(signum)} inside pass {name} (#{seq}); the "
            "second did not reach that pass as it was (the crash did not repeat), so this dump "
            "is of the second run")
    if failure is not None:
        return TvmFailure(f"{said}, in which {failure.args[0]}", reproduce=failure.reproduce)
    return TvmFailure(said, reproduce=reproduce.tk_command("dump-ir", workload.source,
                                                         target.spec, "-o", str(out)))


def _error_text(e: BaseException) -> str:
    lines = [ln.rstrip() for ln in str(e).splitlines() if ln.strip()]
    return "\n".join(lines[-20:]) if lines else type(e).__name__


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


