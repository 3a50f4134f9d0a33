"""MetaSchedule tuning hosted with the compile stack (``tk tune``), and applying its database.

The database is MetaSchedule's own JSON pair on disk (``database_workload.json`` +
``database_tuning_record.json`` in one directory), so TVM's tools read what tk writes.
Relax workloads are tuned and compiled after TVM's zero pipeline (legalize + fuse), so the
kernels compiled with ``--db`` are exactly the ones tuned.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.cause import one_line
from toolkit.errors import TkError, TvmFailure, UserError
from toolkit.events import Handler, Progress, ignore
from toolkit.stack.workload import TIR, Workload

BUILD_TIMEOUT_S = 300
RUN_TIMEOUT_S = 120
WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


def meta_schedule() -> Any:
    """``tvm.s_tir.meta_schedule`` (v0.24+) or ``tvm.meta_schedule`` before."""
    from toolkit.stack.compat import first_module

    ms = first_module("tvm.s_tir.meta_schedule", "tvm.meta_schedule")
    if ms is None:
        raise UserError("this TVM has no MetaSchedule (tvm.s_tir.meta_schedule)")
    return ms


FAILED_RUN_S = 1e9  # MetaSchedule records a candidate that failed to build or run as 1e10 s


def records(directory: Path) -> int:
    """Tuning records in the database whose candidate built and ran (failures are recorded
    too, with a run time of 1e10 s: a database of those alone tunes nothing)."""
    path = directory / RECORD_FILE
    if not path.exists():
        return 0
    count = 0
    with path.open() as f:
        for line in f:
            try:
                run_secs = json.loads(line)[1][1]
            except (ValueError, IndexError, TypeError):
                continue
            count += bool(run_secs) and all(float(t) < FAILED_RUN_S for t in run_secs)
    return count


def check_serialisation() -> None:
    """MetaSchedule moves IR between processes and onto disk as TVM's JSON; try it in a forked
    child first, since a TVM and tvm-ffi that disagree crash there. The known disagreement
    (apache-tvm 0.27.0.post1 with apache-tvm-ffi 0.1.15.post2: PrimType's hash hook, see
    ``compat.clear_foreign_any_hash_hooks``) is repaired in this process; any other is refused.
    """
    from toolkit.stack import compat

    if _serialises():
        return
    if compat.clear_foreign_any_hash_hooks() and _serialises():
        return
    import importlib.metadata as md

    versions = []
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        try:
            versions.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            continue
    raise TkError(
        f"TVM's JSON serialisation crashes in this install ({', '.join(versions) or 'tvm'}"
        f"): MetaSchedule cannot save or ship IR; install the apache-tvm-ffi this TVM was "
        f"built against")


def _serialises() -> bool:
    """Whether ``tvm.ir.save_json`` of a PrimExpr survives, tried in a forked child."""
    import tvm

    from toolkit.stack import compat

    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # TVM's crash report: ours says it
            tvm.ir.save_json(compat.tir().IntImm("int32", 1))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return not os.WIFSIGNALED(status)


def open_database(directory: Path) -> Any:
    """The JSON database ``tk tune -o`` wrote; refused when missing, unreadable (truncated,
    corrupt, not MetaSchedule's) or holding no record."""
    if not directory.is_dir() or not (directory / WORKLOAD_FILE).exists():
        raise UserError(f"--db {directory}: not a tuning database (no {WORKLOAD_FILE}); "
                        f"make one with 'tk tune WORKLOAD -o {directory}'")
    for name in (WORKLOAD_FILE, RECORD_FILE):
        _check_lines(directory / name, directory)
    if records(directory) == 0:
        raise UserError(f"--db {directory}: the database holds no tuning record; tune "
                        f"with more trials (tk tune --trials N)")
    check_serialisation()
    try:
        return meta_schedule().database.JSONDatabase(work_dir=str(directory),
                                                     allow_missing=False)
    except Exception as e:  # noqa: BLE001 - TVM's parser says "Cannot tokenize" and the like
        raise UserError(f"--db {directory}: MetaSchedule cannot read it ({one_line(e)}); make "
                        f"it again with 'tk tune WORKLOAD -o {directory}'") from None


def _check_lines(path: Path, directory: Path) -> None:
    """Every line of a database file is a JSON array, as MetaSchedule writes them: a file cut
    short (a full disk, a killed tune) or another program's is refused with its line, before
    TVM's parser fails on it without naming the file."""
    if not path.exists():
        return
    try:
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip() and not isinstance(_json_or_none(line), list):
                    raise UserError(f"--db {directory}: line {number} of {path.name} is not "
                                    f"a tuning record (cut short, or not MetaSchedule's); make "
                                    f"the database again with 'tk tune WORKLOAD -o {directory}'")
    except UnicodeDecodeError:
        raise UserError(f"--db {directory}: {path.name} is not text (not MetaSchedule's)") \
            from None


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def tunable(wl: Workload, target: Any) -> Any:
    """The module MetaSchedule sees: Relax after the zero pipeline (legalized, fused)."""
    if wl.kind == TIR:
        return wl.mod
    from tvm import relax

    with target:
        return relax.get_pipeline("zero")(wl.mod)


@dataclass
class Applied:
    """A module with the database's schedules in place, and what they replaced."""

    mod: Any
    tuned: list[str]  # the kernels the database had a schedule for
    kernels: int  # the kernels of the module


def apply_database(mod: Any, target: Any, directory: Path) -> Applied:
    """``mod`` with every kernel the database has a schedule for replaced by the tuned one;
    which kernels were, found by comparing each with the same module untuned (a database made
    for another workload or target matches none, and the compile would be untuned)."""
    from tvm import relax

    from toolkit.stack import compat

    db = open_database(directory)
    relax_mod = any(isinstance(f, relax.Function) for f in mod.functions.values())
    with target:
        untuned = relax.get_pipeline("zero")(mod) if relax_mod else mod
    with target, db:
        tuned_mod = relax.get_pipeline("zero")(mod) if relax_mod else mod  # applies db itself
        tuned_mod = relax.transform.MetaScheduleApplyDatabase(enable_warning=False)(tuned_mod)
    before, after = _prim_funcs(untuned), _prim_funcs(tuned_mod)
    equal = compat.structural_equal()
    tuned = [name for name, func in after.items()
             if name in before and not equal(func, before[name])]
    return Applied(tuned_mod, tuned, len(after))


def _prim_funcs(mod: Any) -> dict[str, Any]:
    from toolkit.stack import compat

    prim = compat.tir().PrimFunc
    return {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, prim)}


