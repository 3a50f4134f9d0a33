"""``tk explain [LOGFILE|-] [--last] [--env] [--source DIR]``: the first cause of a failure,
where TVM raises it, what TVM's history says of it, and what to do about it."""

from __future__ import annotations

import sys

import click

from toolkit.cli.options import json_option
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("explain")
@click.argument("logfile", required=False, default="-", metavar="[LOGFILE|-]")
@click.option("--last", is_flag=True, help="Explain the last tk command that failed here.")
@click.option("--env/--no-env", "check_env", default=None,
              help="Check what the log implies in the TVM here (default: on with --last).")
@click.option("--python", "python", metavar="PATH",
              help="The interpreter whose TVM --env checks (default: tk's own).")
@click.option("--source", "source", metavar="DIR",
              help="A TVM source tree: show the lines that raise the error from it (default "
                   "with --env: the tree of the TVM in use, when it is one).")
@json_option
@pass_terminal
def explain_cmd(term: Terminal, logfile: str, last: bool, check_env: bool | None,
                python: str | None, source: str | None, as_json: bool) -> int:
    """Find the first cause of the failure in LOGFILE (or standard input) and explain it.

    Reads TVM tracebacks and error reports, CMake, Ninja, nvcc and linker output. Answers come
    from tk's rules, TVM's API history (which versions have a name), TVM's error sites (where
    TVM raises a message, under which condition) and, with --env, checks in the TVM here;
    each says which. Exits 0 when something was recognised, 1 when nothing was (the first
    cause and search terms are still printed), 2 for bad input.
    """
    from pathlib import Path

    from toolkit.errors import UserError
    from toolkit.explain import explain, first_cause, pick
    from toolkit.explain import last as last_failure

    if source is not None and not Path(source).is_dir():
        raise UserError(f"--source {source}: no such directory")
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
    if check_env if check_env is not None else last or python is not None:
        from toolkit.explain import environment

        facts = environment.probe(environment.asked(text), python=python or sys.executable)
        findings += environment.findings(text, facts)
        source = source or facts.source_root
    top = pick(findings)
    if top is not None:  # the most specific finding first, the others in the log's order
        findings = [top, *[f for f in findings if f is not top]]
    if as_json:
        term.json({"cause": cause.to_dict(), "findings": [f.to_dict() for f in findings]})
        return 0 if findings else 1
    if not cause.line and not findings:
        term.echo("no failure found in this log")
        return 1
    if cause.line:
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
        head = f"line {f.line}{more}: " if f.excerpt else ""
        term.echo(f"{head}{f.title}  [{f.origin}]")
        if f.excerpt:
            term.echo(f"  seen:  {f.excerpt.splitlines()[0][:160]}")
        term.echo(f"  cause: {f.cause}")
        term.echo(f"  fix:   {f.fix}")
        if source and f.origin == "error-site index":
            from toolkit.explain.raised import source_lines

            g = f.groups
            for ln in source_lines(g["file"], int(g["line"]), g["condition"], g["needle"],
                                   Path(source)):
                term.echo(f"  source: {ln}")
    if not findings:
        term.echo(f"no known failure matches; search for: {cause.search_terms()}")
        for url in cause.search_urls():
            term.echo(f"  {url}")
        return 1
    return 0
