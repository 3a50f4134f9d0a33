"""``tk tune WORKLOAD --target T --trials N -o DB``: MetaSchedule tuning with the hosted stack."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.options import (
    RUNS,
    entry_option,
    json_option,
    remote_options,
    target_option,
    workload_argument,
)
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.stack.remote import Remote


@click.command("tune")
@workload_argument
@target_option
@entry_option
@click.option("--trials", type=RUNS, default=64, show_default=True,
              help="Candidates to measure, over all kernels together.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The database directory (MetaSchedule's JSON files; '--db DIR' applies it).")
@remote_options
@json_option
@pass_terminal
def tune_cmd(term: Terminal, workload: str, target: str, entry: str | None, trials: int,
             output: Path, remote: Remote | None, as_json: bool) -> None:
    """Tune WORKLOAD's kernels with MetaSchedule; the database goes to -o DIR."""
    from toolkit.stack import target as targets
    from toolkit.stack import tune
    from toolkit.stack import workload as workloads

    wl = workloads.load(workload, entry=entry)
    t = targets.resolve(target)
    if remote is None:
        result = tune.tune(wl, t.tvm, trials, output, events=term.handle)
    else:
        from toolkit.stack import remote as remotes

        with remotes.tuning_runner(remote) as runner:
            result = tune.tune(wl, t.tvm, trials, output, events=term.handle, runner=runner)
    term.result({
        "workload": wl.source, "entry": wl.entry, "target": t.spec,
        "database": str(result.database), "tasks": result.tasks, "trials": result.trials,
        "records": result.records, "best_us": result.best_us,
        "seconds": round(result.seconds, 2),
        "seconds_per_trial": round(result.seconds / max(result.trials, 1), 3),
        "cost_model": result.cost_model,
    }, render_tuned)


def render_tuned(r: dict[str, Any]) -> str:
    best = f", fastest candidate {r['best_us']:.1f} us" if r["best_us"] is not None else ""
    return (f"tuned {r['workload']} for {r['target']}: {r['tasks']} kernel(s), {r['trials']} "
            f"trials in {r['seconds']:.1f} s ({r['seconds_per_trial']} s/trial, cost model "
            f"{r['cost_model']}){best}\n"
            f"  database: {r['database']} ({r['records']} usable record(s)); apply with "
            f"--db {r['database']}")
