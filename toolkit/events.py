"""What long-running work reports while it goes: typed events and the handler that hears them.

A build, a bisection or a dump takes minutes; the user wants to see it move and a tool wants
to follow it. The work itself never prints: it calls ``events(SomeEvent(...))`` with a frozen
dataclass, and whoever started it decides what that means. The command line passes its
terminal, which draws progress bars on a TTY and plain lines elsewhere
(``toolkit.cli.terminal``); a test, or another program, passes ``list.append`` and gets the
run as typed objects (as mozregression's ``BisectorHandler`` does for its bisections).

Events common to every chore live here; a chore's own (a bisection's steps and verdicts) live
beside it (``toolkit.bisect.events``) and subclass ``Event``. Stdlib only: every layer may
import this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """Base of everything work reports while it runs."""


Handler = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The handler of work nobody watches."""


@dataclass(frozen=True)
class Stage(Event):
    """A step of the work begins ("building X in DIR; log: L"); one line, said once."""

    message: str


@dataclass(frozen=True)
class Progress(Event):
    """Countable work moved on: ``done`` of ``total`` units (Ninja's edges, passes, ...).

    ``task`` names the work being counted, so one handler can follow several at once.
    """

    task: str
    done: int
    total: int
