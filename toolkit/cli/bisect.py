"""``tk bisect``: find the commit, then the pass, that broke a compile-and-test check."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from toolkit.cli.options import (
    COUNT,
    POSITIVE_SECONDS,
    TOLERANCE,
    echo_json,
    json_option,
    recipe_options,
    target_option,
    workload_argument,
)

source_option = click.option(
    "--source", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The git repository to bisect (default: the one around the current directory).")


def _progress(msg: str) -> None:
    click.echo(msg, err=True)


def _checkout_and_build(st: Any, sha: str) -> Any:
    """Check ``sha`` out in the bisection's worktree and build it through the store."""
    from toolkit.bisect import session

    with session.locked(st):
        b = session.bisector(st, _progress)
        b.checkout(sha)
        built = b.build(sha)
        st.current = sha
        st.save()
    return built


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
@click.option("--regress", default="error", show_default=True,
              help="What 'bad' means: error (non-zero exit), success (exit 0), crash (killed "
                   "by a signal), match:REGEX (output matches).")
@click.option("--build-failure", type=click.Choice(["skip", "bad"]), default=None,
              help="Verdict for a commit that does not build (default skip; bad for "
                   "build-only).")
@click.option("--timeout", type=POSITIVE_SECONDS, default=None, help="Seconds per check run.")
@click.option("--on-timeout", type=click.Choice(["skip", "bad", "good"]), default="skip",
              show_default=True, help="Verdict for a check run that timed out.")
@click.option("--count", type=COUNT, default=1, show_default=True,
              help="Runs per probe; runs that disagree make the commit flaky (skipped).")
@recipe_options
@click.option("--build-cmd", default=None, metavar="CMD",
              help="For a tree that is not TVM: the shell command that builds it in the "
                   "worktree ($TK_BISECT_BUILD_DIR is a build directory kept between steps; "
                   "default for CMake projects: configure once, then cmake --build).")
@click.option("--no-build", is_flag=True, help="Build nothing: the check builds by itself.")
@click.argument("check_args", nargs=-1, type=click.UNPROCESSED)
def start_cmd(good: str, bad: str, source: Path | None, check_text: str | None, regress: str,
              build_failure: str | None, timeout: float | None, on_timeout: str, count: int,
              recipe: dict[str, Any], build_cmd: str | None,
              no_build: bool, check_args: tuple[str, ...]) -> None:
    """Start a bisection between GOOD and BAD (nothing is built until 'run').

    \b
    The check's words may follow the options:
      tk bisect start --good v0.20 --bad main --check numerics builtin:mlp --target llvm
      tk bisect start --good A --bad B -- pytest tests/python/relax/test_x.py::test_y
    """
    from toolkit.bisect import session

    words = [check_text] if check_text else []
    if check_args:
        words = [*(shlex.split(check_text) if check_text else []), *check_args]
    st = session.start(source or Path.cwd(), good, bad, words, regress=regress,
                       build_failure=build_failure, timeout=timeout, on_timeout=on_timeout,
                       count=count, build_options=recipe, build_cmd=build_cmd,
                       no_build=no_build)
    how = {None: "tk build (artifact store)", "": "none (the check builds)"}.get(
        st.build_command, st.build_command)
    click.echo(f"bisecting {len(st.commits) - 1} commits of {st.source}: good {st.good[:10]} "
               f".. bad {st.bad[:10]}, check: {st.check_display}")
    click.echo(f"build: {how}")
    click.echo("next: 'tk bisect run' (automatic) or 'tk bisect good|bad|skip' (by hand)")


@bisect_group.command("run")
@source_option
def run_cmd(source: Path | None) -> int:
    """Run the bisection to the end (or continue an interrupted one)."""
    from toolkit.bisect import report, session

    st = session.current(source)
    with session.locked(st):
        session.bisector(st, _progress).run()
    click.echo(report.markdown(report.build(st)), nl=False)
    return 0 if st.culprit or st.culprit_candidates else 1


def _mark(value: str, rev: str | None, source: Path | None) -> None:
    from toolkit.bisect import session
    from toolkit.bisect.worktree import open_repo, resolve

    st = session.current(source)
    repo = open_repo(Path(st.source))
    sha = resolve(repo, rev, value) if rev else st.current
    if sha is None:
        raise click.UsageError(f"nothing checked out yet: give the revision ('tk bisect "
                               f"{value} REV')")
    if sha not in st.commits:
        raise click.UsageError(f"{rev or sha[:10]} is not in the range being bisected")
    ends = {st.good: "good", st.bad: "bad"}
    if sha in ends and ends[sha] != value:
        raise click.UsageError(f"{rev or sha[:10]} is the {ends[sha]} end of the range: it cannot "
                               f"be {value} (start again with other ends: 'tk bisect reset')")
    with session.locked(st):
        b = session.bisector(st, _progress)
        nxt = b.mark(sha, value)
        if nxt is None:
            from toolkit.bisect import report

            click.echo(report.markdown(report.build(st)), nl=False)
            return
        b.checkout(st.commits[nxt])
        st.current = st.commits[nxt]
        st.save()
    click.echo(f"next to test: {st.current[:10]} (checked out in {st.worktree}); "
               f"eval \"$(tk bisect env --source {shlex.quote(st.source)})\" puts its build in "
               "use; check, then 'tk bisect good|bad|skip'")


