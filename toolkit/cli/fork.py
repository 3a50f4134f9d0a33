"""``tk fork``: what a fork changed, whether it still applies upstream, what can move out of
tree. (``tk bisect upstream`` names the upstream commit that breaks it.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolkit.cli.options import json_option
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.builds.recipes import Request

source_option = click.option(
    "--source", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The fork's git repository (default: the one around the current directory); only "
         "read.")
fork_option = click.option("--fork", "fork_rev", default="HEAD", show_default=True,
                           metavar="REV", help="The fork's commit.")


@click.group("fork")
def fork_group() -> None:
    """Keep a fork of TVM alive: its own changes, a rebase tried, what can move out of tree.

    Your repository is only read: tk replays and builds in its own repository under the
    cache, which borrows your objects (refs, index, working tree and config stay as they are).

    \b
    tk fork status [--upstream REF]               the fork's own commits, by what they change
    tk fork rebase-check --onto REF [--check CMD]  does each patch apply there? does it work?
    tk fork extract COMMITS --kind pass            move a change into an out-of-tree extension
    tk bisect upstream --onto REF --check CMD      the upstream commit that breaks the fork
    """


@fork_group.command("status")
@click.option("--upstream", default=None, metavar="REF",
              help="The upstream the fork follows (default: upstream/main, upstream/master or "
                   "apache/main, the first there).")
@fork_option
@source_option
@json_option
@pass_terminal
def status_cmd(term: Terminal, upstream: str | None, fork_rev: str, source: Path | None,
               as_json: bool) -> None:
    """Merge base, how far behind upstream, and the fork's own commits grouped by what they
    change, each group with its files and whether tk ext can carry it out of tree."""
    from toolkit.fork import status

    term.result(status.status(source, upstream, fork_rev).to_json(), status.render)


def check_options(func):  # noqa: ANN001, ANN201 - a click decorator
    """What to check on the replayed fork: a command, or a workload's numerics; and how to
    build it (as tk bisect start)."""
    from toolkit.cli.options import POSITIVE_SECONDS, recipe_options, target_option

    for option in reversed([
        click.option("--check", "check_text", default=None, metavar="CMD",
                     help="A command run in the replayed tree, in its build's environment (exit "
                          "0 good; as tk bisect's checks: a ready-made one by name too)."),
        click.argument("workload", required=False, metavar="[WORKLOAD]"),
        target_option,
        recipe_options,
        click.option("--build-cmd", default=None, metavar="CMD",
                     help="For a tree tk build does not know: the command that builds it."),
        click.option("--no-build", is_flag=True, help="Build nothing: the check builds."),
        click.option("--timeout", type=POSITIVE_SECONDS, default=None,
                     help="Seconds per check run."),
    ]):
        func = option(func)
    return func


def check_words(check_text: str | None, workload: str | None, target: str) -> list[str]:
    from toolkit.errors import UserError
    from toolkit.fork.rebase import check_words

    if check_text and workload:
        raise UserError("give --check CMD or a WORKLOAD, not both")
    return check_words(check_text, workload, target)


@fork_group.command("rebase-check")
@click.option("--onto", required=True, metavar="REF", help="The newer upstream to replay onto.")
@fork_option
@source_option
@check_options
@json_option
@pass_terminal
def rebase_check_cmd(term: Terminal, onto: str, fork_rev: str, source: Path | None,
                     check_text: str | None, workload: str | None, target: str,
                     request: Request, build_cmd: str | None, no_build: bool,
                     timeout: float | None, as_json: bool) -> int:
    """Replay the fork's patches onto REF in tk's own worktree: per patch, whether it applies,
    conflicts (with the files) or becomes empty; then build and run the check (--check CMD,
    or WORKLOAD's numerics) when they all apply.

    \b
    Exit status: 0 every patch applies (and the check passed), 1 a patch conflicts or the
    check did not pass, 2 a mistake in what was asked (bad ref, unknown option).
    """
    from toolkit.fork import rebase

    words = check_words(check_text, workload, target)
    result = rebase.rebase_check(source, onto, fork_rev, words, request=request,
                                 build_cmd=build_cmd, no_build=no_build, timeout=timeout,
                                 events=term.handle)
    term.result(result.to_json(), rebase.render)
    return 0 if result.ok else 1
