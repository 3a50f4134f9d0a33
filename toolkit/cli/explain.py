"""``tk explain [LOGFILE|-]``: recognise TVM failure messages and say what to do."""

from __future__ import annotations

import sys

import click

from toolkit.cli.options import echo_json, json_option


@click.command("explain")
@click.argument("logfile", required=False, default="-", metavar="[LOGFILE|-]")
@json_option
def explain_cmd(logfile: str, as_json: bool) -> int:
    """Explain the TVM failures found in LOGFILE (or standard input).

    Exits 0 when at least one failure was recognised, 1 when none was.
    """
    from pathlib import Path

    from toolkit.errors import UserError
    from toolkit.explain import explain

    if logfile == "-":
        text = sys.stdin.read()
    else:
        path = Path(logfile)
        if not path.is_file():
            raise UserError(f"no such log file: {logfile}")
        text = path.read_text(errors="replace")
    findings = explain(text)
    if as_json:
        echo_json([f.to_dict() for f in findings])
        return 0 if findings else 1
    if not findings:
        click.echo("no known TVM failure recognised in this log")
        return 1
    for f in findings:
        more = f" (and lines {', '.join(map(str, f.also_lines))})" if f.also_lines else ""
        click.echo(f"line {f.line}{more}: {f.title}")
        click.echo(f"  seen:  {f.excerpt.splitlines()[0][:160]}")
        click.echo(f"  cause: {f.cause}")
        click.echo(f"  fix:   {f.fix}")
    return 0
