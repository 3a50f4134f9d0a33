"""``tk explain [LOGFILE|-] [--last]``: the first cause of a failure and what to do about it."""

from __future__ import annotations

import sys

import click

from toolkit.cli.options import json_option
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("explain")
@click.argument("logfile", required=False, default="-", metavar="[LOGFILE|-]")
@click.option("--last", is_flag=True, help="Explain the last tk command that failed here.")
@json_option
@pass_terminal
def explain_cmd(term: Terminal, logfile: str, last: bool, as_json: bool) -> int:
    """Find the first cause of the failure in LOGFILE (or standard input) and explain it.

    Reads TVM tracebacks and error reports, CMake, Ninja and nvcc output. Exits 0 when a
    known failure was recognised, 1 when none was (the first cause and search terms are
    still printed).
    """
    from pathlib import Path

    from toolkit.errors import UserError
    from toolkit.explain import explain, first_cause, pick
    from toolkit.explain import last as last_failure

    if last:
        from toolkit.paths import cache_root

        recorded = last_failure.load(cache_root())
        if recorded is None:
            raise UserError("no failed tk command recorded yet "
                            f"({cache_root() / last_failure.NAME})")
        text = recorded.text
        if not as_json:
            term.echo(recorded.heading())
    elif logfile == "-":
        text = sys.stdin.read()
    else:
        path = Path(logfile)
        if not path.is_file():
            raise UserError(f"no such log file: {logfile}")
        text = path.read_text(errors="replace")
    cause = first_cause(text)
    findings = explain(text)
    top = pick(findings)
    if top is not None:  # the most specific finding first, the others in the log's order
        findings = [top, *[f for f in findings if f is not top]]
    if as_json:
        term.json({"cause": cause.to_dict(), "findings": [f.to_dict() for f in findings]})
        return 0 if findings else 1
    if not cause.line:
        term.echo("no failure found in this log")
        return 1
    term.echo(f"first cause (line {cause.line}): {cause.text}")
    where = ", ".join(x for x in (
        cause.kind if cause.kind != "error" else None,
        cause.primitive and f"schedule primitive {cause.primitive}",
        cause.pass_name and f"pass {cause.pass_name}",
        cause.source) if x)
    if where:
        term.echo(f"  raised by: {where}")
    for f in findings:
        lines = "lines" if len(f.also_lines) > 1 else "line"
        more = f" (and {lines} {', '.join(map(str, f.also_lines))})" if f.also_lines else ""
        term.echo(f"line {f.line}{more}: {f.title}")
        term.echo(f"  seen:  {f.excerpt.splitlines()[0][:160]}")
        term.echo(f"  cause: {f.cause}")
        term.echo(f"  fix:   {f.fix}")
    if not findings:
        term.echo(f"no known failure matches; search for: {cause.search_terms()}")
        for url in cause.search_urls():
            term.echo(f"  {url}")
        return 1
    return 0
