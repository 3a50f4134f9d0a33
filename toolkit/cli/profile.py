"""``tk profile WORKLOAD`` (per-operator timing) and ``tk profile compare A.json B.json``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.lazy import DefaultGroup
from toolkit.cli.options import (
    COUNT,
    RUNS,
    SEED,
    Number,
    compile_options,
    entry_option,
    ext_option,
    json_option,
    remote_options,
    target_option,
    workload_argument,
)
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.stack.remote import Remote


@click.group("profile", cls=DefaultGroup, default_command="run")
def profile_group() -> None:
    """Time every operator of a compiled workload, or compare two profiles.

    \b
    tk profile WORKLOAD --target T [--entry NAME] [--repeat N] [--warmup N] [--inputs F.npz] [-o DIR]
               [--format csv,json,md,html] [--trace FILE] [--rpc HOST:PORT | --tracker HOST:PORT --key KEY]
    tk profile compare A.json B.json [--threshold PCT] [--force]
    """


@profile_group.command("run")
@workload_argument
@target_option
@ext_option
@entry_option
@compile_options
@remote_options
@click.option("--repeat", "-n", type=RUNS, default=20, show_default=True, help="Timed runs.")
@click.option("--warmup", type=Number(int, min=0, max=RUNS.max), default=3, show_default=True,
              help="Untimed runs first.")
@click.option("--inputs", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help=".npz with the inputs, by argument name or in order (arr_0, arr_1, ...).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for random inputs.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Write the report into this directory (profile.csv/.json/.md/.html).")
@click.option("--format", "formats", default="csv,json,md,html", show_default=True,
              help="Which files to write with -o.")
@click.option("--trace", type=click.Path(dir_okay=False, path_type=Path),
              help="Write one run as a Chrome/Perfetto trace (host calls and device kernels).")
@click.option("--top", type=COUNT, default=15, show_default=True, help="Rows shown in the terminal.")
@json_option
@pass_terminal
def profile_cmd(term: Terminal, workload: str, target: str, extensions: tuple[str, ...],
                entry: str | None, compiling: dict[str, Any], remote: Remote | None, repeat: int,
                warmup: int, inputs: Path | None,
                seed: int, output: Path | None, formats: str, trace: Path | None, top: int,
                as_json: bool) -> int:
    """Profile WORKLOAD: compile it, time every VM call, report per operator.

    With --rpc or --tracker/--key the workload runs on that server's device, timed there by
    TVM's time_evaluator: end to end through the VM, and each kernel alone.
    """
    from toolkit import reports
    from toolkit.cli.run import input_flags, read_inputs
    from toolkit.profile import report as reporting
    from toolkit.profile.in_tvm.measure import profile
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads

    wanted = reports.parse_formats(formats)
    if output:  # before minutes of profiling, not after
        reports.check_output(output, "profile", wanted)
    if trace:
        from toolkit.profile.timeline import check_trace_path

        check_trace_path(trace)
    from toolkit import stack
    from toolkit.ext.loader import use

    for ext in extensions:
        use(ext)
    options = stack.compile_options(**compiling)
    wl = workloads.load(workload, seed=seed, entry=entry)
    arrays = read_inputs(inputs, wl) if inputs else None
    if remote is not None:
        from toolkit.profile.in_tvm import remote as remote_profile
        from toolkit.stack import remote as remotes

        with remotes.connect(remote) as session:
            measured = remote_profile.profile(wl, targets.resolve(target), session,
                                              repeat=repeat, warmup=warmup, seed=seed,
                                              inputs=arrays, options=options,
                                              input_flags=input_flags(inputs, seed))
    else:
        measured = profile(wl, targets.resolve(target), repeat=repeat, warmup=warmup,
                           seed=seed, inputs=arrays, options=options)
    report = reporting.build(measured)
    written = report.write(output, wanted) if output else {}
    if trace:
        written["trace"] = report.write_trace(trace)
    if as_json:
        term.json(document(report, written))
        return 0
    h, s = report.header, report.summary
    threads = "?" if h.get("threads") is None else h["threads"]
    term.echo(f"{h['workload']} ({h['entry']}) on {h['device']} ({h['target']}), TVM "
              f"{h['tvm_version']}, {threads} TVM thread(s), {h['repeat']} runs after "
              f"{h['warmup']} warm-up, timed via {h['method']}; clock: {s['clock']}; device "
              f"times: {s['device_timer']}")
    term.echo(report.table(top))
    term.echo(breakdown_line(s))
    for line in s.get("warnings", []):
        term.warn(line)
    for fmt, path in written.items():
        term.echo(f"wrote {path}" if fmt == next(iter(written)) else f"      {path}")
    return 0


def breakdown_line(s: dict) -> str:
    """End to end and where it went, then the verdict."""
    parts = ", ".join(f"{name} {us:.1f}" for name, us in s.get("split_us", {}).items())
    wall = (f" (wall {s['e2e_wall_median_us']:.1f})" if "e2e_wall_median_us" in s else "")
    return (f"end to end (no instrument): median {s['e2e_median_us']:.1f} us{wall} "
            f"(spread {s['e2e_spread_us']:.1f}) = {parts} us\n{s.get('verdict', '')}")


def document(result, written: dict[str, Path]) -> dict:
    """A report's (or comparison's) JSON document, with the files it was written to."""
    return {**result.document(), "files": {k: str(v) for k, v in written.items()}}


@profile_group.command("compare")
@click.argument("a", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--threshold", type=Number(float, min=0), default=5.0, show_default=True,
              help="Smallest change in percent worth flagging (noise permitting).")
@click.option("--force", is_flag=True,
              help="Compare reports taken on different targets or devices anyway.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Write compare.csv/.json/.md/.html into this directory.")
@click.option("--format", "formats", default="csv,json,md,html", show_default=True)
@json_option
@pass_terminal
def compare_cmd(term: Terminal, a: Path, b: Path, threshold: float, force: bool, output: Path | None,
                formats: str, as_json: bool) -> int:
    """Compare two profile.json reports: per-operator and total speedups of B over A."""
    from toolkit import reports
    from toolkit.profile import compare
    from toolkit.profile.report import Report

    wanted = reports.parse_formats(formats)
    if output:
        reports.check_output(output, "compare", wanted)
    result = compare.compare(Report.load(a), Report.load(b), threshold=threshold, force=force,
                             names=(str(a), str(b)))
    written = result.write(output, wanted) if output else {}
    if as_json:
        term.json(document(result, written))
        return 0
    for line in result.warnings:
        term.warn(line)
    term.echo(result.text())
    for path in written.values():
        term.echo(f"wrote {path}")
    return 0
