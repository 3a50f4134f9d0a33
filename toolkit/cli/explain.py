"""``tk explain [LOGFILE|-]``: recognise TVM failure messages and say what to do."""

from __future__ import annotations

import sys

import click

from toolkit.cli.options import json_option
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("explain")
@click.argument("logfile", required=False, default="-", metavar="[LOGFILE|-]")
@json_option
@pass_terminal
def explain_cmd(term: Terminal, logfile: str, as_json: bool) -> int:
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
        term.json([f.to_dict() for f in findings])
        return 0 if findings else 1
    if not findings:
        term.echo("no known TVM failure recognised in this log")
        return 1
    for f in findings:
        more = f" (and lines {', '.join(map(str, f.also_lines))})" if f.also_lines else ""
        term.echo(f"line {f.line}{more}: {f.title}")
        term.echo(f"  seen:  {f.excerpt.splitlines()[0][:160]}")
        term.echo(f"  cause: {f.cause}")
        term.echo(f"  fix:   {f.fix}")
    return 0
