"""Where one compile spends its time (``tk trace``): spans, a Chrome trace, the top tables.

Host side (no tvm): ``toolkit.trace.in_tvm.record`` records the spans of one compile
(``toolkit.trace.spans``); this module turns them into Chrome/Perfetto trace-event JSON
(``toolkit.profile.timeline`` writes it) and into the terminal's tables of time by pass, by
function and by dlight rule.

Tracks: the compile, its passes (nested as they ran: wrappers around their nested passes),
dlight's rule applications inside ``ApplyDefaultSchedule`` and codegen share one track; the
Python calls of the compile stack (TVM's and tk's frames that lasted at least ``--min-us``)
are on a second. Spans on one track nest: a child starts and ends inside its parent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from toolkit.profile import timeline
from toolkit.trace.spans import (
    CODEGEN,
    COMPILE,
    DLIGHT,
    PASS,
    PASSES_TRACK,
    PYTHON,
    PYTHON_TRACK,
    TRACK_NAMES,
    Span,
)


def chrome_trace(spans: Sequence[Span], header: dict[str, Any]) -> dict[str, Any]:
    """The trace document: metadata naming the process and tracks, then one complete ('X')
    event per span, in start order (a parent before its children), microseconds."""
    pid = 1
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid,
         "args": {"name": f"tk trace {header.get('workload', '')} for "
                          f"{header.get('target', '')}"}}]
    for tid, name in TRACK_NAMES.items():
        events += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": name}},
                   {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                    "args": {"sort_index": tid}}]
    for s in sorted(spans, key=lambda s: (s.track, s.start, -s.seconds)):
        args = dict(s.args)
        if s.number is not None:
            args["pass"] = s.number
        if s.function is not None:
            args["function"] = s.function
        # Both ends rounded to the nanosecond, so a span that ends where the next begins
        # does not overlap it by a rounding.
        ts, end = round(s.start * 1e6, 3), round(s.end * 1e6, 3)
        events.append({"ph": "X", "pid": pid, "tid": s.track, "cat": s.kind,
                       "name": label(s), "ts": ts, "dur": round(end - ts, 3), "args": args})
    return timeline.chrome_document(events, header, timeline.COMPILE_MARK)


def label(s: Span) -> str:
    return f"#{s.number} {s.name}" if s.number is not None else s.name


def self_times(spans: Sequence[Span]) -> dict[int, float]:
    """Each span's time less that of the spans nested directly in it on its track (by index
    into ``spans``): a wrapper's own share, not its nested passes'."""
    own = {i: s.seconds for i, s in enumerate(spans)}
    for track in (PASSES_TRACK, PYTHON_TRACK):
        open_: list[int] = []
        order = sorted((i for i, s in enumerate(spans) if s.track == track),
                       key=lambda i: (spans[i].start, -spans[i].seconds))
        for i in order:
            while open_ and spans[open_[-1]].end <= spans[i].start:
                open_.pop()
            if open_:
                own[open_[-1]] -= spans[i].seconds
            open_.append(i)
    return own


@dataclass
class Row:
    name: str
    seconds: float
    count: int
    detail: str = ""


def by_pass(spans: Sequence[Span]) -> list[Row]:
    """Passes by name, self time (a wrapper's nested passes are theirs), with their numbers."""
    own = self_times(spans)
    rows: dict[str, Row] = {}
    numbers: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(spans):
        if s.kind != PASS:
            continue
        row = rows.setdefault(s.name, Row(s.name, 0.0, 0))
        row.seconds += own[i]
        row.count += 1
        if s.number is not None:
            numbers[s.name].append(s.number)
    for name, row in rows.items():
        shown = numbers[name][:4]
        row.detail = ", ".join(f"#{n}" for n in shown) + (", ..." if len(numbers[name]) > 4 else "")
    return _ranked(rows.values())


def by_function(spans: Sequence[Span]) -> tuple[list[Row], float]:
    """Functions by the time of the spans known to have run on them alone (passes over a
    module of one function, dlight's schedule of one function, codegen of a one-function
    module), self time; and the time of pass spans that ran on several functions at once."""
    own = self_times(spans)
    rows: dict[str, Row] = {}
    whole = 0.0
    for i, s in enumerate(spans):
        if s.kind not in (PASS, DLIGHT, CODEGEN):
            continue
        if s.function is None:
            whole += own[i] if s.kind == PASS else 0.0
            continue
        row = rows.setdefault(s.function, Row(s.function, 0.0, 0))
        row.seconds += own[i]
        row.count += 1
    return _ranked(rows.values()), whole


def by_rule(spans: Sequence[Span]) -> list[Row]:
    """dlight rules by the time spent applying them (trying earlier rules included), with the
    functions each scheduled."""
    rows: dict[str, Row] = {}
    funcs: dict[str, list[str]] = defaultdict(list)
    for s in spans:
        if s.kind != DLIGHT:
            continue
        rule = s.args.get("rule") or "(no rule applied)"
        row = rows.setdefault(rule, Row(rule, 0.0, 0))
        row.seconds += s.seconds
        row.count += 1
        if s.function:
            funcs[rule].append(s.function)
    for rule, row in rows.items():
        row.detail = ", ".join(funcs[rule][:4]) + (", ..." if len(funcs[rule]) > 4 else "")
    return _ranked(rows.values())


def _ranked(rows: Any) -> list[Row]:
    return sorted(rows, key=lambda r: (-r.seconds, r.name))


def totals(spans: Sequence[Span]) -> dict[str, float]:
    """Seconds of the compile, of its outermost passes, of codegen and of dlight, and the
    number of spans per kind."""
    compile_ = next((s.seconds for s in spans if s.kind == COMPILE), 0.0)
    top_passes = [s for s in spans if s.kind == PASS and s.args.get("depth") == 0]
    return {
        "compile_seconds": compile_,
        "pass_seconds": sum(s.seconds for s in top_passes),
        "codegen_seconds": sum(s.seconds for s in spans if s.kind == CODEGEN),
        "dlight_seconds": sum(s.seconds for s in spans if s.kind == DLIGHT),
        "passes": sum(1 for s in spans if s.kind == PASS),
        "python_calls": sum(1 for s in spans if s.kind == PYTHON),
    }


def top(spans: Sequence[Span], n: int) -> dict[str, Any]:
    """The totals and the ``n`` first rows by pass, by function and by dlight rule."""
    functions, whole = by_function(spans)

    def rows(ranked: list[Row]) -> dict[str, Any]:
        return {"rows": [asdict(r) for r in ranked[:n]], "more": len(ranked[n:]),
                "more_seconds": sum(r.seconds for r in ranked[n:])}

    return {**totals(spans), "by_pass": rows(by_pass(spans)),
            "by_function": {**rows(functions), "several_functions_seconds": whole},
            "by_rule": rows(by_rule(spans))}


def top_text(t: dict[str, Any]) -> str:
    """:func:`top` as the terminal shows it."""
    total = t["compile_seconds"] or 1.0

    def line(seconds: float, text: str) -> str:
        return f"  {seconds * 1e3:9.2f} ms {100 * seconds / total:5.1f}%  {text}"

    def table(title: str, part: dict[str, Any], unit: str) -> list[str]:
        out = [f"{title}:"]
        if not part["rows"]:
            out.append("  (none)")
        for r in part["rows"]:
            count = f"{r['count']} {unit}{'s' if r['count'] != 1 else ''}"
            detail = f"  {r['detail']}" if r["detail"] else ""
            out.append(line(r["seconds"], f"{r['name']:<40} {count}{detail}"))
        if part["more"]:
            out.append(line(part["more_seconds"], f"({part['more']} more)"))
        return out

    lines = [f"compile {t['compile_seconds'] * 1e3:.1f} ms: passes {t['pass_seconds'] * 1e3:.1f} "
             f"ms ({t['passes']} runs), codegen {t['codegen_seconds'] * 1e3:.1f} ms, dlight "
             f"rules {t['dlight_seconds'] * 1e3:.1f} ms"]
    lines += table("by pass (self time)", t["by_pass"], "run")
    lines += table("by function (spans that ran on it alone)", t["by_function"], "span")
    lines.append(line(t["by_function"]["several_functions_seconds"],
                      "(passes over several functions at once)"))
    lines += table("by dlight rule (rules tried before it included)", t["by_rule"], "function")
    return "\n".join(lines)
