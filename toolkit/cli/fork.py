"""``tk fork``: what a fork changed, whether it still applies upstream, what can move out of
tree. (``tk bisect upstream`` names the upstream commit that breaks it.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolkit.cli.options import (
    build_cmd_option,
    check_timeout_option,
    fork_check_options,
    fork_option,
    fork_source_option,
    json_option,
    no_build_option,
    python_option,
    recipe_options,
    target_option,
)
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.builds.recipes import Request


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
@fork_source_option
@json_option
@pass_terminal
def status_cmd(term: Terminal, upstream: str | None, fork_rev: str, source: Path | None,
               as_json: bool) -> None:
    """Merge base, how far behind upstream, and the fork's own commits grouped by what they
    change, each group with its files and whether tk ext can carry it out of tree."""
    from toolkit.fork import status

    term.result(status.status(source, upstream, fork_rev).to_json(), status.render)


@fork_group.command("rebase-check")
@click.option("--onto", required=True, metavar="REF", help="The newer upstream to replay onto.")
@fork_option
@fork_source_option
@fork_check_options
@recipe_options
@build_cmd_option
@no_build_option
@check_timeout_option
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
    from toolkit.cli import bisect_events  # noqa: F401 - how a bisection step's events read
    from toolkit.fork import rebase

    words = rebase.check_words(check_text, workload, target)
    result = rebase.rebase_check(source, onto, fork_rev, words, request=request,
                                 build_cmd=build_cmd, no_build=no_build, timeout=timeout,
                                 events=term.handle)
    term.result(result.to_json(), rebase.render)
    return 0 if result.ok else 1


@fork_group.command("extract")
@click.argument("commits", nargs=-1, required=True, metavar="COMMITS...")
@click.option("--kind", required=True, type=click.Choice(["pass", "codegen", "target", "runtime"]),
              help="What the change is (tk ext new's kinds; codegen is target).")
@click.option("--name", default=None,
              help="The extension's name (default: the stem of the change's first file).")
@click.option("--dir", "directory", default=".", show_default=True,
              help="Where to create the project (as DIR/NAME).")
@click.option("--upstream", default=None, metavar="REF",
              help="The upstream the fork follows (as tk fork status); the extension is built "
                   "against its merge base with the fork.")
@fork_option
@fork_source_option
@click.option("--check", "check_text", default=None, metavar="CMD",
              help="The check that must pass with the fork and with upstream + the extension "
                   "(run at the top of the fork's tree).")
@click.option("--workload", default=None, metavar="W",
              help="Check W's numerics instead, and compare tk dump-ir of both sides.")
@target_option
@python_option("Upstream's side is this interpreter's TVM (e.g. a venv holding the release the "
               "fork is on) instead of a tk build of the merge base.", default=None)
@click.option("--upstream-build", default=None, metavar="ID",
              help="Upstream's side: this stored build (tk build ls) of the merge base.")
@click.option("--fork-build", default=None, metavar="ID",
              help="The fork's side: this stored build of the fork (default: tk builds it).")
@recipe_options
@check_timeout_option
@json_option
@pass_terminal
def extract_cmd(term: Terminal, commits: tuple[str, ...], kind: str, name: str | None,
                directory: str, upstream: str | None, fork_rev: str, source: Path | None,
                check_text: str | None, workload: str | None, target: str,
                python: str | None, upstream_build: str | None, fork_build: str | None,
                request: Request, timeout: float | None, as_json: bool) -> int:
    """Move the change of the fork's COMMITS out of tree: the tk ext scaffold of --kind filled
    with the fork's sources and registrations, built against upstream, and proven: the check
    passes with upstream + the extension as with the fork (and, for --workload, tk dump-ir
    compare shows the same IR after every pass).

    \b
    Exit status: 0 extracted and built (and proven, when checked), 1 the build failed or the
    check does not pass on both sides, 2 what was asked cannot be done (a change that cannot
    move out of tree, another kind, an existing directory).
    """
    from toolkit.errors import UserError
    from toolkit.fork import extract

    if check_text and workload:
        raise UserError("give --check CMD or --workload W, not both")
    result = extract.extract(
        source, list(commits), kind, name=name, directory=directory, upstream=upstream,
        fork_rev=fork_rev, check=[check_text] if check_text else None, workload=workload,
        target=target, python=python, upstream_build=upstream_build, fork_build=fork_build,
        request=request, timeout=timeout, events=term.handle)
    term.result(result.to_json(), extract.render)
    return 0 if result.proven is not False else 1
