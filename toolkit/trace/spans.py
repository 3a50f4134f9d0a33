"""A span of one compile's time: plain data that the in-TVM recorder (``trace.in_tvm.record``)
makes and the host's report (``trace.report``) reads; no tvm, nothing of tk beyond this."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Span kinds (the trace's ``cat``).
COMPILE = "compile"
PASS = "pass"
DLIGHT = "dlight"
CODEGEN = "codegen"
PYTHON = "python"

PASSES_TRACK, PYTHON_TRACK = 1, 2
TRACK_NAMES = {PASSES_TRACK: "compile: passes, dlight rules, codegen",
               PYTHON_TRACK: "Python calls of the compile stack"}


@dataclass
class Span:
    """One timed thing; times in seconds from the compile's start."""

    name: str
    kind: str  # COMPILE, PASS, DLIGHT, CODEGEN or PYTHON
    start: float
    seconds: float
    number: int | None = None  # a pass's number, the one tk dump-ir and tk bisect passes use
    function: str | None = None  # the one function it ran on, when that is known
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def end(self) -> float:
        return self.start + self.seconds

    @property
    def track(self) -> int:
        return PYTHON_TRACK if self.kind == PYTHON else PASSES_TRACK
