"""The terminal seam: results, errors and the events of long work, as the user sees them."""

from __future__ import annotations

import io
import json

import click
import pytest
from test_bisect_search import COMMITS, World, make_state

from toolkit.bisect import events as ev
from toolkit.cli import bisect_events  # noqa: F401 - registers how bisect events read
from toolkit.cli.terminal import Terminal
from toolkit.events import Event, Progress, Stage


def terminal(interactive: bool = False) -> tuple[Terminal, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Terminal(out=out, err=err, interactive=interactive), out, err


def test_plain_progress_is_a_line_per_quarter_and_a_bar_on_a_tty():
    term, _, err = terminal()
    for done in range(0, 101):
        term.handle(Progress("compile", done, 100))
    assert err.getvalue().splitlines() == [
        "  compile: [25/100]", "  compile: [50/100]", "  compile: [75/100]",
        "  compile: [100/100]"]

    term, out, err = terminal(interactive=True)
    term.handle(Progress("compile", 1, 4))
    term.handle(Progress("compile", 2, 4))
    term.echo("result")  # ends the bar's line before anything else is written
    assert err.getvalue() == ("\r  [" + "#" * 7 + "." * 23 + "] 1/4 compile"
                              "\r  [" + "#" * 15 + "." * 15 + "] 2/4 compile\n")
    assert out.getvalue() == "result\n"


def test_json_mode_keeps_progress_plain_and_results_one_document():
    term, out, err = terminal(interactive=True)
    term.as_json = True
    term.handle(Stage("building x"))
    term.handle(Progress("compile", 4, 4))
    term.result({"a": 1}, lambda d: "never")
    assert json.loads(out.getvalue()) == {"a": 1}
    assert err.getvalue() == "tk: building x\n  compile: [4/4]\n"


def test_results_tables_and_abort():
    term, out, err = terminal()
    term.result({"a": 1}, lambda d: f"a is {d['a']}")
    term.table([["x", 1], ["long name", 22]], header=["NAME", "N"])
    assert out.getvalue() == "a is 1\nNAME       N\nx          1\nlong name  22\n"
    with pytest.raises(click.exceptions.Exit) as left:
        term.abort("it broke", code=2)
    assert left.value.exit_code == 2
    term.warn("careful")
    assert err.getvalue() == "tk: error: it broke\nwarning: careful\n"


def test_an_event_nobody_describes_is_shown_by_its_fields():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Odd(Event):
        n: int

    term, _, err = terminal()
    term.handle(Odd(3))
    assert err.getvalue() == "Odd(n=3)\n"


def test_the_terminal_and_a_list_hear_the_same_bisection(tmp_path, monkeypatch):
    """A second handler gets the run the terminal renders, as typed objects."""
    st = make_state(tmp_path, monkeypatch)
    term, _, err = terminal()
    seen: list[ev.Event] = []

    def both(event: ev.Event) -> None:
        seen.append(event)
        term.handle(event)

    World(10).bisector(st, both).run()
    lines = err.getvalue().splitlines()
    assert lines[0] == f"checking the good end: {COMMITS[0][:10]}"
    assert lines[1] == "  built in 5.0s"
    assert lines[2] == "  -> good (exit 0)"
    assert f"[2] 63 commits left between {COMMITS[0][:10]} (good) and {COMMITS[64][:10]} " \
           "(bad), ~6 steps" in lines
    assert f"confirming: {COMMITS[10][:10]} bad, its parent {COMMITS[9][:10]} good" in lines
    verdict_lines = [ln for ln in lines if "-> " in ln]
    verdicts = [e for e in seen if isinstance(e, ev.Verdict)]
    assert len(verdict_lines) == len(verdicts)
    for line, e in zip(verdict_lines, verdicts):
        assert line.endswith(f"-> {e.verdict} ({e.reason})")
    assert sum(isinstance(e, ev.StepStarted) for e in seen) == len(
        [ln for ln in lines if ln.startswith(("checking the", "probing "))])


def test_a_real_tty_gets_the_bar_and_a_pipe_gets_lines():
    """Whether progress redraws is decided by the stream itself, not by a flag."""
    import os

    primary, secondary = os.openpty()
    with os.fdopen(secondary, "w") as tty, io.StringIO() as pipe:
        assert Terminal(err=tty).interactive
        assert not Terminal(err=pipe).interactive
        on_tty = Terminal(err=tty)
        on_tty.as_json = True  # --json keeps stderr plain even on a terminal
        assert not on_tty.interactive
        Terminal(err=tty).handle(Progress("compile", 2, 4))
        tty.flush()
        drawn = os.read(primary, 200).decode()
    os.close(primary)
    assert drawn.startswith("\r  [" + "#" * 15 + "." * 15 + "] 2/4 compile")
