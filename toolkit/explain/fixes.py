"""Fixes in TVM's history (and its ecosystem's) whose commit message quotes the log's error.

A fix's pull request often quotes the failure it fixes (``error: pointer type must have
explicit address space qualifier``, ``TypeError: expected Array<ir.PrimExpr> but got ...``).
``scripts/explain_fixes.py`` keeps those quotes, with the fix's title, the first paragraph of
its description and the first release that has it (``data/explain/fixes.txt.gz``). A log line
names a fix when it shares with one of its quotes a run of at least ``MIN_SHARED`` characters
(normalised: case, quotes and spacing do not count), most of the shorter of the two, that
holds the quote's own words: two words that at most a few commit messages of all the
histories use, or one such name (``tvm_rpc``, ``dot_4x4_i8i8s32_sdot``, ``mlir::presburger``);
or, for a message of common words told only by their order (runs of three words that few
messages use), the whole of both and at least ``MIN_WHOLE`` characters. A generic message
(``module 'tvm' has no attribute``) shared with a fix never names it. Where the log says
which TVM it ran and that TVM already has the fix, the fix is not the answer (a regression,
or another failure with the same words), and it is left out.

A change that quotes no error can still name one: ``tile-ai/tilelang#1175 "Add tl.infinity
operator for infinity handling of bfloat16"`` for ``Cannot decide infinity for type
bfloat16``. Every change whose title has a name in code (``bfloat16``, ``float8_e5m2``,
``aten::__lshift__``) is kept by its title's words too (``title_words``), and where no quote
names a fix, a title that shares with a log's error line two such words, a name and a word
that few titles use (``TITLE_RARE``), is given as a lead: its words are the error's, whether it
addresses the failure is not known, and the answer says so. Changes naming ONNX are kept by
their titles too: for the ONNX importer's ``Error converting operator CumSum``, the changes
whose titles name ONNX and CumSum are listed (``converter_changes``).

The cost is linear in the log: only the lines that look like errors are read (the first and
the last ``MAX_LINES``, each cut at ``MAX_LINE`` characters), candidates come from a word
index, and at most ``MAX_PAIRS`` pairs of a line and a quote are compared.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

from toolkit.explain.history import indexes
from toolkit.explain.tables import DATA
from toolkit.explain.tvm_version import LogVersion

# (no ``\w*`` before "Error": on a line of 40,000 word characters it made the search quadratic)
ERRORISH = re.compile(r"(?:Error|Exception)\b:|Check failed|\berror\b|undefined (?:reference|"
                      r"symbol)|CMake Error|[Ff]atal|No such file|no member named|no matching|"
                      r"not (?:found|registered|supported|defined)|[Cc]annot |[Uu]nsupported|"
                      r"[Ff]ailed")
# where a compiler says it stopped (/tmp/x/src/a.cc:12:3:): the file names differ, the message not
_LOCATION = re.compile(r"^\s*\S+?:\d+(?::\d+)?:\s+")
# a frame of a traceback (Python's, a numbered C++ backtrace's, dmlc's, JavaScript's)
FRAME = re.compile(r'\s*(?:File "|Traceback|\d+: |#\d+ |\[bt\]|at \S+ \()')
# what TVM prints under every error: it tells no fix from another
_BOILERPLATE = re.compile(r"An error occurred during the execution of TVM\.|For more information, "
                          r"please see: https://tvm\.apache\.org/docs/errors\.html", re.I)
_QUOTES = re.compile(r"[\s`'\"‘’“”]+")
_WORD = re.compile(r"[a-z_][a-z0-9_.:]*[a-z0-9_]")
_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_.:-]*[a-z0-9_]|[a-z0-9]")
MIN_SHARED = 24
# ... and most of the quote or of the log's line: a fix whose quote goes on with other words
# than the log's ("type_code_ == kDLFloat" where the log says kDLInt) fixed another failure.
COVER = 0.6
# A message of common words only ("pointer type must have explicit address space qualifier"),
# told by their order: the whole of both, and long.
MIN_WHOLE, WHOLE = 50, 0.8
MAX_LINES, MAX_LINE, MAX_PAIRS, MAX_CANDIDATES = 80, 400, 120, 6
# A quote's words that index it: rarer ones first, at most this many looked up per log line.
LOOKUPS = 12


def normalise(line: str) -> str:
    """Lower case, quotes and backticks gone, runs of spacing one space, a list's or a test
    log's marker (``- ``, ``> ``, ``E   ``) and a compiler's file:line: off the front."""
    line = _LOCATION.sub("", re.sub(r"^\s*(?:[-*>]|E )\s+", "", line))
    return _BOILERPLATE.sub(" ", _QUOTES.sub(" ", line)).strip().lower()


def words(text: str) -> list[str]:
    """What can tell a fix in a normalised text: its words of four characters or more (not a
    number or an address), and each run of three words (``explicit address space``: a
    message of common words is told by their order)."""
    tokens = _TOKEN.findall(text)
    single = [w for w in tokens if len(w) >= 4 and _WORD.fullmatch(w) and
              not re.fullmatch(r"0x[0-9a-f]+", w)]
    return single + [" ".join(tokens[i:i + 3]) for i in range(len(tokens) - 2)]


# A title's words that tk keeps: ones that at most this many titles of all the histories use
# (``infinity``, ``half_pixel_centers``; not ``support`` or ``cuda``) ...
TITLE_DF = 60
# ... of which a log's line must share two with a title, one a name and one used by at most
# TITLE_RARE titles, to be given that title.
TITLE_RARE = 3
# Words every kind of message and title has, which tell no change from another.
_TITLE_STOP = frozenset(
    "with from that this when into have does should error errors failed fail fixes fixed "
    "support supported using none true false type types value values cannot could found "
    "unable expected expects".split())
_TITLE_TAGS = re.compile(r"^(?:\[[^\]]*\]\s*)+|\s*\(#\d+\)\s*$")


def bare_title(title: str) -> str:
    """A commit title without its leading ``[Tag]``s and trailing ``(#N)``."""
    return _TITLE_TAGS.sub("", title)


def title_words(text: str) -> set[str]:
    """The words a title (``bare_title``) or a log's line is matched on: of four characters
    or more, or names in code, and a dotted name's last part too (``T.infinity`` is also
    ``infinity``)."""
    out = set()
    for w in _WORD.findall(normalise(bare_title(text))):
        w = w.strip(".:")
        if len(w) >= 4 or is_name(w):
            out.add(w)
        last = re.split(r"[.:]+", w)[-1]
        if last != w and len(last) >= 4:
            out.add(last)
    return {w for w in out if w not in _TITLE_STOP and not typename(w)}


def typename(word: str) -> bool:
    """An exception's name (``tvm._ffi.base.tvmerror``): every failure of its kind prints it."""
    return word.endswith(("error", "exception", "warning"))


def is_name(word: str) -> bool:
    """A name in code (``tvm_rpc``, ``mlir::presburger``, ``tir.lowerintrin``), not a word
    (nor a run of words)."""
    return " " not in word and (any(c in word for c in "_.:") or any(c.isdigit() for c in word))


@dataclass(frozen=True)
class Fix:
    repo: str  # apache/tvm
    ref: str  # #19617, or a commit's hex
    first: str  # the first release with it, or ""
    date: str
    title: str
    summary: str
    quote: str
    rare: frozenset[str]
    lead: str  # the description's prose right above the quote ("" when it is the summary)
    outside: bool  # it changed the project's CI, tests or docs only, not what users run

    def where(self) -> str:
        ref = f"{self.repo}{self.ref}" if self.ref.startswith("#") else \
            f"{self.repo} commit {self.ref}"
        when = f"first in {self.first}" if self.first else \
            f"merged {self.date}, in no release {self.repo} had tagged by then"
        title = re.sub(r"\s*\(#\d+\)$", "", self.title)
        return f'{ref} "{title}" ({when})'

    def having_it(self) -> str:
        """The builds that have it: "REPO vX or newer", or built after its merge."""
        return f"{self.repo} {self.first} or newer" if self.first else \
            f"a {self.repo} built after {self.date}"


@dataclass
class Fixed:
    """A fix whose quote a log line shares, and what they share (for a change found by its
    title, the words it shares: ``by_title``)."""

    fix: Fix
    line: int  # 1-based line of the log
    excerpt: str
    shared: str
    by_title: bool = False


class FixIndex:
    """Quotes by their rare words; changes by their titles' words (rows without a quote)."""

    def __init__(self, fixes: list[Fix]) -> None:
        self.fixes = fixes
        self.by_word: dict[str, list[int]] = defaultdict(list)
        self.by_title_word: dict[str, list[int]] = defaultdict(list)
        for i, fix in enumerate(fixes):
            for w in fix.rare:
                (self.by_word if fix.quote else self.by_title_word)[w].append(i)


@cache
def index(data: Path = DATA) -> FixIndex:
    fixes = []
    with gzip.open(data / "fixes.txt.gz", "rt") as f:
        for row in f:
            repo, ref, first, date, title, about, quote, rare, lead, scope = row.rstrip(
                "\n").split("\t")
            fixes.append(Fix(repo, ref, first, date, title, about, quote,
                             frozenset(rare.split("|")), lead, scope == "outside"))
    return FixIndex(fixes)


def find(text: str, version: LogVersion | None) -> list[Fixed]:
    """The fix whose quote the log's error lines share most (none when nothing specific is
    shared)."""
    fixes = index()
    lines = text.splitlines()
    # not a frame of a traceback, nor the line of source a Python traceback shows under it
    errors = [i for i, line in enumerate(lines) if ERRORISH.search(line) and not FRAME.match(
        line) and not (i and FRAME.match(lines[i - 1]))]
    if len(errors) > 2 * MAX_LINES:
        errors = errors[:MAX_LINES] + errors[-MAX_LINES:]
    best: Fixed | None = None
    pairs = 0
    for i in errors:
        # the line, and the message as it goes on over the next lines (a paste wraps it)
        said = [normalise(lines[i][:MAX_LINE]), normalise(" ".join(continued(lines, i))[:MAX_LINE])]
        found: dict[int, int] = defaultdict(int)
        indexed = [w for w in set(words(said[1])) if w in fixes.by_word]
        # (ties broken by the word, the candidates by their row: the same answer whatever
        # order a set gives, i.e. whatever PYTHONHASHSEED)
        for w in sorted(indexed, key=lambda w: (len(fixes.by_word[w]), w))[:LOOKUPS]:
            for k in fixes.by_word[w]:
                found[k] += 1
        for k in sorted(found, key=lambda k: (-found[k], k))[:MAX_CANDIDATES]:
            if pairs >= MAX_PAIRS:
                break
            pairs += 1
            fix = fixes.fixes[k]
            if _has_it(fix, version):
                continue
            for message in dict.fromkeys(said):
                shared = _shared(message, fix)
                if shared and (best is None or len(shared) > len(best.shared)):
                    best = Fixed(fix, i + 1, lines[i].strip()[:300], shared)
    if best is None:
        best = _by_title(fixes, lines, errors, version)
    return [best] if best else []


# TVM's ONNX importer (Relax's, and Relay's from v0.9) on a node it cannot convert
CONVERTING = re.compile(r"Error converting operator (\w+)")
MAX_CHANGES = 4


@dataclass
class Converter:
    """The changes of the ONNX converter of ``op`` that the log's TVM may not have."""

    op: str
    line: int
    excerpt: str
    changes: list[Fix]


def converter_changes(text: str, version: LogVersion | None) -> Converter | None:
    """For "Error converting operator OP": the changes whose titles name ONNX and OP, newest
    last, each once (a change merged on two branches is one), leaving out those the log's TVM
    has; None when the log has no such line or the history no such change."""
    m = CONVERTING.search(text)
    if m is None:
        return None
    op = m.group(1).lower()
    fixes = index()
    seen: dict[str, Fix] = {}
    for k in fixes.by_title_word.get(op, []):
        fix = fixes.fixes[k]
        if fix.repo == "apache/tvm" and "onnx" in fix.title.lower() and not _has_it(fix, version):
            seen.setdefault(fix.ref, fix)
    if not seen:
        return None
    changes = sorted(seen.values(), key=lambda f: f.date)[-MAX_CHANGES:]
    line = text.count("\n", 0, m.start()) + 1
    return Converter(m.group(1), line, text.splitlines()[line - 1].strip()[:300], changes)


def _tvm_in_log(version: LogVersion | None, repo: str, unknown: str) -> str:
    """What the log says of its TVM (for apache/tvm's changes), else ``unknown``."""
    if version is not None and repo == "apache/tvm":
        return f" The TVM in this log is {version.describe()} ({version.why})."
    return unknown


def describe_converter(found: Converter, version: LogVersion | None) -> tuple[str, str, str]:
    """(title, cause, fix) of the changes of the converter that failed."""
    listed = "; ".join(f.where() for f in found.changes)
    yours = _tvm_in_log(version, "apache/tvm", " The log does not say which TVM it ran.")
    return (f"Changes to TVM's ONNX converter of {found.op} that the log's TVM may lack",
            f"apache/tvm's history changes the ONNX importer's {found.op} converter in: "
            f"{listed}.{yours} Which of them, if any, is this failure is not known.",
            f"try {found.changes[-1].having_it()} (it has all of them); if it still fails, the "
            f"converter does not handle this model's {found.op} node: report it with the model")


def _by_title(fixes: FixIndex, lines: list[str], errors: list[int],
              version: LogVersion | None) -> Fixed | None:
    """The change whose title shares most with an error line: two words or more, among them
    a name and a word at most ``TITLE_RARE`` titles use; the rarer the words, the better."""
    best: tuple[float, Fixed] | None = None
    df = fixes.by_title_word
    for i in errors:
        said = title_words(lines[i][:MAX_LINE])
        count: dict[int, int] = defaultdict(int)
        for w in sorted((w for w in said if w in df), key=lambda w: (len(df[w]), w))[:LOOKUPS]:
            for k in df[w]:
                count[k] += 1
        for k in (k for k, n in count.items() if n >= 2):
            fix = fixes.fixes[k]
            shared = said & fix.rare
            if not (any(map(is_name, shared)) and min(len(df[w]) for w in shared) <= TITLE_RARE) \
                    or _has_it(fix, version):
                continue
            score = sum(1 / len(df[w]) for w in shared)
            if best is None or score > best[0]:
                best = (score, Fixed(fix, i + 1, lines[i].strip()[:300],
                                     ", ".join(sorted(shared)), by_title=True))
    return best[1] if best else None


def continued(lines: list[str], i: int, more: int = 2) -> list[str]:
    """Line ``i`` and up to ``more`` lines that go on with its message: not blank, not a code
    fence, not a frame of a traceback."""
    out = [lines[i]]
    for line in lines[i + 1:i + 1 + more]:
        if not line.strip() or line.lstrip().startswith("```") or FRAME.match(line):
            break
        out.append(line.strip())
    return out


def _shared(said: str, fix: Fix) -> str:
    """What a log's message shares with a fix's quote, when that tells the fix: "" if not."""
    m = SequenceMatcher(None, said, fix.quote, autojunk=False).find_longest_match(
        0, len(said), 0, len(fix.quote))
    shared = said[m.a:m.a + m.size]
    own = [w for w in words(shared) if w in fix.rare]
    told = sum(" " not in w for w in own) >= 2 or any(map(is_name, own))
    if told and m.size >= max(MIN_SHARED, COVER * min(len(fix.quote), len(said))) or \
            len(own) >= 3 and m.size >= max(MIN_WHOLE, WHOLE * max(len(fix.quote), len(said))):
        return shared
    return ""


def _has_it(fix: Fix, version: LogVersion | None) -> bool:
    """The log's TVM is known, and every version it may be has the fix."""
    if version is None or fix.repo != "apache/tvm" or not fix.first:
        return False
    labels = version.versions.labels
    if fix.first not in labels:
        return False
    return indexes(version.mask)[0] >= labels.index(fix.first)


def describe(found: Fixed, version: LogVersion | None) -> tuple[str, str, str]:
    """(title, cause, fix) of a fix the log's error is quoted in."""
    fix = found.fix
    what = f" It says: {fix.summary}" if fix.summary else ""
    if found.by_title:
        return (f"A change in {fix.repo}'s history names what this error names",
                f"{fix.where()} is titled with this error's words ({found.shared}); it quotes "
                f"no error, so whether it addresses this failure is not known."
                f"{what}{_tvm_in_log(version, fix.repo, '')}",
                f"read {fix.ref}: if it is this failure, use {fix.having_it()}, or apply the "
                "change")
    if fix.lead:
        what += f" Above the quote: {fix.lead}"
    quoted = f"whose message quotes this error (\"{found.shared.strip()}\").{what}"
    if fix.outside:
        # a change of CI, tests or docs met the error: its words say why, a release does not
        return (f"A change in {fix.repo}'s history met this error",
                f"{fix.where()} changed only the project's CI, tests or docs, {quoted}",
                "read how that change avoided it (what it says above); a newer release "
                f"of {fix.repo} does not change this")
    yours = _tvm_in_log(version, fix.repo, " The log does not say whether its build has the fix.")
    return (f"A fix in {fix.repo}'s history quotes this error",
            f"Fixed in {fix.where()}, {quoted}{yours}",
            f"use {fix.having_it()}, or apply the fix ({fix.ref}) to your tree; if your build "
            "already has it, this is another failure with the same message")
