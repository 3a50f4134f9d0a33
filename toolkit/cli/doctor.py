from __future__ import annotations

import click

from toolkit.cli.options import json_option, python_option
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("doctor")
@python_option("Check the TVM importable by another interpreter.")
@json_option
@pass_terminal
def doctor_cmd(term: Terminal, python: str, as_json: bool) -> int:
    """Check the TVM install: version, libraries, runtimes, smoke tests, environment."""
    from toolkit import doctor
    from toolkit.builds import store

    record = store.in_use()  # a tk build put in use by tk env: doctor knows what it asked for
    report = doctor.run(python, asked=store.asked_of(record) if record else None)
    term.result(report.to_json(), lambda _: doctor.render(report))
    return 0 if report.ok else 1
