from __future__ import annotations

import click

from toolkit.cli.options import echo_json, json_option, python_option


@click.command("doctor")
@python_option("Check the TVM importable by another interpreter.")
@json_option
def doctor_cmd(python: str, as_json: bool) -> int:
    """Check the TVM install: version, libraries, runtimes, smoke tests, environment."""
    from toolkit import doctor

    report = doctor.run(python)
    if as_json:
        echo_json(report.to_json())
    else:
        click.echo(doctor.render(report))
    return 0 if report.ok else 1