@dataclass
class TuneResult:
    database: Path
    tasks: int
    trials: int  # measured candidates
    records: int
    seconds: float
    cost_model: str
    best_us: float | None  # the fastest candidate measured (of any kernel)


def tune(wl: Workload, target: Any, trials: int, out: Path, events: Handler = ignore,
         runner: Any = None) -> TuneResult:
    """Tune every kernel of ``wl`` for ``target`` with ``trials`` candidates in all; the
    database goes to ``out``. ``events`` hears a ``Progress`` after each measured batch."""
    if trials < 1:
        raise UserError("--trials must be at least 1")
    if wl.library is not None:
        raise UserError(f"{wl.source} is already compiled; tune the workload it came from")
    ms = meta_schedule()
    # What MetaSchedule's search (psutil: cores) and its workers (cloudpickle) import, before
    # anything is written: a missing one is the CLI's one line naming its pip install.
    import cloudpickle  # noqa: F401
    import psutil  # noqa: F401
    check_serialisation()
    target = with_num_cores(target)
    out.mkdir(parents=True, exist_ok=True)
    mod = tunable(wl, target)
    counter = _progress_callback(ms, trials, events)
    callbacks = [*ms.MeasureCallback.create("default"), counter]
    start = time.perf_counter()
    model = cost_model()
    # MetaSchedule's 30 s default counts a build worker's start (importing TVM): on a busy
    # machine every candidate then times out and the database holds failures only.
    builder = ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_S, f_build=build_candidate)
    if runner is None:
        runner = ms.runner.LocalRunner(timeout_sec=RUN_TIMEOUT_S)
    common = dict(work_dir=str(out), max_trials_global=trials,
                  num_trials_per_iter=min(64, trials), measure_callbacks=callbacks,
                  builder=builder, runner=runner, cost_model=model, seed=0)
    try:
        with _stdout_to_stderr():
            if wl.kind == TIR:
                tasks = sum(1 for f in mod.functions.values()
                            if isinstance(f, _prim_func_type()))
                ms.tune_tir(mod, target, num_tuning_cores="logical", **common)
            else:
                tasks = len(ms.relax_integration.extract_tasks(mod, target))
                ms.relax_integration.tune_relax(mod, {}, target, **common)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - MetaSchedule's failure, with its first cause
        raise TvmFailure(f"tuning {wl.source} failed: {one_line(e)}") from e
    return TuneResult(out, tasks, counter.measured, records(out), time.perf_counter() - start,
                      model, counter.best)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """MetaSchedule logs its task tables to stdout (from Python and C++ alike); stdout is the
    command's result (``--json``), so for the tuning its file descriptor points at stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def build_candidate(mod: Any, target: Any, _params: Any) -> Any:
    """MetaSchedule's default build of one candidate, less its ``import tvm.s_tir.tensor_intrin``.

    Build workers start afresh for every batch, and that import parses every tensor
    intrinsic's TVMScript: seen taking 250 s on a busy 2-core machine, so every candidate hit
    the build timeout. A candidate's tensorized blocks already hold the intrinsic's body, so
    building needs no registry.
    """
    from toolkit.stack import compat

    rewrite = getattr(compat.tir_transforms(), "RemoveWeightLayoutRewriteBlock", None)
    if rewrite is not None:
        mod = rewrite(skip_tensor_rewrite=True)(mod)
    return compat.tir().build(mod, target=target)


def cost_model() -> str:
    """MetaSchedule's XGBoost cost model when xgboost is installed, else random guidance:
    the search still measures every candidate, it is only less well aimed."""
    try:
        import xgboost  # noqa: F401
    except ImportError:
        return "random"
    return "xgb"


def with_num_cores(target: Any) -> Any:
    """MetaSchedule needs a CPU target's core count; take this machine's when not given."""
    import tvm

    if target.kind.name != "llvm" or "num-cores" in target.attrs:
        return target
    config = {k: v for k, v in dict(target.export()).items() if k != "host"}
    return tvm.target.Target({**config, "num-cores": os.cpu_count() or 1}, host=target.host)


def _prim_func_type() -> type:
    from toolkit.stack import compat

    return compat.tir().PrimFunc


def derived_object(ms: Any) -> Any:
    """The decorator that makes a Python class implement a MetaSchedule interface."""
    try:
        from tvm.ir.utils import derived_object as decorator
    except ImportError:  # before v0.24 it lived with MetaSchedule
        decorator = ms.utils.derived_object
    return decorator


def _progress_callback(ms: Any, total: int, events: Handler) -> Any:
    @derived_object(ms)
    class TrialCounter(ms.measure_callback.PyMeasureCallback):
        """Counts measured candidates and tracks the fastest, for the progress line."""

        def __init__(self) -> None:
            self.measured = 0
            self.best: float | None = None

        def apply(self, task_scheduler: Any, task_id: int, measure_candidates: Any,
                  builder_results: Any, runner_results: Any) -> None:
            for result in runner_results:
                self.measured += 1
                times = [float(t) for t in (result.run_secs or [])]
                if result.error_msg is None and times:
                    us = sum(times) / len(times) * 1e6
                    self.best = us if self.best is None else min(self.best, us)
            events(Progress("trials", min(self.measured, total), total))

    return TrialCounter()
