"""Example sessions in README.md and docs/*.md, read and run as the test of the docs.

A session is a fenced block whose info string is ``console``: lines starting with ``$ `` are
commands (a trailing ``\\`` continues one), the lines after a command until the next are what
it prints (standard output and error together, as a terminal shows them). Expected text may
hold ``[..]`` (any text within the line) and a line ``...`` (any number of lines, none
included), as Rust's trycmd writes them: times, paths, hashes and addresses differ from run
to run and are written that way where they appear.

An HTML comment just before a block says how to run it:

- ``<!-- doc-session: skip REASON -->``: not run here (a GPU, an hour-long build); the reason
  is the test's skip message;
- ``<!-- doc-session: files examples/gelu_mlp.py profiler -->``: repository paths copied into
  the session's directory first;
- ``<!-- doc-session: needs cmake ninja c++ -->``: programs the session runs that a machine
  may lack (the test extra brings CMake and Ninja, not a C++ compiler), by name on PATH or by
  absolute path; without one the session is skipped, saying which.

Each block runs in a directory of its own with a cache of its own (``TK_CACHE``), commands one
after the other through ``sh``, with this checkout's tk first on the path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```console\s*$")
DIRECTIVE = re.compile(r"^<!-- doc-session: (?P<kind>skip|files|needs) (?P<rest>.*?) -->\s*$")
ANY_LINES = "..."
ANY_TEXT = "[..]"


@dataclass
class Step:
    command: str
    expected: list[str]
    line: int  # of the command, in its file


@dataclass
class Session:
    path: Path
    line: int  # of the fence
    steps: list[Step]
    skip: str | None = None
    files: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def sessions(path: Path) -> list[Session]:
    """The console blocks of one Markdown file, in order."""
    lines = path.read_text().splitlines()
    found: list[Session] = []
    i = 0
    while i < len(lines):
        if not FENCE.match(lines[i]):
            i += 1
            continue
        directives = []
        j = i - 1
        while j >= 0 and DIRECTIVE.match(lines[j]):
            directives.append(DIRECTIVE.match(lines[j]))
            j -= 1
        start, i = i + 1, i + 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        session = Session(path, start, _steps(lines[start:i], start + 1))
        for d in directives:
            if d["kind"] == "skip":
                session.skip = d["rest"]
            elif d["kind"] == "files":
                session.files += d["rest"].split()
            else:
                session.needs += d["rest"].split()
        found.append(session)
        i += 1
    return found


def _steps(block: list[str], first_line: int) -> list[Step]:
    steps: list[Step] = []
    k = 0
    while k < len(block):
        if not block[k].startswith("$ "):
            raise ValueError(f"line {first_line + k}: output before any command")
        line = first_line + k
        command = block[k][2:]
        while command.endswith("\\") and k + 1 < len(block):
            k += 1
            command += "\n" + block[k]  # the shell reads backslash-newline as a continuation
        k += 1
        expected = []
        while k < len(block) and not block[k].startswith("$ "):
            expected.append(block[k])
            k += 1
        steps.append(Step(command, expected, line))
    return steps


def _line_pattern(expected: str) -> re.Pattern[str]:
    parts = expected.split(ANY_TEXT)
    return re.compile(".*".join(re.escape(p) for p in parts) + r"\Z", re.S)


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines are ``expected`` with its wildcards filled in."""
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            ok = j == len(actual)
        elif expected[i] == ANY_LINES:
            ok = any(at(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            ok = j < len(actual) and bool(_line_pattern(expected[i]).match(actual[j])) \
                and at(i + 1, j + 1)
        memo[(i, j)] = ok
        return ok

    return at(0, 0)
