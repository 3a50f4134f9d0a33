"""Finding the rules' failures in a log, in time linear in its size.

Each rule's needle is found with ``str.find`` and its regex runs only near it
(:mod:`toolkit.explain.scan`), so no input makes a rule cost more than a constant per
occurrence. Beside the rules, the answers from TVM's own history (:mod:`toolkit.explain.drift`:
API drift; :mod:`toolkit.explain.raised`: where TVM raises an error; :mod:`toolkit.explain.fixes`:
a fix whose commit message quotes the error) join the findings, and,
when nothing else answers, the log's own traceback (its innermost TVM frame); every finding
says which source it came from (``origin``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from toolkit.cause import exception_text, first_cause
from toolkit.explain.rules import NOT_THIS, RULES, Rule
from toolkit.explain.scan import WINDOW, matches
from toolkit.explain.tvm_version import LogVersion


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
    origin: str = "rule"  # rule, API history, error-site index, environment check, a table

    def one_line(self) -> str:
        return f"{self.title}: {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_COMPILED = [(rule, rule.compiled()) for rule in RULES]
# Logs pasted through a forum or a word processor come back with typographic quotes
# (AttributeError: module ‘tvm’ has no attribute ‘x’); Python, CMake and TVM print plain ones,
# and GCC's ‘X’ is matched as 'X' by every rule, so the quotes are made plain before matching
# (one character for one: offsets and line numbers do not move).
TYPOGRAPHIC_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})
# Below the rules that judge a failure (default 50), above the generic ones (CMake stopped, a
# library not on the loader path): what TVM's history says is more specific than those.
HISTORY_RANK, SITE_RANK = 46, 44
HISTORY, SITES = "API history", "error-site index"
# A fix whose message quotes the error: what to get, beside where the error is raised (which
# it does not replace: a quote can be incidental to what the fix did).
FIX_RANK, FIXES = 43, "fix history"
# Below the judging rules and the history; above the generic rules. The log's own traceback
# only says where, when nothing at rank TRACEBACK_RANK + 10 or more answers.
TRACEBACK_RANK, TRACEBACK = 30, "traceback"


def explain(text: str) -> list[Finding]:
    """Every known failure in ``text``, in the order they appear (one per rule and cause)."""
    text = text.translate(TYPOGRAPHIC_QUOTES)
    findings: list[Finding] = []
    for rule, regex in _COMPILED:
        seen_lines: set[int] = set()
        counted, line = 0, 1
        for m in matches(text, regex, rule.needles(), one_line=rule.one_line):
            line += text.count("\n", counted, m.start())
            counted = m.start()
            if line in seen_lines:
                continue
            found = _finding(rule, m, text, line)
            if found is not None:
                seen_lines.add(line)
                findings.append(found)
    from toolkit.explain import tvm_version

    version = tvm_version.infer(text)
    findings += from_history(text, version)
    # a change found by its title's words is a lead, not an answer to the line
    answers = [f for f in findings if f.groups.get("by") != "title"]
    if not any(f.rank >= TRACEBACK_RANK + 10 for f in answers):
        findings += from_traceback(text, version, {f.line for f in answers})
    # Where several rules explain one line (or a block a generic rule spans, such as a CMake
    # error's message), the specific one (highest rank) speaks for it.
    top: dict[int, int] = {}
    for f in findings:
        if f.origin != FIXES:  # a fix that quotes the line stands beside its explanation
            top[f.line] = max(top.get(f.line, f.rank), f.rank)
    spans = {rule.id: rule.span for rule in RULES}
    findings = [f for f in findings if all(top.get(line, 0) <= f.rank for line in range(
        f.line, f.line + 1 + spans.get(f.id, 0))) or f.id not in spans]
    findings.sort(key=lambda f: (f.line, -f.rank))
    # One failure often prints the same complaint many times (ptxas per instruction).
    merged: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        first = merged.setdefault((f.id, f.cause, f.fix), f)
        if first is not f:
            first.also_lines.append(f.line)
    return list(merged.values())


def from_history(text: str, version: LogVersion | None) -> list[Finding]:
    """The answers TVM's own history gives: API drift, where TVM raises the error, and a fix
    whose message quotes it."""
    from toolkit.explain import drift, fixes, raised

    out = []
    for a in drift.answers(text, version):
        out.append(Finding(f"api-{a.kind}", "version", a.title, a.cause, a.fix,
                           text.count("\n", 0, a.start) + 1, a.excerpt[:300], drift.SOURCE,
                           HISTORY_RANK, {"name": a.name}, origin=a.origin or HISTORY))
    explained = {f.line for f in out}
    drift_words = {needle for kind, needles, _ in drift.PATTERNS for needle in needles
                   if kind != "unbound"}  # TVM's own messages say "is not defined" too
    site = None
    for r in raised.find(text, version):
        # A check's own site still says where the name was looked up when the history
        # says why it is missing (GetFuncFromEnv's check for a contrib function not built).
        if not r.by_condition and (r.line in explained or r.copied or any(
                w in r.site.template for w in drift_words)):
            continue  # Python's own wording copied into TVM, or what the history answers
        site = r
        title, cause, fix = raised.describe(r, version)
        if r.line in explained:  # the history's answer on this line says why it failed
            fix = "this says where the check is; the TVM's history above says why it failed"
        needle = max(r.site.pieces(), key=len).strip()
        out.append(Finding("error-site", "tvm-source", title, cause, fix, r.line, r.excerpt,
                           f"{r.site.file}:{r.site.line}", SITE_RANK,
                           {"file": r.site.file, "function": r.site.function,
                            "line": str(r.site.line), "condition": r.site.condition,
                            "needle": needle}, origin=SITES))
    own = site is not None and site.index is not None and site.index.project.own
    converter = fixes.converter_changes(text, version, site.site if own else None)
    if converter is not None:
        line, excerpt = (converter.line, converter.excerpt) if converter.line else \
            (site.line, site.excerpt)
        title, cause, fix = fixes.describe_changes(
            f"TVM's ONNX converter of {converter.op}", "apache/tvm", converter.changes, version)
        out.append(Finding("converter-changes", "version", title, cause, fix, line, excerpt,
                           "apache/tvm " + " ".join(f.ref for f in converter.changes), FIX_RANK,
                           {"op": converter.op, "by": "title"}, origin=FIXES))
    elif site is not None and site.index is not None and (
            site.others == 0 or site.at_line or site.in_frames):  # which function it is
        repo = fixes.REPOS.get(site.index.project.package, "")
        where, changes = fixes.site_changes(site.site, repo, version) if repo else ("", [])
        if changes:
            title, cause, fix = fixes.describe_changes(
                f"{where} (where this error is raised)", repo, changes, version)
            out.append(Finding("code-changes", "version", title, cause, fix, site.line,
                               site.excerpt, repo + " " + " ".join(f.ref for f in changes),
                               FIX_RANK, {"function": where, "by": "title"}, origin=FIXES))
    for found in fixes.find(text, version):
        title, cause, fix = fixes.describe(found, version)
        out.append(Finding("fixed-upstream", "version", title, cause, fix, found.line,
                           found.excerpt, f"{found.fix.repo}{found.fix.ref}", FIX_RANK,
                           {"repo": found.fix.repo, "ref": found.fix.ref,
                            "first": found.fix.first,
                            "by": "title" if found.by_title else "quote"}, origin=FIXES))
    return out


def from_traceback(text: str, version: LogVersion | None, answered: set[int]) -> list[Finding]:
    """Where the log's own traceback says the error was raised, when nothing more specific
    answers (no finding on the cause's line, ``answered``): its innermost TVM frame (or, for
    a ``__getattr__`` that raised, the TVM frame that called it) and the history of that file;
    for a ``KeyError`` whose key is an IR object, that object's type and files."""
    from toolkit.explain import frames, raised

    cause = first_cause(text)
    if not cause.definite or cause.line in answered:
        return []
    keyed = raised.from_ir_key(cause.kind, cause.text, version)
    if keyed is not None:
        title, why, fix, file = keyed
        return [Finding("ir-object-key", "tvm-source", title, why, fix, cause.line,
                        cause.text[:300], file, TRACEBACK_RANK, {"file": file},
                        origin=HISTORY)]
    if not cause.frames:
        return []
    # the frames printed right above the cause's line: is a __getattr__'s caller TVM's own?
    above = "\n".join(text.split("\n", cause.line)[max(0, cause.line - 12):cause.line])
    shown = frames.python_frames(above)
    got = raised.from_frames(cause.frames, cause.kind, cause.text, version, len(shown) > 1 and
                             shown[-1][2] == "__getattr__" and not frames.foreign(shown[-2][0]))
    if got is None:
        return []
    title, why, fix, file, function = got
    return [Finding("traceback-frame", "tvm-source", title, why, fix, cause.line,
                    cause.text[:300], cause.frames[-1][:300], TRACEBACK_RANK,
                    {"file": file, "function": function}, origin=TRACEBACK)]


def _finding(rule: Rule, m: re.Match[str], text: str, line: int) -> Finding | None:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    cause, fix = rule.cause, rule.fix
    if rule.refine is not None:
        refined = rule.refine(groups, text[max(0, m.start() - WINDOW):m.end() + WINDOW])
        if refined == NOT_THIS:
            return None
        if refined:
            cause, fix = refined
    return Finding(rule.id, rule.family, rule.title, cause, fix, line, m.group(0).strip()[:300],
                   rule.source, rule.rank, groups, origin=rule.origin)


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
