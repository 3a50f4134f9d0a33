"""Where TVM raises the error a log shows: its message matched against TVM's error sites.

The error-site index (:func:`toolkit.explain.history.sites`) holds every ``CHECK``,
``LOG(FATAL)``, ``TVM_FFI_THROW``, ``throw`` and Python ``raise``/``assert`` of every indexed
TVM version, with its message template. A log line is matched two ways, both in time linear
in the log:

- ``Check failed: (COND) is false: MSG`` (and ``Check failed: A == B (x vs. y) : MSG``, and
  the older ``Check failed: COND MSG``): COND is looked up as written in the source;
- any other error line: each word of it is looked up among the templates' rarest words, and
  the templates found are checked piece by piece (formatted parts are wildcards).

Only lines that look like errors are read (at most ``MAX_LINES``: the first ones and the last
ones), each up to ``MAX_LINE`` characters, and at most ``MAX_CHECKS`` templates per line are
checked, so a 1 MB log costs a bounded amount of matching on top of one pass over its lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.explain.history import Site, SiteIndex, matches_template, sites, squeeze
from toolkit.explain.tvm_version import LogVersion

MAX_LINES = 160
MAX_LINE = 2000
MAX_CHECKS = 400
MIN_LITERAL = 16  # characters of a template a line must match to count (not "Unknown %s")
_ERRORISH = ("Check failed", "rror", "xception", "what():", "atal", "FATAL", "CHECK", "ailed",
             "not ", "Cannot", "cannot", "nvalid", "nsupported", "must ", "xpect")
_FILE = re.compile(r"(?:^|[/\s\"(])((?:src|include)/(?:[\w.-]+/)+[\w.-]+\.(?:cc|h))\b")
_PY_FILE = re.compile(r"(?:^|/)(python/tvm/(?:\w+/)*\w+\.py)\b|/tvm/((?:\w+/)*\w+\.py)\"")
_IS_FALSE = re.compile(r"\((?P<cond>.*)\) is false(?::\s?(?P<msg>.*))?$")
_BINARY = re.compile(r"(?P<cond>.+?) \((?:.*) vs\. (?:.*)\)\s*:\s?(?P<msg>.*)$")


@dataclass
class Raised:
    """A site that raises what a log line says, and how well it matched."""

    site: Site
    line: int  # 1-based line of the log
    excerpt: str
    score: int
    by_condition: bool
    others: int  # further sites with the same message and score (copies in other files)
    places: list[Site]  # the same check in other files of other versions, newest first


def find(text: str, version: LogVersion | None) -> list[Raised]:
    """The best-matching site for the log's error lines: the earliest strong match first."""
    lines = text.splitlines()
    candidates: list[int] = []
    files: set[str] = set()
    for i, line in enumerate(lines):
        if len(files) < 64 and ("src/" in line or "include/" in line or ".py\"" in line):
            for m in _FILE.finditer(line[:MAX_LINE]):
                files.add(m.group(1))
            m = _PY_FILE.search(line[:MAX_LINE])
            if m:
                files.add(m.group(1) or f"python/tvm/{m.group(2)}")
        if any(w in line for w in _ERRORISH):
            candidates.append(i)
    if len(candidates) > MAX_LINES:
        candidates = candidates[:MAX_LINES // 2] + candidates[-MAX_LINES // 2:]
    index = sites()
    found: list[Raised] = []
    for i in candidates:
        hit = _match_line(index, lines[i][:MAX_LINE], files, version)
        if hit is not None:
            site, score, by_cond, others, places = hit
            found.append(Raised(site, i + 1, lines[i].strip()[:300], score, by_cond, others,
                                places))
    if not found:
        return []
    best = max(found, key=lambda r: (r.by_condition, r.score, -r.line))
    return [best]


def _match_line(index: SiteIndex, line: str, files: set[str], version: LogVersion | None
                ) -> tuple[Site, int, bool, int, list[Site]] | None:
    scored: dict[int, tuple[int, bool]] = {}
    at = line.find("Check failed:")
    if at >= 0:
        for i, score in _by_condition(index, line[at + len("Check failed:"):].strip()):
            scored[i] = (score, True)
    checks = 0
    for word in dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", line)):
        for i in index.by_anchor.get(word, ()):
            if i in scored:
                continue
            checks += 1
            if checks > MAX_CHECKS:
                break
            got = matches_template(index.sites[i].template, line)
            if got >= MIN_LITERAL:
                scored[i] = (got, False)
    if version is not None:  # a site the log's TVM does not have cannot have raised it
        scored = {i: v for i, v in scored.items()
                  if index.sites[i].mask & version.mask or index.sites[i].file in files}
    if not scored:
        return None

    def rank(i: int) -> tuple:
        site = index.sites[i]
        score, by_cond = scored[i]
        in_log = site.file in files
        in_version = bool(version and version.mask & site.mask)
        return (by_cond, score + (40 if in_log else 0), in_version, site.mask.bit_length())

    best = max(scored, key=rank)
    site = index.sites[best]
    # The same check moved between files over the versions (src/tir -> src/tirx): one check.
    same = [index.sites[i] for i in scored if index.sites[i].kind == site.kind and
            index.sites[i].template == site.template and
            squeeze(index.sites[i].condition) == squeeze(site.condition)]
    taken = 0
    places = []
    for other in sorted(same, key=lambda x: -x.mask.bit_length()):
        if not other.mask & taken:
            places.append(other)
            taken |= other.mask
    top = rank(best)[:2]
    others = sum(1 for i in scored if rank(i)[:2] == top and index.sites[i] not in places)
    score, by_cond = scored[best]
    return site, score, by_cond, others, places


def _by_condition(index: SiteIndex, after: str) -> list[tuple[int, int]]:
    """Sites whose condition is the one a ``Check failed:`` line prints, with a score."""
    msg = ""
    m = _IS_FALSE.match(after) or _BINARY.match(after)
    conds = []
    if m:
        conds.append(m.group("cond"))
        msg = m.group("msg") or ""
    else:  # dmlc's "Check failed: COND MESSAGE": the longest prefix that is a known condition
        words = after.split(" ")
        conds += [" ".join(words[:k]) for k in range(min(len(words), 30), 0, -1)]
    out = []
    for cond in conds:
        key = squeeze(cond)
        if len(key) < 4 or key not in index.by_condition:
            continue
        if not m:
            msg = after[len(cond):].strip(" :")
        for i in index.by_condition[key]:
            score = 2 * len(key)
            template = index.sites[i].template
            literal = matches_template(template, msg) if msg and template.strip() else 0
            # A check with a message prints it; one without prints nothing after the colon.
            score += literal if literal > 0 else (-5 if bool(template.strip()) != bool(msg) or
                                                 template.strip() and literal < 0 else 0)
            out.append((i, score))
        break
    return out


def describe(raised: Raised, version: LogVersion | None) -> tuple[str, str, str]:
    """(title, cause, fix) of a matched site."""
    site, index = raised.site, sites()
    v = index.versions
    where = f"{site.file}, {site.function}" if site.function else site.file
    newest = v.labels[site.mask.bit_length() - 1]
    copies = f" (and {raised.others} other place{'s' if raised.others > 1 else ''} with the same " \
        "message)" if raised.others else ""
    moves = [p for p in raised.places if p is not site]
    if moves:
        copies += "; the same check is in " + "; ".join(
            f"{p.file}, {p.function or '?'} ({v.span(p.mask)})" for p in moves[:4])
    if site.kind in ("check", "assert"):
        when = f"when `{site.condition}` does not hold" if site.condition else ""
    elif site.condition.startswith("not (") and site.condition.endswith(")"):
        when = f"when `{site.condition[5:-1]}` does not hold"
    elif site.condition:
        when = f"when `{site.condition}`"
    else:
        when = ""
    present = v.span(site.mask)
    gone = v.after_last(site.mask)
    history = f"present {present}" + (f", gone from {gone}" if gone else "")
    yours = f"; the TVM in this log is {version.describe()} ({version.why})" if version else ""
    cause = (f"raised in {where} (line {site.line} in {newest}){copies}"
             f"{' ' + when if when else ''}; {history}{yours}.")
    function = site.function.rsplit("::", 1)[-1] or Path(site.file).name
    if site.kind in ("check", "fatal") or site.kind.endswith("InternalError"):
        fix = (f"an invariant of {function} does not hold for what reached it: look at the pass "
               "or schedule step that called it in the traceback; if the input is valid this is "
               "a TVM bug - report it with a script that reproduces it (tk bisect can find the "
               "commit that introduced it)")
    elif site.kind.startswith("schedule"):
        fix = (f"the schedule primitive's precondition ({site.function}) does not hold for the "
               "block/loop given: change the schedule (another loop, block, or order of steps)")
    else:
        fix = (f"{function} rejects its input{' ' + when if when else ''}: change what is passed "
               "to it (arguments, IR, target) so that it does not")
    return f"Raised in TVM: {where}", cause, fix


def source_lines(file: str, line: int, condition: str, needle: str, root: Path,
                 around: int = 2) -> list[str]:
    """The lines of ``root`` (a TVM source tree) that raise it, numbered, nearest the indexed
    ``line``; [] when the file or the raise is not there (another version of the tree)."""
    path = root / file
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    cond = squeeze(condition)
    hit = None
    for i, text in enumerate(lines):
        if needle and needle[:60] in text or cond and cond[:40] in squeeze(text):
            if hit is None or abs(i + 1 - line) < abs(hit + 1 - line):
                hit = i
    if hit is None:
        return []
    lo, hi = max(0, hit - around), min(len(lines), hit + around + 1)
    return [f"{path}:{n + 1}: {lines[n]}" for n in range(lo, hi)]
