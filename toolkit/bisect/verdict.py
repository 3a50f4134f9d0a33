"""What a check's outcome means: good, bad, skip, or stop.

A probe is one run of the check on one commit. Its raw outcome (exit status, output,
timeout, build failure) becomes a verdict through the user's ``--regress`` mode; ``--count``
probes of one commit are folded into one verdict, and disagreement among them is flaky.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.errors import UserError
from toolkit.process import CHECK_NOT_EXECUTABLE, CHECK_NOT_FOUND, CHECK_SKIP

GOOD = "good"
BAD = "bad"
SKIP = "skip"
STOP = "stop"


REGRESS_MODES = ("error", "success", "crash", "match:REGEX")


@dataclass(frozen=True)
class Outcome:
    """What one run of a check did."""

    returncode: int | None  # None when it timed out; negative when killed by a signal
    output: str = ""  # stdout and stderr together (tail kept for the report)
    seconds: float = 0.0
    timed_out: bool = False


@dataclass(frozen=True)
class Verdict:
    value: str  # GOOD, BAD, SKIP or STOP
    reason: str  # one line a person can read: "exit 1", "flaky: 2 good, 1 bad", ...

    def __str__(self) -> str:
        return f"{self.value} ({self.reason})"


def parse_regress(mode: str) -> str:
    """Validate a ``--regress`` value (``match:REGEX`` must compile)."""
    if mode in ("error", "success", "crash"):
        return mode
    if mode.startswith("match:"):
        try:
            re.compile(mode[len("match:"):])
        except re.error as e:
            raise UserError(f"--regress {mode!r}: bad regular expression: {e}") from None
        return mode
    raise UserError(f"--regress {mode!r}: expected one of {', '.join(REGRESS_MODES)}")


def crashed(returncode: int) -> bool:
    """Killed by a signal, directly (negative) or as a shell reports it (128+N)."""
    return returncode < 0 or returncode > 128


def classify(outcome: Outcome, regress: str = "error", timeout: str = "skip") -> Verdict:
    """One probe's verdict. 125 skips and 126/127 stop in every mode."""
    if outcome.timed_out:
        return Verdict(timeout, "timed out")
    rc = outcome.returncode
    assert rc is not None
    if rc == CHECK_SKIP:
        return Verdict(SKIP, "exit 125 (check says: cannot test)")
    if rc in (CHECK_NOT_EXECUTABLE, CHECK_NOT_FOUND):
        what = "not executable" if rc == CHECK_NOT_EXECUTABLE else "not found"
        return Verdict(STOP, f"exit {rc}: the check command is {what}; fix the check, then "
                             "'tk bisect run' continues")
    how = f"killed by signal {-rc if rc < 0 else rc - 128}" if crashed(rc) else f"exit {rc}"
    if regress == "error":
        return Verdict(GOOD if rc == 0 else BAD, how)
    if regress == "success":
        return Verdict(BAD if rc == 0 else GOOD, how)
    if regress == "crash":
        return Verdict(BAD if crashed(rc) else GOOD, how)
    pattern = regress[len("match:"):]
    found = re.search(pattern, outcome.output, re.MULTILINE)
    return Verdict(BAD if found else GOOD,
                   f"output {'matches' if found else 'does not match'} /{pattern}/ ({how})")


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Fold the ``--count`` probes of one commit: any stop stops; disagreement is flaky."""
    for v in verdicts:
        if v.value == STOP:
            return v
    values = [v.value for v in verdicts]
    if len(set(values)) == 1:
        return verdicts[0]
    tally = ", ".join(f"{values.count(x)} {x}" for x in (GOOD, BAD, SKIP) if x in values)
    return Verdict(SKIP, f"flaky: {tally} in {len(values)} runs")


def build_failed(policy: str) -> Verdict:
    """A commit that does not build: untestable (skip) unless the user said it is bad."""
    return Verdict(policy, "build failed")
