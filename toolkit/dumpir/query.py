"""Reading dumps: module states per pass, diffs, pattern history, two pipelines aligned.

A leaf record stores only what its pass changed, so the state of the module before and after
each pass is rebuilt by replaying the records from the input (or from the ``received`` map
where the pipeline moved to another module). Pure Python: no tvm import.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.cause import one_line
from toolkit.dumpir import index
from toolkit.dumpir.index import DumpIndex, PassRecord, canonical_pass_name
from toolkit.dumpir.normalise import normalise
from toolkit.dumpir.store import PACK, FunctionStore
from toolkit.errors import UserError

State = dict[str, "str | None"]  # function name -> store key (None: not stored)


@dataclass
class Dump:
    directory: Path
    index: DumpIndex
    store: FunctionStore
    _states: dict[int, tuple[State, State]] = field(default_factory=dict)

    @classmethod
    def open(cls, directory: Path) -> Dump:
        if not directory.is_dir():
            raise UserError(f"{directory} is not a directory")
        return cls(directory, index.read(directory), FunctionStore(directory / PACK))

    @property
    def leaves(self) -> list[PassRecord]:
        return self.index.leaves

    def text(self, key: str | None) -> str | None:
        if key is None:
            return None
        if self.index.texts_pending:
            # Rendering compiles in the TVM under test, which this host module never imports:
            # the CLI (toolkit/cli/dumpir.py) renders before it reads texts.
            raise UserError(f"{self.directory}'s function texts are not rendered yet: "
                            f"'tk dump-ir page {self.directory}' renders them")
        try:
            return self.store.get(key)
        except KeyError:
            raise UserError(f"{self.directory}: store entry {key} is missing") from None

    def states(self) -> dict[int, tuple[State, State]]:
        """(before, after) module state of every leaf pass, by sequence number."""
        if self._states:
            return self._states
        state: State = dict(self.index.input)
        for r in self.leaves:
            before = dict(r.received) if r.received is not None else state
            after = dict(before)
            for name in r.removed:
                after.pop(name, None)
            for rename in r.renamed:
                after.pop(rename.old, None)
                after[rename.new] = rename.key
            after.update(r.added)
            for change in r.changed:
                after[change.name] = change.after
            if r.status == "failed":
                after = dict(before)  # it produced nothing
            self._states[r.seq] = (before, after)
            state = after
        return self._states

    def span(self, record: PassRecord) -> tuple[State, State]:
        """States around a pass; a wrapper spans its first to its last leaf."""
        states = self.states()
        if record.kind in index.LEAF_KINDS:
            return states[record.seq]
        inside = [r.seq for r in self.leaves if self._within(r, record.seq)]
        if not inside:
            return {}, {}
        return states[inside[0]][0], states[inside[-1]][1]

    def _within(self, record: PassRecord, ancestor: int) -> bool:
        parent = record.parent
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.index.passes[parent].parent
        return False

    def find_pass(self, spec: str) -> PassRecord:
        """A pass by sequence number, exact name or glob; a name that ran twice needs a number."""
        passes = self.index.passes
        if spec.isdigit():
            seq = int(spec)
            if seq >= len(passes):
                raise UserError(f"no pass #{seq}: this dump has passes 0..{len(passes) - 1}")
            return passes[seq]
        matches = [p for p in passes if p.name == spec] or [
            p for p in passes if fnmatch.fnmatchcase(p.name, spec)
            or fnmatch.fnmatchcase(canonical_pass_name(p.name), canonical_pass_name(spec))
        ]
        # A wrapper and the record of its own work share its name: the name means the wrapper.
        named = {p.seq for p in matches}
        matches = [p for p in matches if p.kind != index.OWN or p.parent not in named]
        if not matches:
            raise UserError(f"no pass named {spec!r}; 'tk dump-ir show {self.directory}' lists them")
        if len(matches) > 1:
            seqs = ", ".join(f"#{p.seq} {p.name}" for p in matches[:8])
            more = f" and {len(matches) - 8} more" if len(matches) > 8 else ""
            raise UserError(f"{spec!r} matches {len(matches)} passes ({seqs}{more}); pass a number")
        return matches[0]


def _wanted(name: str, func: str | None) -> bool:
    return func is None or name == func or fnmatch.fnmatchcase(name, func)


def timeline(dump: Dump, func: str | None = None) -> list[dict[str, Any]]:
    """Every pass, in order; with ``func``, the passes that changed, added, removed or renamed
    a function it matches (none matching anywhere in the dump is a user error)."""
    records = dump.index.passes
    if func is not None:
        touched = [r for r in records if any(_wanted(n, func) for n in _names_touched(r))]
        if not touched and not any(_wanted(n, func) for n in _names_anywhere(dump)):
            raise UserError(f"no function matching {func!r} in {dump.directory}")
        records = touched
    return [
        {
            "seq": r.seq, "name": r.name, "depth": r.depth, "kind": r.kind,
            "seconds": r.seconds, "status": r.status, "change": r.change,
            "added": len(r.added), "removed": len(r.removed), "changed": len(r.changed),
            "renamed": len(r.renamed), "lane": r.lane, "lane_target": r.lane_target,
        }
        for r in records
    ]


def _names_touched(record: PassRecord) -> list[str]:
    return [*record.added, *record.removed, *(c.name for c in record.changed),
            *(n for r in record.renamed for n in (r.old, r.new))]


def _names_anywhere(dump: Dump) -> set[str]:
    return set(dump.index.input) | {n for r in dump.index.passes for n in _names_touched(r)}


def format_timeline_row(row: dict[str, Any]) -> str:
    name = "  " * row["depth"] + row["name"]
    if row["kind"] == index.OWN:
        name += " (own work)"
    elif row["kind"] == index.CODEGEN:
        name = "  " * row["depth"] + f"codegen {row['name']}"
    lane = row.get("lane") or ""
    what = row["change"] or ""
    if row["kind"] in index.LEAF_KINDS and row["change"] not in (None, index.UNCHANGED):
        counts = [f"{row[k]} {k}" for k in ("changed", "added", "removed", "renamed") if row[k]]
        what += f" ({', '.join(counts)})" if counts else ""
    status = "FAILED" if row["status"] == "failed" else ""
    return f"{row['seq']:4d}  {lane:<6} {name:<52} {row['seconds']:9.4f} s  {what}{status}"


def schedule_rules(record: PassRecord, func: str | None) -> dict[str, str]:
    """Function -> the dlight rule that scheduled it, for an ApplyDefaultSchedule record."""
    return {n: r for n, r in sorted((record.schedule_rules or {}).items()) if _wanted(n, func)}


def input_texts(dump: Dump, func: str | None) -> dict[str, str | None]:
    chosen = {n: k for n, k in dump.index.input.items() if _wanted(n, func)}
    if func is not None and not chosen:
        raise UserError(f"no function matching {func!r} in the input module")
    return {n: dump.text(k) for n, k in chosen.items()}


def texts_after(dump: Dump, record: PassRecord, func: str | None) -> dict[str, str | None]:
    """Each function's text after the pass (before it, for the pass that failed); for a
    codegen record, the generated sources (``--func`` then picks a file: ``cuda.cu``)."""
    if record.kind == index.CODEGEN:
        sources = {n: k for n, k in (record.sources or {}).items() if _wanted(n, func)}
        return {n: dump.text(k) for n, k in sources.items()}
    state = texts_state(dump, record)
    chosen = {n: k for n, k in state.items() if _wanted(n, func)}
    if func is not None and not chosen:
        raise UserError(f"no function matching {func!r} after pass #{record.seq} {record.name}")
    return {n: dump.text(k) for n, k in chosen.items()}


def pass_diff(dump: Dump, record: PassRecord, func: str | None) -> list[dict[str, Any]]:
    """Unified diffs of every function the pass changed, added or removed."""
    before, after = dump.span(record)
    same_text = {c.name for c in record.changed if c.prints_identically}
    out = []
    renamed = set()
    for r in record.renamed:
        renamed |= {r.old, r.new}
        if _wanted(r.old, func) or _wanted(r.new, func):
            out.append({"function": r.new, "kind": "renamed",
                        "diff": f"# {r.old} -> {r.new}: renamed, body unchanged\n"})
    for name in sorted(set(before) | set(after)):
        if not _wanted(name, func) or name in renamed:
            continue
        k0, k1 = before.get(name), after.get(name)
        if name in same_text:
            out.append({"function": name, "kind": "prints-identically",
                        "diff": f"# {name}: structure changed, text identical\n"})
            continue
        if k0 == k1 and (name in before) == (name in after):
            continue
        t0 = dump.text(k0) if name in before else ""
        t1 = dump.text(k1) if name in after else ""
        if t0 is None or t1 is None:
            out.append({"function": name, "kind": "not-stored",
                        "diff": f"# {name}: changed, text not stored\n"})
            continue
        kind = "added" if name not in before else "removed" if name not in after else "changed"
        lines = difflib.unified_diff(
            t0.splitlines(keepends=True), t1.splitlines(keepends=True),
            fromfile=f"{name} (before #{record.seq} {record.name})",
            tofile=f"{name} (after #{record.seq} {record.name})",
        )
        out.append({"function": name, "kind": kind, "diff": "".join(
            ln if ln.endswith("\n") else ln + "\n" for ln in lines)})
    return out


def find(dump: Dump, regex: str, func: str | None) -> list[dict[str, Any]]:
    """Per function: the first pass after which REGEX matches, and the next after which it doesn't."""
    try:
        pattern = re.compile(regex, re.MULTILINE)
    except re.error as e:
        raise UserError(f"bad regex {regex!r}: {e}") from None
    matched: dict[str, bool] = {}

    def hit(key: str | None) -> bool | None:
        if key is None:
            return None
        if key not in matched:
            text = dump.text(key)
            matched[key] = bool(text is not None and pattern.search(text))
        return matched[key]

    found: dict[str, dict[str, Any]] = {}
    for name, key in dump.index.input.items():
        if _wanted(name, func) and hit(key):
            found[name] = {"function": name, "appears": "input", "appears_seq": None,
                           "disappears": None, "disappears_seq": None}
    states = dump.states()
    for r in dump.leaves:
        before, after = states[r.seq]
        if r.received is not None:
            # The pipeline moved to another module (host/device split): a function that one
            # module dropped but this one still has did not disappear.
            for name, entry in found.items():
                if entry["disappears_seq"] is not None and hit(before.get(name)):
                    entry["disappears"] = entry["disappears_seq"] = None
        for name in sorted(set(before) | set(after)):
            if not _wanted(name, func):
                continue
            m0 = hit(before.get(name)) if name in before else False
            m1 = hit(after.get(name)) if name in after else False
            if m0 is None or m1 is None or m0 == m1:
                continue
            entry = found.get(name)
            if m1 and entry is None:
                found[name] = {"function": name, "appears": r.name, "appears_seq": r.seq,
                               "disappears": None, "disappears_seq": None}
            elif not m1 and entry is not None and entry["disappears_seq"] is None:
                entry["disappears"], entry["disappears_seq"] = r.name, r.seq
    for r in dump.index.passes:
        if r.kind != index.CODEGEN:
            continue
        for name, key in (r.sources or {}).items():
            if _wanted(name, func) and hit(key):
                found[f"{name} ({r.name})"] = {
                    "function": name, "appears": f"codegen {r.name}", "appears_seq": r.seq,
                    "disappears": None, "disappears_seq": None}
    return sorted(found.values(), key=lambda e: (e["appears_seq"] or -1, e["function"]))


