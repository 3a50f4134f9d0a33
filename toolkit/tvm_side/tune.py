"""MetaSchedule tuning hosted with the compile stack (``tk tune``), and applying its database.

The database is MetaSchedule's own JSON pair on disk (``database_workload.json`` +
``database_tuning_record.json`` in one directory), so TVM's tools read what tk writes.
Relax workloads are tuned and compiled after TVM's zero pipeline (legalize + fuse), so the
kernels compiled with ``--db`` are exactly the ones tuned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.errors import TvmFailure, UserError
from toolkit.explain.cause import one_line
from toolkit.tvm_side.workload import TIR, Workload

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


def meta_schedule() -> Any:
    """``tvm.s_tir.meta_schedule`` (v0.24+) or ``tvm.meta_schedule`` before."""
    from toolkit.tvm_side.compat import _first_module

    ms = _first_module("tvm.s_tir.meta_schedule", "tvm.meta_schedule")
    if ms is None:
        raise UserError("this TVM has no MetaSchedule (tvm.s_tir.meta_schedule)")
    return ms


def records(directory: Path) -> int:
    path = directory / RECORD_FILE
    if not path.exists():
        return 0
    with path.open() as f:
        return sum(1 for line in f if line.strip())


def open_database(directory: Path) -> Any:
    """The JSON database ``tk tune -o`` wrote; refused when missing or holding no record."""
    if not directory.is_dir() or not (directory / WORKLOAD_FILE).exists():
        raise UserError(f"--db {directory}: not a tuning database (no {WORKLOAD_FILE}); "
                        f"make one with 'tk tune WORKLOAD -o {directory}'")
    if records(directory) == 0:
        raise UserError(f"--db {directory}: the database holds no tuning record; tune "
                        f"with more trials (tk tune --trials N)")
    return meta_schedule().database.JSONDatabase(work_dir=str(directory), allow_missing=False)


def tunable(wl: Workload, target: Any) -> Any:
    """The module MetaSchedule sees: Relax after the zero pipeline (legalized, fused)."""
    if wl.kind == TIR:
        return wl.mod
    from tvm import relax

    with target:
        return relax.get_pipeline("zero")(wl.mod)


def apply_database(mod: Any, target: Any, directory: Path) -> Any:
    """``mod`` with every kernel the database has a schedule for replaced by the tuned one."""
    from tvm import relax

    db = open_database(directory)
    with target, db:
        if any(isinstance(f, relax.Function) for f in mod.functions.values()):
            mod = relax.get_pipeline("zero")(mod)  # applies the current database itself
        return relax.transform.MetaScheduleApplyDatabase(enable_warning=False)(mod)


@dataclass
class TuneResult:
    database: Path
    tasks: int
    trials: int  # measured candidates
    records: int
    seconds: float


def tune(wl: Workload, target: Any, trials: int, out: Path,
         progress: Callable[[int, int, float | None], None] | None = None,
         runner: Any = "local") -> TuneResult:
    """Tune every kernel of ``wl`` for ``target`` with ``trials`` candidates in all; the
    database goes to ``out``. ``progress(done, total, best_us)`` after each measured batch."""
    if trials < 1:
        raise UserError("--trials must be at least 1")
    if wl.library is not None:
        raise UserError(f"{wl.source} is already compiled; tune the workload it came from")
    ms = meta_schedule()
    out.mkdir(parents=True, exist_ok=True)
    mod = tunable(wl, target)
    counter = _progress_callback(ms, trials, progress)
    callbacks = [*ms.MeasureCallback.create("default"), counter]
    start = time.perf_counter()
    common = dict(work_dir=str(out), max_trials_global=trials,
                  num_trials_per_iter=min(64, trials), measure_callbacks=callbacks,
                  runner=runner, seed=0)
    try:
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
    return TuneResult(out, tasks, counter.measured, records(out), time.perf_counter() - start)


def _prim_func_type() -> type:
    from toolkit.tvm_side import compat

    return compat.tir().PrimFunc


def _progress_callback(ms: Any, total: int,
                       progress: Callable[[int, int, float | None], None] | None) -> Any:
    try:
        from tvm.ir.utils import derived_object
    except ImportError:  # before v0.24 it lived with MetaSchedule
        derived_object = ms.utils.derived_object

    @derived_object
    class Progress(ms.measure_callback.PyMeasureCallback):
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
            if progress is not None:
                progress(self.measured, total, self.best)

    return Progress()
