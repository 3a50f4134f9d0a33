"""Finding the rules' failures in a log, in time linear in its size.

Each rule's needle is found with ``str.find``; its regex then runs only in a bounded window
around each occurrence (``BEHIND`` characters before, ``WINDOW`` after) and at most
``TRIES_PER_LINE`` times per line, so no input - not 40,000 characters on one line before
``undefined symbol`` - makes a rule cost more than a constant per occurrence.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from toolkit.cause import exception_text
from toolkit.explain.rules import RULES, Rule

BEHIND = 300  # characters before a needle a match may start (a library path, a block name)
WINDOW = 2000  # characters after a needle a match may span (CUDALaunch prints two lines)
TRIES_PER_LINE = 4


@dataclass
class Finding:
    """One recognised failure in a log: which rule, where, and what to do."""

    id: str
    family: str
    title: str
    cause: str
    fix: str
    line: int
    excerpt: str
    source: str
    rank: int
    groups: dict[str, str] = field(default_factory=dict)
    also_lines: list[int] = field(default_factory=list)

    def one_line(self) -> str:
        return f"{self.title}: {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_COMPILED = [(rule, rule.compiled()) for rule in RULES]


def explain(text: str) -> list[Finding]:
    """Every known failure in ``text``, in the order they appear (one per rule and cause)."""
    findings: list[Finding] = []
    for rule, regex in _COMPILED:
        seen_lines: set[int] = set()
        counted, line = 0, 1
        for m in _matches(text, regex, rule.needles()):
            line += text.count("\n", counted, m.start())
            counted = m.start()
            if line in seen_lines:
                continue
            seen_lines.add(line)
            findings.append(_finding(rule, m, text, line))
    # Where several rules explain one line (or a block a generic rule spans, such as a CMake
    # error's message), the specific one (highest rank) speaks for it.
    top: dict[int, int] = {}
    for f in findings:
        top[f.line] = max(top.get(f.line, f.rank), f.rank)
    spans = {rule.id: rule.span for rule in RULES}
    findings = [f for f in findings
                if all(top.get(line, 0) <= f.rank for line in range(f.line, f.line + 1 + spans[f.id]))]
    findings.sort(key=lambda f: (f.line, -f.rank))
    # One failure often prints the same complaint many times (ptxas per instruction).
    merged: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        first = merged.setdefault((f.id, f.cause, f.fix), f)
        if first is not f:
            first.also_lines.append(f.line)
    return list(merged.values())


def _finding(rule: Rule, m: re.Match[str], text: str, line: int) -> Finding:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    cause, fix = rule.cause, rule.fix
    if rule.refine is not None:
        refined = rule.refine(groups, text[max(0, m.start() - WINDOW):m.end() + WINDOW])
        if refined:
            cause, fix = refined
    return Finding(rule.id, rule.family, rule.title, cause, fix, line, m.group(0).strip()[:300],
                   rule.source, rule.rank, groups)


def _matches(text: str, regex: re.Pattern[str], needles: tuple[str, ...]) -> list[re.Match[str]]:
    """Matches of ``regex`` that hold a needle on the line where they start, in text order."""
    found: list[re.Match[str]] = []
    for needle in needles:
        pos = text.find(needle)
        tries = 0
        while pos != -1:
            line_start = text.rfind("\n", max(0, pos - BEHIND), pos) + 1 or max(0, pos - BEHIND)
            m = regex.search(text, line_start, min(len(text), pos + len(needle) + WINDOW))
            if m is not None and m.start() <= pos:
                found.append(m)
                tries = TRIES_PER_LINE  # one finding per line and rule
            else:
                tries += 1
            if tries >= TRIES_PER_LINE:
                tries = 0
                nxt = text.find("\n", pos)
                pos = -1 if nxt == -1 else text.find(needle, nxt)
            else:
                pos = text.find(needle, pos + 1)
    found.sort(key=lambda m: m.start())
    return found


def best(text_or_exc: str | BaseException) -> Finding | None:
    """The most useful finding: the highest-ranked rule, earliest in the text."""
    text = text_or_exc if isinstance(text_or_exc, str) else exception_text(text_or_exc)
    return pick(explain(text))


def pick(findings: list[Finding]) -> Finding | None:
    """The finding to act on first: the highest rank, then the earliest line."""
    return min(findings, key=lambda f: (-f.rank, f.line), default=None)


def hint(text_or_exc: str | BaseException) -> str | None:
    """One line to print under a failure (``explain: <title>: <fix>``), or None."""
    finding = best(text_or_exc)
    return f"explain: {finding.one_line()}" if finding else None
