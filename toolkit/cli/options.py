"""Options shared by several commands, so each is spelled and documented once."""

from __future__ import annotations

import json
from typing import Any

import click

workload_argument = click.argument("workload", metavar="WORKLOAD")
target_option = click.option(
    "--target", "-t", default="llvm", show_default=True,
    help="Target: 'llvm', 'cuda -arch=sm_80', or JSON like '{\"kind\": \"cuda\"}'.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str))
