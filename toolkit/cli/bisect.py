"""``tk bisect``: find the commit, then the pass, that broke a compile-and-test check."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.options import (
    COUNT,
    POSITIVE_SECONDS,
    TOLERANCE,
    build_cmd_option,
    check_timeout_option,
    fork_check_options,
    fork_option,
    fork_source_option,
    json_option,
    no_build_option,
    python_option,
    recipe_options,
    repository_option,
    target_option,
    workload_argument,
)

if TYPE_CHECKING:
    from toolkit.builds.recipes import Request
    from toolkit.events import Handler

from toolkit.cli.terminal import Terminal, pass_terminal

source_option = repository_option(
    "The git repository to bisect (default: the one around the current directory).")


# -- the commands ---------------------------------------------------------------------------


def _events(term: Terminal) -> Handler:
    """The terminal's handler, once it knows how a bisection's events read: only the commands
    that run steps load them (17 event types; start, status and reset do without)."""
    from toolkit.cli import bisect_events  # noqa: F401 - registers how its events read

    return term.handle


def settings_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """How a bisection judges and builds each probe: tk bisect start's and tk bisect
    upstream's."""
    for option in reversed([
        click.option("--regress", default="error", show_default=True,
                     help="What 'bad' means: error (non-zero exit), success (exit 0), crash (killed "
                          "by a signal), match:REGEX (output matches)."),
        click.option("--build-failure", type=click.Choice(["skip", "bad"]), default=None,
                     help="Verdict for a commit that does not build (default skip; bad for "
                          "build-only)."),
        check_timeout_option,
        click.option("--on-timeout", type=click.Choice(["skip", "bad", "good"]), default="skip",
                     show_default=True, help="Verdict for a check run that timed out."),
        click.option("--count", type=COUNT, default=1, show_default=True,
                     help="Runs per probe; runs that disagree make the commit flaky (skipped)."),
        recipe_options,
        build_cmd_option,
        no_build_option,
        click.option("--parallel", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Build slots (TVM trees): slot 0 builds the probe, the others build the "
                          "probes that may come next, each in its own worktree and build directory, "
                          "sharing ccache; with --backend docker and DOCKER_HOST=tcp://HOST or "
                          "ssh://HOST, on that engine, sharing its ccache volume. Default: 1, plus "
                          "one prefetch slot on a machine with at least 4 cores and 2 of them idle "
                          "(1-minute load average), or building on a remote engine."),
        click.option("--recheck", is_flag=True,
                     help="Run the check everywhere, even where its verdict on the same build and tree "
                          "is known from an earlier bisection."),
    ]):
        func = option(func)
    return func


@click.group("bisect")
def bisect_group() -> None:
    """Find the commit (then the pass) that broke a check, building as little as possible.

    Work happens in a worktree of its own: your checkout (working tree, index, HEAD,
    branches) is never touched. Check exit status: 0 good, 125 skip, 126/127 stop (the
    check itself is broken), other 1-127 bad.
    """


