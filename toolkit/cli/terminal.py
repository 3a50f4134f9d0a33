"""The one seam between tk's commands and the terminal.

Every command gets a ``Terminal`` (``@pass_terminal``) and writes through it: results on
stdout (text, or JSON with ``--json``), notes, warnings and errors on stderr, and the events
of long work (``toolkit.events``) rendered as they arrive. The library never prints; it
returns data and emits events, and this module is where both become characters.

Progress degrades with the terminal: on a TTY a ``Progress`` is one bar redrawn in place;
on a pipe, a log file or with ``--json`` it is a plain line at each quarter, so a CI log
shows the work moving without a flood. Event types a command knows how to say (a
bisection's verdicts) are registered with ``describe``; an event nobody registered is
shown by its fields rather than lost.

Imports nothing but click and the standard library: ``tk --help`` loads this module.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

import click

from toolkit.events import Event, Progress, Stage

BAR_WIDTH = 30


@functools.singledispatch
def describe(event: Event) -> str | None:
    """The line that tells a person ``event`` happened; None says nothing.

    Commands register their own event types (``@describe.register``); this fallback shows
    the event's type and fields.
    """
    fields = ", ".join(f"{f.name}={getattr(event, f.name)!r}" for f in dataclasses.fields(event))
    return f"{type(event).__name__}({fields})"


class Terminal:
    """Output and progress for one run of a command.

    ``as_json`` is set by ``--json`` (``json_option``): results go out as one JSON document
    and progress as plain lines on stderr, which a tool reading stdout never sees.
    """

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None,
                 interactive: bool | None = None, prefix: str = "tk") -> None:
        self._out = out
        self._err = err
        self._interactive = interactive
        self.prefix = prefix  # said before errors and notes, like a compiler's name
        self.as_json = False
        self._bar_open = False  # a progress bar is drawn on the current stderr line
        self._quarters: dict[str, int] = {}  # plain progress: the last quarter shown per task

    @property
    def out(self) -> IO[str]:
        return self._out or sys.stdout

    @property
    def err(self) -> IO[str]:
        return self._err or sys.stderr

    @property
    def interactive(self) -> bool:
        """Whether progress may redraw a line: a TTY on stderr, and no --json."""
        if self._interactive is not None:
            return self._interactive and not self.as_json
        return not self.as_json and self.err.isatty()

    # -- results, on stdout ----------------------------------------------------------------

    def echo(self, text: str = "", *, nl: bool = True) -> None:
        self._end_bar()
        click.echo(text, file=self.out, nl=nl)

    def json(self, value: Any) -> None:
        self._end_bar()
        click.echo(json.dumps(value, indent=2, default=str), file=self.out)

    def result(self, data: Any, text: Callable[[Any], str]) -> None:
        """``data`` as JSON with --json, else as ``text(data)`` says it."""
        if self.as_json:
            self.json(data)
            return
        rendered = text(data)
        if rendered:  # nothing to say is no output, not an empty line
            self.echo(rendered, nl=not rendered.endswith("\n"))

    def table(self, rows: Sequence[Sequence[Any]], header: Sequence[str] | None = None,
              indent: str = "") -> None:
        """Rows as left-aligned columns, each as wide as its widest cell."""
        cells = [[str(c) for c in row] for row in ([header] if header else []) + list(rows)]
        if not cells:
            return
        widths = [max(len(row[i]) for row in cells if i < len(row))
                  for i in range(max(map(len, cells)))]
        for row in cells:
            line = "  ".join(c.ljust(widths[i]) for i, c in enumerate(row))
            self.echo(indent + line.rstrip())

    # -- words to the user, on stderr ------------------------------------------------------

    def say(self, text: str) -> None:
        """A plain line on stderr: what the work is doing, never part of the result."""
        self._end_bar()
        click.echo(text, file=self.err)

    def note(self, text: str) -> None:
        self.say(f"{self.prefix}: note: {text}")

    def warn(self, text: str) -> None:
        self.say(f"warning: {text}")

    def error(self, text: str) -> None:
        """An error line that does not end the command (it still reports what it has)."""
        self.say(f"{self.prefix}: error: {text}")

    def abort(self, text: str, code: int = 1) -> NoReturn:
        """Say ``text`` as tk's error line and leave with ``code`` (1: failed, 2: misuse)."""
        self.error(text)
        raise click.exceptions.Exit(code)

    # -- events of long work ---------------------------------------------------------------

    def handle(self, event: Event) -> None:
        """The ``toolkit.events.Handler`` commands give the library."""
        if isinstance(event, Progress):
            self._progress(event)
            return
        if isinstance(event, Stage):
            self.say(f"{self.prefix}: {event.message}")
            return
        line = describe(event)
        if line is not None:
            self.say(line)

    def _progress(self, p: Progress) -> None:
        total = max(p.total, 1)
        if self.interactive:
            filled = BAR_WIDTH * min(p.done, total) // total
            self.err.write(f"\r  [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
                           f"{p.done}/{p.total} {p.task}")
            self.err.flush()
            self._bar_open = True
            if p.done >= p.total:
                self._end_bar()
            return
        # A line per quarter: enough to see it move, not a flood in a log.
        quarter = 4 * min(p.done, total) // total
        if quarter > self._quarters.get(p.task, 0) or (p.done >= p.total and quarter == 0):
            self._quarters[p.task] = quarter
            self.say(f"  {p.task}: [{p.done}/{p.total}]")
        if p.done >= p.total:
            self._quarters.pop(p.task, None)

    def _end_bar(self) -> None:
        if self._bar_open:
            self._bar_open = False
            self.err.write("\n")
            self.err.flush()


pass_terminal = click.make_pass_decorator(Terminal, ensure=True)
