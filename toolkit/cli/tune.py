"""``tk tune WORKLOAD --target T --trials N -o DB``: MetaSchedule tuning with the hosted stack."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from toolkit.cli.options import (
    COUNT,
    echo_json,
    entry_option,
    json_option,
    remote_options,
    target_option,
    workload_argument,
)


@click.command("tune")
@workload_argument
@target_option
@entry_option
@click.option("--trials", type=COUNT, default=64, show_default=True,
              help="Candidates to measure, over all kernels together.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The database directory (MetaSchedule's JSON files; '--db DIR' applies it).")
@remote_options
@json_option
def tune_cmd(workload: str, target: str, entry: str | None, trials: int, output: Path,
             remote: dict | None, as_json: bool) -> None:
    """Tune WORKLOAD's kernels with MetaSchedule; the database goes to -o DIR."""
    from toolkit.tvm_side import target as targets
    from toolkit.tvm_side import tune
    from toolkit.tvm_side import workload as workloads

    wl = workloads.load(workload, entry=entry)
    parsed = targets.to_tvm(target)
    runner = None
    if remote is not None:
        from toolkit.tvm_side import remote as remotes

        runner = remotes.tuning_runner(**remote)

    def progress(done: int, total: int, best_us: float | None) -> None:
        if as_json:
            return
        width = 30
        filled = min(width, width * done // max(total, 1))
        best = f"best {best_us:.1f} us" if best_us is not None else "no candidate ran yet"
        end = "\n" if done >= total or not sys.stderr.isatty() else ""
        click.echo(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} trials, {best}",
                   err=True, nl=False)
        click.echo(end, err=True, nl=False)

    result = tune.tune(wl, parsed, trials, output, progress=progress, runner=runner)
    report = {
        "workload": wl.source, "entry": wl.entry, "target": target,
        "database": str(result.database), "tasks": result.tasks, "trials": result.trials,
        "records": result.records, "seconds": round(result.seconds, 2),
        "seconds_per_trial": round(result.seconds / max(result.trials, 1), 3),
        "cost_model": result.cost_model,
    }
    if as_json:
        echo_json(report)
        return
    click.echo(f"tuned {wl.source} for {target}: {result.tasks} kernel(s), {result.trials} "
               f"trials in {result.seconds:.1f} s ({report['seconds_per_trial']} s/trial, cost "
               f"model {result.cost_model}) -> {output}")
    click.echo(f"  {result.records} usable record(s); apply with: tk run {wl.source} "
               f"--target '{target}' --db {output}")