def format_find_row(hit: dict[str, Any]) -> str:
    where = "in the input" if hit["appears_seq"] is None else (
        f"after #{hit['appears_seq']} {hit['appears']}")
    gone = (f", gone after #{hit['disappears_seq']} {hit['disappears']}"
            if hit["disappears_seq"] is not None else ", still there at the end")
    return f"{hit['function']}: appears {where}{gone}"


@dataclass
class Alignment:
    """Two dumps' leaf passes matched by generation-neutral name, with a text equality that
    applies the chosen normalisers (store keys are equal when texts are; else compare texts)."""

    a: Dump
    b: Dump
    normalisers: tuple[str, ...]
    pairs: list[tuple[int, int]]
    _normal: dict[tuple[int, str], str] = field(default_factory=dict)

    @classmethod
    def of(cls, a: Dump, b: Dump, normalisers: tuple[str, ...]) -> Alignment:
        na = [canonical_pass_name(r.name) for r in a.leaves]
        nb = [canonical_pass_name(r.name) for r in b.leaves]
        matcher = difflib.SequenceMatcher(a=na, b=nb, autojunk=False)
        pairs = [(m.a + k, m.b + k) for m in matcher.get_matching_blocks() for k in range(m.size)]
        return cls(a, b, normalisers, pairs)

    def normal(self, side: int, key: str | None) -> str | None:
        if key is None:
            return None
        cached = self._normal.get((side, key))
        if cached is None:
            text = (self.a, self.b)[side].text(key) or ""
            cached = self._normal[(side, key)] = normalise(text, self.normalisers)
        return cached

    def same(self, ka: str | None, kb: str | None) -> bool:
        return ka == kb or (ka is not None and kb is not None
                            and self.normal(0, ka) == self.normal(1, kb))

    def differing(self, sa: State, sb: State) -> list[str]:
        """Functions whose text differs between two module states, after normalising."""
        return sorted(n for n in set(sa) | set(sb)
                      if n not in sa or n not in sb or not self.same(sa[n], sb[n]))


