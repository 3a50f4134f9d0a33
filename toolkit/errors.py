"""The three ways a tk command can fail, each with its own exit code, and the did-you-mean
that a user mistake's one line ends with."""

from __future__ import annotations

from collections.abc import Iterable


class TkError(Exception):
    """A failure of tk itself or of the environment it drives: exit 1."""

    exit_code = 1


class UserError(TkError):
    """A mistake in what the user asked for (bad flag, missing file, bad ref): exit 2."""

    exit_code = 2


class TvmFailure(TkError):
    """TVM raised while doing what was asked; carries what reproduces it."""

    exit_code = 1

    def __init__(self, message: str, reproduce: str | None = None) -> None:
        super().__init__(message)
        self.reproduce = reproduce

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\n  reproduce: {self.reproduce}" if self.reproduce else text


class DeviceAbsent(UserError):
    """The target's device is not present on this machine."""


def suggest(name: str, known: Iterable[str]) -> str:
    """`` — did you mean X?`` for the known name closest to a mistyped one, else ``""``."""
    import difflib  # here: every tk process imports this module, few make a mistake

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" — did you mean {close[0]}?" if close else ""
