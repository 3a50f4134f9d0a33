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
``aten::__lshift__``, ``CommReduce``) is kept by its title's words too (``title_words``), and a
title that shares with a log's error message two such things (or one dotted name written whole:
``nn.dropout``), a name among them and a word that few titles use (``TITLE_RARE``), is given as
a lead, where no quote names a fix or beside one when it names what the quote does not: its
words are the error's, whether it addresses the failure is not known, and the answer says so.
Changes are also listed by what they change: for the ONNX importer's ``Error converting
operator CumSum`` (or an error raised in its ``CumSum`` converter) the changes whose titles
name ONNX and CumSum (``converter_changes``), for a check in ``CommReduce`` the changes whose
titles name that function, when few titles do (``site_changes``).

The cost is linear in the log: only the lines that look like errors are read (the first and
the last ``MAX_LINES``, each cut at ``MAX_LINE`` characters), candidates come from a word
index, and at most ``MAX_PAIRS`` pairs of a line and a quote are compared.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

from toolkit.explain.history import Site, indexes, sites
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
    or more, or names in code; a dotted name's shorter forms too (``relax.nn.dropout`` is also
    ``nn.dropout`` and ``dropout``), a snake-case name without its underscores (``batch_norm``
    is also ``batchnorm``, as a title writes ``BatchNorm``) and without the number TVM makes
    a name unique with (``gpu_2d_continuous_cumsum1`` is also ``gpu_2d_continuous_cumsum``)."""
    out = set()
    for w in _WORD.findall(normalise(bare_title(text))):
        w = w.strip(".:")
        if len(w) >= 4 or is_name(w):
            out.add(w)
        for sep in _SEPARATOR.finditer(w):
            tail = w[sep.end():]
            if len(tail) >= 4 or is_name(tail):
                out.add(tail)
        if "_" in w and not _SEPARATOR.search(w) and len(w.replace("_", "")) >= 4:
            out.add(w.replace("_", ""))
        # TVM's name supply makes a name unique with a number (gpu_2d_continuous_cumsum1)
        unique = _NUMBERED.fullmatch(w)
        if unique:
            out.add(unique.group(1))
    return {w for w in out if w not in _TITLE_STOP and not typename(w)}


_SEPARATOR = re.compile(r"[.:]+")
_NUMBERED = re.compile(r"([a-z][a-z0-9]*_[a-z0-9_]*[a-z]{2})\d+")


def _whole(text: str) -> set[str]:
    """The words of ``text`` as written, without the shorter forms ``title_words`` adds."""
    return {w.strip(".:") for w in _WORD.findall(normalise(bare_title(text)))}


def _concept(word: str) -> str:
    """What a title word and its other forms (``title_words``) name: ``relax.nn.dropout``,
    ``nn.dropout`` and ``dropout`` are one; ``batch_norm`` and ``batchnorm`` are one, and
    ``gpu_2d_cumsum1`` and ``gpu_2d_cumsum``."""
    last = _SEPARATOR.split(word)[-1]
    unique = _NUMBERED.fullmatch(last)
    return (unique.group(1) if unique else last).replace("_", "")


# A name in CamelCase (``CommReduce``, ``ReorderPermuteDimsAfterConcat``, ``getAttr``): a
# title writes a function or a pass that way, and normalising loses the case that tells it.
_CAMEL = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*")


def names_in(text: str, said: set[str] | None = None) -> set[str]:
    """The title words of ``text`` (``said``, when already read) that are names in code, its
    CamelCase ones included."""
    camel = {w.lower() for w in _CAMEL.findall(text)}
    return {w for w in (title_words(text) if said is None else said) if is_name(w) or w in camel}


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

    @property
    def words(self) -> list[str]:
        """The words a title lead shares with the log."""
        return self.shared.split(", ")


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
    # A quote may share only the message's common part ("CodeGenVM cannot handle this
    # intrinsic now:", quoted for relax.isnan); a title that names what the log names and the
    # quote does not (nn.dropout) stands beside it.
    lead = _by_title(fixes, lines, errors, version) or (
        _crash_fix(fixes, text, version) if best is None else None)
    if best is None or lead is not None and lead.fix.ref != best.fix.ref and any(
            w not in f"{best.fix.quote} {best.fix.title.lower()}" for w in lead.words):
        return [f for f in (best, lead) if f is not None]
    return [best]


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


def converter_changes(text: str, version: LogVersion | None,
                      raised_in: Site | None = None) -> Converter | None:
    """For "Error converting operator OP", or an error raised in the ONNX importer's converter
    class OP (``raised_in``): the changes whose titles name ONNX and OP, newest last, leaving
    out those the log's TVM has; None when the log has no such line or the history no such
    change."""
    m = CONVERTING.search(text)
    if m is not None:
        op, line = m.group(1), text.count("\n", 0, m.start()) + 1
    elif raised_in is not None and raised_in.file.endswith(ONNX_IMPORTERS) and \
            "." in raised_in.function:
        op, line = raised_in.function.split(".")[0], 0
    else:
        return None
    changes = _changes_naming(op.lower(), "apache/tvm", version,
                              lambda fix: "onnx" in fix.title.lower())
    if not changes:
        return None
    return Converter(op, line, text.splitlines()[line - 1].strip()[:300] if line else "", changes)


# Relax's ONNX importer and Relay's: a converter is a class, its error raised in ``_impl_vN``
ONNX_IMPORTERS = ("frontend/onnx/onnx_frontend.py", "relay/frontend/onnx.py")
_PASSES = re.compile(r"(?:^|/)transforms?/")
# The repository of each project whose error sites tk indexes (by its Python package)
REPOS = {"tvm": "apache/tvm", "tilelang": "tile-ai/tilelang", "tvm_ffi": "apache/tvm-ffi",
         "mlc_llm": "mlc-ai/mlc-llm"}
# A function named in at most this many titles is named by the changes to it, not in passing
# (``CommReduce``, not ``VisitExpr_``)
NAMED_RARELY = 8


def site_changes(site: Site, repo: str, version: LogVersion | None) -> tuple[str, list[Fix]]:
    """The changes of ``repo`` to the function (or the pass its file holds) that raises the
    log's error, whose titles name it, that the log's TVM may lack, newest last: ``CommReduce
    could handle 0-dim data`` for ``Cannot reduce a 0 dim Tensor`` raised in ``CommReduce``;
    with the function (or the file) they change."""
    function = re.split(r"::|\.", site.function)[-1]
    # a pass's file, in a folder of passes, is its name in snake case (src/relax/transform/
    # reorder_permute_dims_after_concat.cc); another file (codegen_cuda.cc) names no one change
    stem = Path(site.file).stem
    pass_name = stem.replace("_", "") if "_" in stem and _PASSES.search(site.file) else ""
    df = index().by_title_word
    for name, what in ((function, site.function), (pass_name, site.file)):
        if len(name) >= 6 and not _common_function(name) and \
                0 < len(df.get(name.lower(), [])) <= NAMED_RARELY:
            return what, _changes_naming(name.lower(), repo, version)
    return "", []


@cache
def _functions_files() -> dict[str, set[str]]:
    """The files whose error sites are in a function of each (last part of a) name."""
    table: dict[str, set[str]] = defaultdict(set)
    for site in sites().sites:
        table[re.split(r"::|\.", site.function)[-1]].add(site.file)
    return table


def _common_function(name: str) -> bool:
    """A name many files give a function (``VisitExpr_``, ``_impl_v13``, ``Rewrite``): what
    a title says of it is not of this one."""
    return len(_functions_files().get(name, ())) > 2


def _changes_naming(word: str, repo: str, version: LogVersion | None,
                    keep: Callable[[Fix], bool] = lambda fix: True) -> list[Fix]:
    """``repo``'s changes titled with ``word`` that ``keep`` accepts and the log's TVM may
    lack, newest last, each once (a change merged on two branches is one), at most
    ``MAX_CHANGES``."""
    fixes = index()
    seen: dict[str, Fix] = {}
    for k in fixes.by_title_word.get(word, []):
        fix = fixes.fixes[k]
        if fix.repo == repo and keep(fix) and not _has_it(fix, version):
            seen.setdefault(fix.ref, fix)
    return sorted(seen.values(), key=lambda f: f.date)[-MAX_CHANGES:]


def _tvm_in_log(version: LogVersion | None, repo: str, unknown: str) -> str:
    """What the log says of its TVM (for apache/tvm's changes), else ``unknown``."""
    if version is not None and repo == "apache/tvm":
        return f" The TVM in this log is {version.describe()} ({version.why})."
    return unknown


def describe_changes(what: str, repo: str, changes: list[Fix], version: LogVersion | None
                     ) -> tuple[str, str, str]:
    """(title, cause, fix) of the changes to ``what`` (the ONNX converter that failed, the
    function that raised) that the log's build may lack."""
    listed = "; ".join(f.where() for f in changes)
    yours = _tvm_in_log(version, repo, " The log does not say which " + (
        "TVM" if repo == "apache/tvm" else repo) + " it ran.")
    return (f"Changes to {what} that the log's build may lack",
            f"{repo}'s history changes {what} in: {listed}.{yours} Which of them, if any, is "
            "this failure is not known.",
            f"try {changes[-1].having_it()} (it has all of them); if it still fails, report it "
            "with a script that reproduces it")


def _by_title(fixes: FixIndex, lines: list[str], errors: list[int],
              version: LogVersion | None) -> Fixed | None:
    """The change whose title shares most with an error line: two words or more, among them
    a name and a word at most ``TITLE_RARE`` titles use; the rarer the words, the better."""
    best: tuple[float, Fixed] | None = None
    df = fixes.by_title_word
    for i in errors:
        message = " ".join(continued(lines, i))[:MAX_LINE]
        said = title_words(message)
        if not said:
            continue
        names, whole = names_in(message, said), _whole(message)
        count: dict[int, int] = defaultdict(int)
        for w in sorted((w for w in said if w in df), key=lambda w: (len(df[w]), w))[:LOOKUPS]:
            for k in df[w]:
                count[k] += 1
        for k in (k for k, n in count.items() if n >= 2):
            fix = fixes.fixes[k]
            shared = said & fix.rare
            # two things shared (``func_name`` and its ``funcname`` are one), or one dotted
            # name that one of them writes whole (``nn.dropout`` for ``relax.nn.dropout``; not
            # ``async.bulk.tensor``, the end of ``cp.async.bulk.tensor`` and of
            # ``cp.reduce.async.bulk.tensor``)
            told = len({_concept(w) for w in shared}) >= 2 or any(
                _SEPARATOR.search(w) and (w in whole or w in _whole(fix.title)) for w in shared)
            if not (told and shared & (names | names_in(fix.title)) and
                    min(len(df[w]) for w in shared) <= TITLE_RARE) or _has_it(fix, version):
                continue
            score = sum(1 / len(df[w]) for w in shared)
            if best is None or score > best[0]:
                best = (score, Fixed(fix, i + 1, lines[i].strip()[:300],
                                     ", ".join(sorted(shared)), by_title=True))
    return best[1] if best else None


# A process that crashed prints no message of its own: the words of a fix of a crash are
# the names of what crashed, anywhere in the log (from_exported_program, index_put_)
CRASH = re.compile(r"Segfault|SIGSEGV|Segmentation fault|double free|core dumped", re.I)
_CRASH_TITLE = re.compile(r"segfault|segmentation fault|\bcrash|double free|use[- ]after[- ]free",
                          re.I)
CRASH_LINES = 400  # the log's first lines read for its names


@cache
def _crash_titles() -> list[tuple[int, frozenset[str]]]:
    """The title rows of fixes of a crash, with the names their titles have."""
    fixes = index()
    return [(k, frozenset(names_in(f.title))) for k, f in enumerate(fixes.fixes)
            if not f.quote and f.summary and _CRASH_TITLE.search(f.title)]


def _crash_fix(fixes: FixIndex, text: str, version: LogVersion | None) -> Fixed | None:
    """For a crash, the fix of a crash whose title names something the log names (a name
    at most ``TITLE_RARE`` titles use); the rarer, the better."""
    m = CRASH.search(text)
    if m is None:
        return None
    head = "\n".join(text.splitlines()[:CRASH_LINES])
    said = names_in(head, title_words(head))
    df = fixes.by_title_word
    best: tuple[float, Fixed] | None = None
    for k, names in _crash_titles():
        shared = {w for w in said & names if len(df.get(w, ())) <= TITLE_RARE}
        fix = fixes.fixes[k]
        if not shared or _has_it(fix, version):
            continue
        score = sum(1 / len(df[w]) for w in shared)
        if best is None or score > best[0]:
            line = text.count("\n", 0, m.start()) + 1
            best = (score, Fixed(fix, line, text.splitlines()[line - 1].strip()[:300],
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