def compare(a: Dump, b: Dump, normalisers: tuple[str, ...] = ()) -> dict[str, Any]:
    """Align two pipelines by (generation-neutral) pass name and find where they diverge."""
    la, lb = a.leaves, b.leaves
    na = [canonical_pass_name(r.name) for r in la]
    nb = [canonical_pass_name(r.name) for r in lb]
    align = Alignment.of(a, b, normalisers)
    pairs = align.pairs
    matched_a = {i for i, _ in pairs}
    matched_b = {j for _, j in pairs}
    loose_a = [i for i in range(len(la)) if i not in matched_a]
    loose_b = [j for j in range(len(lb)) if j not in matched_b]

    reordered = []
    for i in list(loose_a):
        j = next((j for j in loose_b if nb[j] == na[i]), None)
        if j is not None:
            loose_a.remove(i)
            loose_b.remove(j)
            reordered.append({"name": la[i].name, "seq_a": la[i].seq, "seq_b": lb[j].seq,
                              "position_a": i, "position_b": j})

    states_a, states_b = a.states(), b.states()
    first_input_difference = None
    first_divergence = None
    for i, j in pairs:
        ra, rb = la[i], lb[j]
        before_a, after_a = states_a[ra.seq]
        before_b, after_b = states_b[rb.seq]
        if align.differing(before_a, before_b):
            if first_input_difference is None:
                first_input_difference = {"name": ra.name, "seq_a": ra.seq, "seq_b": rb.seq}
            continue
        funcs = align.differing(after_a, after_b)
        if funcs:
            first_divergence = {"name": ra.name, "seq_a": ra.seq, "seq_b": rb.seq,
                                "functions": funcs}
            break
    return {
        "passes_a": len(la), "passes_b": len(lb), "aligned": len(pairs),
        "normalisers": list(normalisers),
        "failed_a": _failure(a), "failed_b": _failure(b),
        "only_a": [{"name": la[i].name, "seq": la[i].seq} for i in loose_a],
        "only_b": [{"name": lb[j].name, "seq": lb[j].seq} for j in loose_b],
        "reordered": reordered,
        "first_input_difference": first_input_difference,
        "first_divergence": first_divergence,
    }


