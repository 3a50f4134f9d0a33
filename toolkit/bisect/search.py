"""The search over a linear list of commits, oldest (known good) to newest (known bad).

Pure functions over the list and the verdicts so far, so the search is tested without
processes. Like mozregression, the next probe is the midpoint unless a commit close to it
already has a build in the store: a probe that costs no build is worth a slightly less even
split. Skipped commits (untestable, flaky, unbuildable) are never probed again; when only
skipped commits separate the last good from the first bad, the answer is that range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from toolkit.bisect.protocol import BAD, GOOD, SKIP


@dataclass(frozen=True)
class Bounds:
    lo: int  # index of the newest commit known good (below ``hi``)
    hi: int  # index of the oldest commit known bad
    candidates: list[int]  # indices strictly between that are still worth probing
    skipped: list[int]  # indices strictly between that could not be tested

    @property
    def done(self) -> bool:
        return not self.candidates

    @property
    def steps_left(self) -> int:
        """Probes still needed in the worst case, skips aside."""
        return math.ceil(math.log2(len(self.candidates) + 1))


def bounds(commits: Sequence[str], marks: Mapping[str, str]) -> Bounds:
    """The current good/bad window. The list's ends count as good and bad when unmarked."""
    n = len(commits)
    bad_idx = [i for i, c in enumerate(commits) if marks.get(c) == BAD]
    hi = min(bad_idx) if bad_idx else n - 1
    good_idx = [i for i, c in enumerate(commits[:hi]) if marks.get(c) == GOOD]
    lo = max(good_idx) if good_idx else 0
    between = range(lo + 1, hi)
    skipped = [i for i in between if marks.get(commits[i]) == SKIP]
    candidates = [i for i in between if commits[i] not in marks]
    return Bounds(lo, hi, candidates, skipped)


def next_probe(
    commits: Sequence[str], marks: Mapping[str, str],
    cached: Callable[[str], bool] = lambda sha: False,
) -> int | None:
    """Index of the commit to probe next, or None when the window is closed.

    Among the candidates within a quarter of the window of the midpoint, the nearest one
    whose build is already stored wins; otherwise the candidate nearest the midpoint.
    """
    b = bounds(commits, marks)
    if b.done:
        return None
    mid = (b.lo + b.hi) / 2
    by_distance = sorted(b.candidates, key=lambda i: (abs(i - mid), i))
    reach = max(1.0, (b.hi - b.lo) / 4)
    for i in by_distance:
        if abs(i - mid) > reach:
            break
        if cached(commits[i]):
            return i
    return by_distance[0]


def answer(commits: Sequence[str], marks: Mapping[str, str]) -> list[str]:
    """The first bad commit (one element), or the commits it may be when skips hide it."""
    b = bounds(commits, marks)
    if not b.done:
        return []
    return list(commits[b.lo + 1: b.hi + 1])


def ahead(
    commits: Sequence[str], marks: Mapping[str, str], probe: int, width: int,
    cached: Callable[[str], bool] = lambda sha: False,
) -> list[int]:
    """Up to ``width`` probes that may follow ``probe``, the likeliest first: the next one if
    ``probe`` turns out good, the next one if bad, then the ones after those, breadth first.

    What a build slot builds while ``probe`` is built and checked: whichever way the check
    goes, the next probe's build is then done or under way (mozregression's prefetch; with
    more slots, a k-way split of the window built at once).
    """
    found: list[int] = []
    level = [(dict(marks), probe)]
    while level and len(found) < width:
        deeper = []
        for known, i in level:
            for verdict in (GOOD, BAD):
                after = {**known, commits[i]: verdict}
                j = next_probe(commits, after, cached)
                if j is None or j == probe or j in found:
                    continue
                found.append(j)
                deeper.append((after, j))
                if len(found) == width:
                    return found
        level = deeper
    return found
