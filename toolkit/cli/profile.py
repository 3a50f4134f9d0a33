"""``tk profile WORKLOAD`` (per-operator timing) and ``tk profile compare A.json B.json``."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.lazy import DefaultGroup
from toolkit.cli.options import (
    COUNT,
    SEED,
    Number,
    echo_json,
    json_option,
    target_option,
    workload_argument,
)


@click.group("profile", cls=DefaultGroup, default_command="run")
def profile_group() -> None:
    """Time every operator of a compiled workload, or compare two profiles.

    \b
    tk profile WORKLOAD --target T [--repeat N] [--warmup N] [-o DIR] [--format csv,json,md,html]
    tk profile compare A.json B.json [--threshold PCT] [--force]
    """


@profile_group.command("run")
@workload_argument
@target_option
@click.option("--repeat", "-n", type=COUNT, default=20, show_default=True, help="Timed runs.")
@click.option("--warmup", type=Number(int, min=0), default=3, show_default=True, help="Untimed runs first.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for random inputs.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Write the report into this directory (profile.csv/.json/.md/.html).")
@click.option("--format", "formats", default="csv,json,md,html", show_default=True,
              help="Which files to write with -o.")
@click.option("--top", type=COUNT, default=15, show_default=True, help="Rows shown in the terminal.")
@json_option
def profile_cmd(workload: str, target: str, repeat: int, warmup: int, seed: int,
                output: Path | None, formats: str, top: int, as_json: bool) -> int:
    """Profile WORKLOAD: compile it, time every VM call, report per operator."""
    from toolkit import reports
    from toolkit.tvm_side.profile import profile

    wanted = reports.parse_formats(formats)
    report = profile(workload, target, repeat=repeat, warmup=warmup, seed=seed)
    written = report.write(output, wanted) if output else {}
    if as_json:
        echo_document(report, written)
        return 0
    h, s = report.header, report.summary
    click.echo(f"{h['workload']} on {h['device']} ({h['target']}), TVM {h['tvm_version']}, "
               f"{h['repeat']} runs after {h['warmup']} warm-up, timed via {h['method']}")
    click.echo(report.table(top))
    click.echo(
        f"end to end (no instrument): median {s['e2e_median_us']:.1f} us "
        f"(spread {s['e2e_spread_us']:.1f}); operators: {s['accounted_us']:.1f} us "
        f"(kernels {s['kernels_us']:.1f}, builtins {s['builtins_us']:.1f}); "
        f"unaccounted {s['unaccounted_us']:.1f} us")
    for fmt, path in written.items():
        click.echo(f"wrote {path}" if fmt == wanted[0] else f"      {path}")
    return 0


def echo_document(result, written: dict[str, Path]) -> None:
    """A report's (or comparison's) JSON document, with the files it was written to."""
    echo_json({**result.document(), "files": {k: str(v) for k, v in written.items()}})


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
def compare_cmd(a: Path, b: Path, threshold: float, force: bool, output: Path | None,
                formats: str, as_json: bool) -> int:
    """Compare two profile.json reports: per-operator and total speedups of B over A."""
    from toolkit import reports
    from toolkit.profile import compare
    from toolkit.profile.report import Report

    wanted = reports.parse_formats(formats)
    result = compare.compare(Report.load(a), Report.load(b), threshold=threshold, force=force,
                             names=(str(a), str(b)))
    written = result.write(output, wanted) if output else {}
    if as_json:
        echo_document(result, written)
        return 0
    for line in result.warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(result.text())
    for path in written.values():
        click.echo(f"wrote {path}")
    return 0