def _failure(dump: Dump) -> dict[str, Any] | None:
    """Where a failed dump stopped, or None for a dump that completed."""
    summary = dump.index.summary
    if summary.get("status") != "failed":
        return None
    seq = summary.get("failed_pass")
    record = dump.index.passes[seq] if isinstance(seq, int) and seq < len(dump.index.passes) \
        else None
    return {"seq": seq, "name": record.name if record else None,
            "cause": summary.get("first_cause")
            or (one_line(record.error) if record and record.error else None)}


def diff(a: Dump, b: Dump, pass_: str | None, func: str | None,
         normalisers: tuple[str, ...]) -> dict[str, Any]:
    """The same functions at the same pass in two dumps, A against B, normalised.

    Without ``pass_`` the pass is the first divergence ``compare`` finds. A codegen record
    is matched with B's codegen record for the same kind of module (host, device).
    """
    align = Alignment.of(a, b, normalisers)
    if pass_ is None:
        divergence = compare(a, b, normalisers)["first_divergence"]
        if divergence is None:
            return {"pass_a": None, "pass_b": None, "normalisers": list(normalisers),
                    "diffs": []}
        pass_ = str(divergence["seq_a"])
    ra = a.find_pass(pass_)
    if ra.kind == index.CODEGEN:
        rb = next((r for r in b.index.passes if r.kind == index.CODEGEN and r.lane == ra.lane),
                  None)
        if rb is None:
            raise UserError(f"B has no codegen record for the {ra.lane} module")
        sa, sb = dict(ra.sources or {}), dict(rb.sources or {})
    else:
        if ra.kind not in index.LEAF_KINDS:
            raise UserError(f"#{ra.seq} {ra.name} is a wrapper: pick one of the passes it runs")
        position = next(i for i, r in enumerate(a.leaves) if r.seq == ra.seq)
        j = next((j for i, j in align.pairs if i == position), None)
        if j is None:
            raise UserError(f"#{ra.seq} {ra.name} has no counterpart in B (compare lists "
                            "the passes only one dump ran)")
        rb = b.leaves[j]
        sa, sb = texts_state(a, ra), texts_state(b, rb)
    label_a, label_b = f"A #{ra.seq} {ra.name}", f"B #{rb.seq} {rb.name}"
    out = []
    for name in align.differing(sa, sb):
        if not _wanted(name, func):
            continue
        ta = align.normal(0, sa[name]) if name in sa else ""
        tb = align.normal(1, sb[name]) if name in sb else ""
        lines = difflib.unified_diff(
            (ta or "").splitlines(keepends=True), (tb or "").splitlines(keepends=True),
            fromfile=f"{name} after {label_a}", tofile=f"{name} after {label_b}")
        out.append({"function": name, "only_in": None if name in sa and name in sb
                    else "A" if name in sa else "B",
                    "diff": "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)})
    if func is not None and not out and not any(_wanted(n, func) for n in set(sa) | set(sb)):
        raise UserError(f"no function matching {func!r} after {label_a} or {label_b}")
    return {"pass_a": ra.seq, "name_a": ra.name, "pass_b": rb.seq, "name_b": rb.name,
            "normalisers": list(normalisers), "diffs": out}


def texts_state(dump: Dump, record: PassRecord) -> State:
    """Store keys of the module after a pass (before it, for the leaf pass that failed)."""
    before, after = dump.span(record)
    return before if record.status == "failed" and record.kind in index.LEAF_KINDS else after


def format_compare(result: dict[str, Any], name_a: str, name_b: str) -> str:
    lines = [f"A = {name_a}: {result['passes_a']} passes; B = {name_b}: {result['passes_b']} passes;"
             f" {result['aligned']} aligned"]
    for side in ("a", "b"):
        failed = result[f"failed_{side}"]
        if failed:
            lines.append(f"{side.upper()} FAILED at #{failed['seq']} {failed['name']}: "
                         f"{failed['cause'] or 'see its index'} (the comparison stops there)")
    for side, key in (("A", "only_a"), ("B", "only_b")):
        for p in result[key]:
            lines.append(f"  only in {side}: #{p['seq']} {p['name']}")
    for p in result["reordered"]:
        lines.append(f"  reordered: {p['name']} (A #{p['seq_a']}, B #{p['seq_b']})")
    d = result["first_divergence"]
    if d:
        lines.append(
            f"first divergence: {d['name']} (A #{d['seq_a']}, B #{d['seq_b']}) received the same "
            f"module in both and produced different output in: {', '.join(d['functions'])}"
        )
        lines.append(f"  see: tk dump-ir diff {name_a} {name_b} --pass {d['seq_a']}")
    else:
        lines.append("no aligned pass turns the same input into different output")
    first = result["first_input_difference"]
    if first and (not d or first["seq_a"] < d["seq_a"]):
        lines.append(f"inputs first differ at {first['name']} (A #{first['seq_a']}, "
                     f"B #{first['seq_b']})")
    return "\n".join(lines)
