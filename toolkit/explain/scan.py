"""Finding a regular expression near literal needles, in time linear in the text.

Each needle is found with ``str.find``; the regex then runs only in a bounded window around
each occurrence (``BEHIND`` characters before, ``WINDOW`` after) and at most
``TRIES_PER_LINE`` times per line, so no input - not 40,000 characters on one line before
``undefined symbol`` - costs more than a constant per occurrence. The rules
(:mod:`toolkit.explain.match`) and the history answers (:mod:`toolkit.explain.drift`) both
read logs through it.
"""

from __future__ import annotations

import re

BEHIND = 300  # characters before a needle a match may start (a library path, a block name)
WINDOW = 2000  # characters after a needle a match may span (CUDALaunch prints two lines)
TRIES_PER_LINE = 4


def matches(text: str, regex: re.Pattern[str], needles: tuple[str, ...],
            one_line: bool = False) -> list[re.Match[str]]:
    """Matches of ``regex`` that hold a needle on the line where they start, in text order.
    ``one_line``: the pattern never spans lines, so it is searched within the needle's line."""
    found: list[re.Match[str]] = []
    for needle in needles:
        pos = text.find(needle)
        tries = 0
        while pos != -1:
            line_start = text.rfind("\n", max(0, pos - BEHIND), pos) + 1 or max(0, pos - BEHIND)
            end = min(len(text), pos + len(needle) + WINDOW)
            if one_line:
                nl = text.find("\n", pos, end)
                end = end if nl == -1 else nl
            m = regex.search(text, line_start, end)
            if m is not None and m.start() <= pos:
                found.append(m)
                tries = TRIES_PER_LINE  # one finding per line and pattern
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


def line_of(text: str, pos: int) -> int:
    """1-based line number of ``pos`` (linear; callers walking forward use ``str.count``)."""
    return text.count("\n", 0, pos) + 1