@bisect_group.command(
    "start", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--good", required=True, help="A revision where the check passes.")
@click.option("--bad", required=True, help="A later revision where it fails.")
@source_option
@click.option("--check", "check_text", default=None,
              help="The check: a command ('pytest tests/x.py::t') or a ready-made one by "
                   "name ('numerics builtin:mlp', 'build-only'); or give it after '--'.")
@settings_options
@click.argument("check_args", nargs=-1, type=click.UNPROCESSED)
@pass_terminal
def start_cmd(term: Terminal, good: str, bad: str, source: Path | None, check_text: str | None, regress: str,
              build_failure: str | None, timeout: float | None, on_timeout: str, count: int,
              request: Request, build_cmd: str | None,
              no_build: bool, parallel: int | None, recheck: bool,
              check_args: tuple[str, ...]) -> None:
    """Start a bisection between GOOD and BAD (nothing is built until 'run').

    \b
    The check's words may follow the options:
      tk bisect start --good v0.20 --bad main --check numerics builtin:mlp --target llvm
      tk bisect start --good A --bad B -- pytest tests/python/relax/test_x.py::test_y
    """
    from toolkit.bisect import session

    words = [check_text] if check_text else []
    if check_args:
        from toolkit.bisect.checks import split_check

        words = [*(split_check(check_text) if check_text else []), *check_args]
    st = session.start(source or Path.cwd(), good, bad, words, regress=regress,
                       build_failure=build_failure, timeout=timeout, on_timeout=on_timeout,
                       count=count, request=request, build_cmd=build_cmd,
                       no_build=no_build, recheck=recheck, parallel=parallel)
    how = {None: "tk build (artifact store)", "": "none (the check builds)"}.get(
        st.build_command, st.build_command)
    term.echo(f"bisecting {len(st.commits) - 1} commits of {st.source}: good {st.good[:10]} "
              f".. bad {st.bad[:10]}, check: {st.check_display}")
    term.echo(f"build: {how}")
    if st.submodules_left:
        term.echo(f"submodules never initialised in your checkout, left so at every commit (as "
                  f"git bisect does; tk never fetches): {', '.join(st.submodules_left)}")
    term.echo("next: 'tk bisect run' (automatic) or 'tk bisect good|bad|skip' (by hand)")


@bisect_group.command("upstream")
@click.option("--onto", default=None, metavar="REF",
              help="The newer upstream the fork fails on (the bisection's bad end).")
@click.option("--from", "start_from", default=None, metavar="REV",
              help="The good end: an upstream commit the fork works on (default: the merge "
                   "base of the fork and REF).")
@fork_option
@fork_source_option
@fork_check_options
@settings_options
@click.option("--restart", is_flag=True,
              help="Drop an upstream bisection of this fork in progress and start anew.")
@click.option("--reset", "drop", is_flag=True,
              help="Only drop the fork's upstream bisection (its worktrees and state).")
@json_option
@pass_terminal
def upstream_cmd(term: Terminal, onto: str | None, start_from: str | None, fork_rev: str,
                 source: Path | None, check_text: str | None, workload: str | None,
                 target: str, regress: str, build_failure: str | None, timeout: float | None,
                 on_timeout: str, count: int, request: Request, build_cmd: str | None,
                 no_build: bool, parallel: int | None, recheck: bool, restart: bool,
                 drop: bool, as_json: bool) -> int:
    """Find the first upstream commit that breaks the fork: bisect merge-base..REF with the
    fork's own commits replayed on every probe (skipped, with the reason, where they do not
    apply), built through the store and checked.

    \b
    It is a commit bisection in tk's own repository for the fork (printed at the start):
    tk bisect status/log/env/passes --source THAT work on it; tk bisect env REV builds REV
    with the fork's patches on top.

    \b
    Exit status: 0 a first bad upstream commit (or the commits it may be), 1 none, 2 a
    mistake in what was asked, 3 the check is flaky.
    """
    from toolkit.bisect import report
    from toolkit.errors import UserError
    from toolkit.fork import upstream
    from toolkit.fork.rebase import check_words

    if drop:
        term.echo(f"removed the upstream bisection in {upstream.reset(source)}")
        return 0
    if onto is None:
        raise UserError("missing --onto REF (the upstream the fork fails on)")
    st, continued = upstream.start(
        source, onto, check_words(check_text, workload, target), fork_rev=fork_rev,
        start_from=start_from, restart=restart, regress=regress, build_failure=build_failure,
        timeout=timeout, on_timeout=on_timeout, count=count, request=request,
        build_cmd=build_cmd, no_build=no_build, recheck=recheck, parallel=parallel)
    assert st.stack is not None
    n = len(st.stack.patches)
    term.say(f"{'continuing' if continued else 'bisecting'} {len(st.commits) - 1} upstream "
             f"commits {st.good[:10]}..{st.bad[:10]} with the {n} commit{'s' if n != 1 else ''} "
             f"of the fork on top, check: {st.check_display}")
    term.say(f"in tk's repository for the fork: --source {st.source}")
    st = upstream.run(st, _events(term))
    term.result(report.build(st), report.markdown)
    if st.confirmed is False:
        from toolkit.process import FLAKY

        return FLAKY
    return 0 if st.culprit or st.culprit_candidates else 1


@bisect_group.command("run")
@source_option
@pass_terminal
def run_cmd(term: Terminal, source: Path | None) -> int:
    """Run the bisection to the end (or continue an interrupted one).

    \b
    Exit status: 0 a first bad commit, confirmed (or the commits it may be, when skips hide
    it), 1 none, 3 the check is flaky: re-run, the answer and its parent disagreed.
    """
    from toolkit.bisect import report, session

    st = session.run(session.current(source), _events(term))
    term.echo(report.markdown(report.build(st)), nl=False)
    if st.confirmed is False:
        from toolkit.process import FLAKY

        return FLAKY
    return 0 if st.culprit or st.culprit_candidates else 1


def _mark(term: Terminal, value: str, rev: str | None, source: Path | None) -> None:
    from toolkit.bisect import report, session

    st = session.current(source)
    nxt = session.mark(st, value, rev)
    if nxt is None:
        term.echo(report.markdown(report.build(st)), nl=False)
        return
    term.echo(f"next to test: {nxt[:10]} (checked out in {st.worktree}); "
              f"eval \"$(tk bisect env --source {shlex.quote(st.source)})\" puts its build in "
              "use; check, then 'tk bisect good|bad|skip'")


for _value in ("good", "bad", "skip"):
    def _make(value: str) -> click.Command:
        @bisect_group.command(value, help=f"Mark REV (default: the commit being tested) {value}.")
        @click.argument("rev", required=False)
        @source_option
        @pass_terminal
        def cmd(term: Terminal, rev: str | None, source: Path | None) -> None:
            _mark(term, value, rev, source)

        return cmd

    _make(_value)


@bisect_group.command("status")
@source_option
@json_option
@pass_terminal
def status_cmd(term: Terminal, source: Path | None, as_json: bool) -> None:
    """Where the bisection stands: window, steps left, what it stopped on."""
    from toolkit.bisect import session

    term.result(session.status(session.current(source)), render_status)


def render_status(d: dict[str, Any]) -> str:
    if not d["done"]:
        lines = [f"{d['status']}: {d['untested']} untested commits between {d['good'][:10]} "
                 f"(good) and {d['bad'][:10]} (bad), ~{d['steps_left']} steps left; "
                 f"{d['probes']} probes so far"]
    else:
        lines = [f"{d['status']}: {d['probes']} probes"]
    if d["culprit"] and d["confirmed"] is False:
        lines.append(f"the check is flaky: the search ended at {d['culprit']}, which its "
                     "re-run did not confirm")
    elif d["culprit"]:
        lines.append(f"first bad commit: {d['culprit']}")
    if d["stop_reason"]:
        lines.append(f"stopped: {d['stop_reason']}")
    return "\n".join(lines)


@bisect_group.command("log")
@source_option
@pass_terminal
def log_cmd(term: Terminal, source: Path | None) -> None:
    """Every probe so far, one a line."""
    from toolkit.bisect import session

    st = session.current(source)
    for i, s in enumerate(st.steps, 1):
        build = ("known" if s.known else
                 {True: "store", False: f"built {s.build_seconds:.1f}s", None: "-"}[s.cache_hit])
        term.echo(f"{i:3} {s.commit[:10]} {s.phase:8} {s.verdict:5} {s.reason} [{build}, "
                  f"{s.seconds:.1f}s]")


@bisect_group.command("report")
@source_option
@json_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report here (.md or .json).")
@pass_terminal
def report_cmd(term: Terminal, source: Path | None, as_json: bool, output: Path | None) -> None:
    """The answer: first bad commit, range, steps, and a command that reproduces it."""
    from toolkit.bisect import report, session

    data = report.build(session.current(source))
    if output:
        import json

        from toolkit.errors import UserError

        try:
            output.write_text(json.dumps(data, indent=2) if output.suffix == ".json"
                              else report.markdown(data))
        except OSError as e:
            raise UserError(f"-o {output}: cannot write it ({e.strerror or e})") from None
    term.result(data, report.markdown)


@bisect_group.command("env")
@click.argument("rev", required=False)
@source_option
@json_option
@pass_terminal
def env_cmd(term: Terminal, rev: str | None, source: Path | None, as_json: bool) -> None:
    """Build REV (default: the commit being tested) in the bisection's worktree, through the
    store, and print the exports that put it in use: eval "$(tk bisect env REV)"."""
    from toolkit.bisect import session
    from toolkit.builds import store

    st = session.current(source)
    sha = session.revision(st, rev)
    built = session.checkout_and_build(st, sha, _events(term))
    if not built.ok:
        term.abort(f"{sha[:10]} does not build: {built.message}")
    if built.key:
        store.handed_out(built.key)
    term.result(built.env, store.shell_exports)


@bisect_group.command("reset")
@source_option
@pass_terminal
def reset_cmd(term: Terminal, source: Path | None) -> None:
    """Remove the bisection's worktree and state; nothing else."""
    from toolkit.bisect import session

    root = session.reset(source)
    term.echo(f"removed the bisection of {root}")


@bisect_group.command("passes")
@workload_argument
@target_option
@click.option("--check", "check", default="numerics", show_default=True,
              type=click.Choice(["numerics"]),
              help="What a prefix must pass: numerics = outputs match the workload's reference "
                   "(else those of the prefix with no optional pass).")
@click.option("--required", multiple=True, metavar="PASS",
              help="A pass that must always run (repeatable); others are learned.")
@click.option("--no-learn", is_flag=True, help="Do not learn required passes; report prefixes "
                                               "that do not compile instead.")
@click.option("--rtol", type=TOLERANCE, default=1e-3, show_default=True)
@click.option("--atol", type=TOLERANCE, default=1e-4, show_default=True)
@click.option("--timeout", type=POSITIVE_SECONDS, default=600, show_default=True,
              help="Seconds per probe (a compile and a run).")
@click.option("--rev", default=None,
              help="Use this commit's build from the bisection in progress (e.g. its culprit) "
                   "instead of the TVM of this environment.")
@source_option
@json_option
@pass_terminal
def passes_cmd(term: Terminal, workload: str, target: str, check: str, required: tuple[str, ...],
               no_learn: bool, rtol: float, atol: float, timeout: float, rev: str | None,
               source: Path | None, as_json: bool) -> int:
    """Find the first pass whose application makes WORKLOAD's check fail.

    Runs the first k passes and skips the rest (PassInstrument.should_run), searching k;
    each probe is a subprocess in this environment, or in REV's build with --rev. The
    culprit is confirmed by running its prefix and the one before it again.

    \b
    Exit status: 0 a first bad pass (or the passes it may be), 1 none found, 3 the check is
    flaky (one probe judged two ways): no culprit on that evidence.
    """
    import tempfile

    from toolkit.bisect import passes, session

    env = session.build_env(session.current(source), rev, _events(term)) if rev else None
    with tempfile.TemporaryDirectory(prefix="tk-passes-") as tmp:
        result = passes.PassBisector(
            workload, target, required=required, workdir=Path(tmp), learn=not no_learn,
            events=_events(term), timeout=timeout, rtol=rtol, atol=atol, env=env,
        ).run()
    if as_json:
        term.json(result.to_json())
    else:
        term.echo(passes.markdown(result), nl=False)
    if result.status == "flaky":
        from toolkit.process import FLAKY

        return FLAKY
    return 0 if result.culprit is not None or result.candidates else 1


@bisect_group.command("functions")
@workload_argument
@target_option
@click.option("--good-pipeline", default="auto", show_default=True, metavar="NAME",
              help="The known-good side: the same TVM with this Relax pipeline instead of the "
                   "workload's own (which carries the suspect legalization or pass); auto: "
                   "the pipeline whose kernels are called most like the workload's own (zero "
                   "when its pipeline fuses, default when not).")
@python_option("The known-good side is another TVM: this interpreter's (a venv holding a "
               "release, say) lowers WORKLOAD with --good-pipeline; its kernels are read back "
               "as TVMScript into the TVM under test.", dest="good_python", default=None)
@click.option("--rtol", type=TOLERANCE, default=1e-3, show_default=True)
@click.option("--atol", type=TOLERANCE, default=1e-4, show_default=True)
@click.option("--timeout", type=POSITIVE_SECONDS, default=1800, show_default=True,
              help="Seconds for the whole search.")
@click.option("--rev", default=None,
              help="Use this commit's build from the bisection in progress instead of the TVM "
                   "of this environment.")
@source_option
@json_option
@pass_terminal
def functions_cmd(term: Terminal, workload: str, target: str, good_pipeline: str,
                  good_python: str | None, rtol: float, atol: float, timeout: float,
                  rev: str | None, source: Path | None, as_json: bool) -> int:
    """Find the kernel whose code breaks WORKLOAD's check, then the pass that made it.

    For a bug no optional pass is to blame for (a wrong legalization, a fork's required
    pass): WORKLOAD is lowered with its own pipeline (bad) and with --good-pipeline; good
    PrimFuncs are swapped into the bad module half at a time until one kernel is left
    (confirmed by checking it and the bad module again), then the first pass after which the
    two lowerings' kernels differ is named, with the IR diff.

    \b
    Exit status: 0 a bad kernel (or the kernels that are only bad together), 1 none found,
    3 the check is flaky (one module checked two ways): no kernel on that evidence.
    """
    from toolkit.bisect import functions, session

    env = session.build_env(session.current(source), rev, _events(term)) if rev else None
    where = f" in {good_python}'s TVM" if good_python else ""
    good = "every pipeline" if good_pipeline == "auto" else repr(good_pipeline)
    term.say(f"lowering {workload} for {target} with its pipeline and with {good}{where}")
    result = functions.run(workload, target, good_pipeline, env=env, rtol=rtol, atol=atol,
                           timeout=timeout, python=good_python)
    if as_json:
        term.json(asdict(result))
    else:
        term.echo(functions.markdown(result), nl=False)
    if result.status == "flaky":
        from toolkit.process import FLAKY

        return FLAKY
    return 0 if result.kernel or result.candidates else 1