for _value in ("good", "bad", "skip"):
    def _make(value: str) -> click.Command:
        @bisect_group.command(value, help=f"Mark REV (default: the commit being tested) {value}.")
        @click.argument("rev", required=False)
        @source_option
        def cmd(rev: str | None, source: Path | None) -> None:
            _mark(value, rev, source)

        return cmd

    _make(_value)


@bisect_group.command("status")
@source_option
@json_option
def status_cmd(source: Path | None, as_json: bool) -> None:
    """Where the bisection stands: window, steps left, what it stopped on."""
    from toolkit.bisect import search, session

    st = session.current(source)
    b = search.bounds(st.commits, st.marks)
    data = {"status": st.status, "source": st.source, "good": st.commits[b.lo],
            "bad": st.commits[b.hi], "untested": len(b.candidates), "skipped": len(b.skipped),
            "steps_left": b.steps_left, "probes": len(st.steps), "culprit": st.culprit,
            "stop_reason": st.stop_reason, "check": st.check_display}
    if as_json:
        echo_json(data)
        return
    if not b.done:
        click.echo(f"{st.status}: {len(b.candidates)} untested commits between "
                   f"{data['good'][:10]} (good) and {data['bad'][:10]} (bad), "
                   f"~{b.steps_left} steps left; {len(st.steps)} probes so far")
    else:
        click.echo(f"{st.status}: {len(st.steps)} probes")
    if st.culprit:
        click.echo(f"first bad commit: {st.culprit}")
    if st.stop_reason:
        click.echo(f"stopped: {st.stop_reason}")


@bisect_group.command("log")
@source_option
def log_cmd(source: Path | None) -> None:
    """Every probe so far, one a line."""
    from toolkit.bisect import session

    st = session.current(source)
    for i, s in enumerate(st.steps, 1):
        build = {True: "store", False: f"built {s.build_seconds:.1f}s", None: "-"}[s.cache_hit]
        click.echo(f"{i:3} {s.commit[:10]} {s.phase:8} {s.verdict:5} {s.reason} [{build}, "
                   f"{s.seconds:.1f}s]")


@bisect_group.command("report")
@source_option
@json_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report here (.md or .json).")
def report_cmd(source: Path | None, as_json: bool, output: Path | None) -> None:
    """The answer: first bad commit, range, steps, and a command that reproduces it."""
    from toolkit.bisect import report, session

    data = report.build(session.current(source))
    if output:
        import json

        output.write_text(json.dumps(data, indent=2) if output.suffix == ".json"
                          else report.markdown(data))
    if as_json:
        echo_json(data)
    else:
        click.echo(report.markdown(data), nl=False)


def _build_env(rev: str, source: Path | None) -> dict[str, str]:
    """Check out and build REV in the bisection's worktree; the environment of its checks."""
    from toolkit.bisect import session
    from toolkit.bisect.worktree import open_repo, resolve

    st = session.current(source)
    sha = resolve(open_repo(Path(st.source)), rev, "revision")
    built = _checkout_and_build(st, sha)
    if not built.ok:
        raise click.ClickException(f"{sha[:10]} does not build: {built.message}")
    return session.check_env(built.env)


@bisect_group.command("env")
@click.argument("rev", required=False)
@source_option
@json_option
def env_cmd(rev: str | None, source: Path | None, as_json: bool) -> int:
    """Build REV (default: the commit being tested) in the bisection's worktree, through the
    store, and print the exports that put it in use: eval "$(tk bisect env REV)"."""
    from toolkit.bisect import session
    from toolkit.bisect.worktree import open_repo, resolve
    from toolkit.build import store

    st = session.current(source)
    sha = resolve(open_repo(Path(st.source)), rev, "revision") if rev else st.current
    if sha is None:
        raise click.UsageError("nothing checked out yet: give the revision")
    built = _checkout_and_build(st, sha)
    if not built.ok:
        click.echo(f"tk: error: {sha[:10]} does not build: {built.message}", err=True)
        return 1
    if as_json:
        echo_json(built.env)
    else:
        click.echo(store.shell_exports(built.env))
    return 0


@bisect_group.command("reset")
@source_option
def reset_cmd(source: Path | None) -> None:
    """Remove the bisection's worktree and state; nothing else."""
    from toolkit.bisect import session

    root = session.reset(source)
    click.echo(f"removed the bisection of {root}")


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
def passes_cmd(workload: str, target: str, check: str, required: tuple[str, ...],
               no_learn: bool, rtol: float, atol: float, timeout: float, rev: str | None,
               source: Path | None, as_json: bool) -> int:
    """Find the first pass whose application makes WORKLOAD's check fail.

    Runs the first k passes and skips the rest (PassInstrument.should_run), searching k;
    each probe is a subprocess in this environment, or in REV's build with --rev.
    """
    import tempfile

    from toolkit.bisect import passes

    env = None
    if rev:
        env = _build_env(rev, source)
    with tempfile.TemporaryDirectory(prefix="tk-passes-") as tmp:
        result = passes.PassBisector(
            workload, target, required=required, workdir=Path(tmp), learn=not no_learn,
            progress=_progress, timeout=timeout, rtol=rtol, atol=atol, env=env,
        ).run()
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(passes.markdown(result), nl=False)
    return 0 if result.culprit is not None or result.candidates else 1
