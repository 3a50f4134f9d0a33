"""Two profiles side by side: which operators got faster or slower, beyond noise.

Operators are matched by name and argument shapes, then - for kernels renamed between
builds - by the structural hash of their PrimFunc plus shapes, then - across a fusion
change - a fused kernel with the unfused kernels that run its Relax ops one after the other
(``_fusion_groups``). What is left exists on one side only: "gone" or "new", with no
percentage.

Units: ``a_us``/``b_us``/``delta_us`` are an operator's time in one run of the entry (all its
calls of that run, median over the repeats) - what it costs the run; ``change_pct`` and
``speedup`` are per call - how fast the operator itself got. The two part when the number of
calls changed (fusing Q, K and V: ``matmul`` called 4 times, then once at the same 16.7 us a
call is 4x less time in the run, and no faster): such a row says "fewer calls" or "more
calls", with the per-call change beside it only where that changed too. A change is flagged
only when it exceeds ``threshold`` percent and the noise the two reports measured. Noise on a
shared machine is one-sided and heavy-tailed (another process takes the core: a run takes
5x longer), so the test is on the repeats themselves: Cliff's delta, the share of (A run,
B run) pairs where B is slower minus the share where it is faster, must reach
``SEPARATION`` (with 9 repeats a side, 0.8 means p < 0.01). Reports without per-repeat
times fall back to ``NOISE_SIGMAS`` standard errors of the difference of the medians.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit import reports
from toolkit.errors import UserError
from toolkit.profile.report import E2E, Report, row_id

KIND = "profile-compare"
NOISE_SIGMAS = 3.0
SEPARATION = 0.8
MIN_REPEATS = 3  # below this Cliff's delta cannot tell noise from change
MEDIAN_SE = 1.2533  # standard error of a median, in standard deviations / sqrt(n)
SETUP_KEYS = ("target", "device")
COLUMNS = ["name", "args", "match", "name_b", "a_calls", "b_calls", "a_us", "b_us", "delta_us",
           "a_call_us", "b_call_us", "change_pct", "speedup", "noise_us", "separation", "flag",
           "verdict", "abs_delta_us"]
TERMINAL_COLUMNS = ["name", "match", "name_b", "a_calls", "b_calls", "a_us", "b_us",
                    "a_call_us", "b_call_us", "change_pct", "speedup", "separation", "verdict",
                    "args"]
UNITS = ("a_us, b_us, delta_us: the operator's time in one run (all its calls); a_call_us, "
         "b_call_us, change_pct, speedup: per call")
HTML_VIEW = {
    "columns": COLUMNS[:-1], "sort": "abs_delta_us", "bar": "abs_delta_us",
    "breakdown": "verdict", "label": "name", "flag": "flag", "barClass": "verdict", "barAfter": "speedup",
}


@dataclass
class Comparison:
    header: dict[str, Any]
    summary: dict[str, Any]
    rows: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> pd.DataFrame:
        return self.rows[self.rows["flag"]]

    def document(self) -> dict[str, Any]:
        return reports.to_document(KIND, self.header, self.summary, self.rows,
                                   warnings=self.warnings)

    def write(self, directory: Path, formats: Sequence[str] = reports.FORMATS) -> dict[str, Path]:
        return reports.write(
            directory, "compare", formats, kind=KIND,
            title=f"tk profile compare: {self.header['a_workload']} vs {self.header['b_workload']}",
            header=self.header, summary=self.summary, df=self.rows, view=HTML_VIEW,
            warnings=self.warnings,
        )

    def text(self, limit: int | None = 20) -> str:
        s = self.summary
        lines = [
            f"A: {self.header['a']}  ({self.header['a_workload']}, {self.header['a_target']}, "
            f"{self.header['a_timestamp']})",
            f"B: {self.header['b']}  ({self.header['b_workload']}, {self.header['b_target']}, "
            f"{self.header['b_timestamp']})",
            f"units: {UNITS}",
            reports.terminal_table(self.rows, TERMINAL_COLUMNS, limit),
            f"end to end: {s['a_e2e_us']:.1f} us -> {s['b_e2e_us']:.1f} us a run, speedup "
            f"{s['e2e_speedup']:.3f}x ({s['e2e_verdict']}); "
            f"operators {s['a_operators_us']:.1f} -> {s['b_operators_us']:.1f} us "
            f"({s['operators_speedup']:.3f}x)",
        ]
        flagged = self.flagged
        if len(flagged):
            names = ", ".join(_flag_text(r) for r in flagged.itertuples())
            lines.append(f"{len(flagged)} beyond noise and {s['threshold_pct']:g}%: {names}")
        else:
            lines.append(f"no operator changed beyond noise and {s['threshold_pct']:g}%")
        return "\n".join(lines)


def _flag_text(r: Any) -> str:
    if r.verdict in ("gone", "new"):
        return f"{r.name} ({r.verdict}, {max(r.a_us, r.b_us):.1f} us a run)"
    # No percentage where A's time is 0: the timer could not tell A's call from its floor.
    floor = pd.isna(r.change_pct)
    per_call = "A at the timer's floor" if floor else f"{r.change_pct:+.0f}% a call"
    if r.a_calls != r.b_calls and r.a_calls and r.b_calls:
        tail = "" if r.verdict.endswith(("calls", "ops")) else f", {per_call}"
        return (f"{r.name} ({r.verdict}: {r.a_calls:g} -> {r.b_calls:g} calls, "
                f"{r.a_us:.1f} -> {r.b_us:.1f} us a run{tail})")
    return f"{r.name} ({r.verdict}{', ' if floor else ' '}{per_call})"


def _fusion_row(fused_row: Any, fused_runs: dict[str, list[float]], other: Report,
                group: Group, threshold: float, *, a_side: bool) -> dict[str, Any]:
    """The comparison row of one fused kernel against the unfused kernels doing its work."""
    df = other.operators
    other_us = float(sum(_num(df.at[r, "total_us"]) * share for r, share in group.items()))
    names = "+".join(f"{df.at[r, 'name']}" + (f"({share:.0%})" if share < 1 else "")
                     for r, share in sorted(group.items(), key=lambda kv: df.at[kv[0], "first_call"]
                                            if "first_call" in df.columns else kv[0]))
    fused_us = _num(fused_row["total_us"])
    mine = fused_runs.get(row_id(fused_row["name"], fused_row["args"] or ""), [])
    theirs = _group_runs(other, group)
    a_us, b_us = (fused_us, other_us) if a_side else (other_us, fused_us)
    a_runs, b_runs = (mine, theirs) if a_side else (theirs, mine)
    sep = separation(a_runs, b_runs)
    flag, verdict = _verdict(a_us, b_us, 0.0, sep, threshold)
    # A fused kernel's call does the work of one call of each kernel in its group: per call of
    # the fused kernel, the two sides do the same work.
    calls = _num(fused_row["calls"]) or None
    return {
        "name": fused_row["name"] if a_side else names, "args": fused_row["args"] or "",
        "match": "fused ops", "name_b": names if a_side else fused_row["name"],
        "a_calls": calls, "b_calls": calls,
        "a_us": a_us, "b_us": b_us, "delta_us": b_us - a_us,
        "a_call_us": a_us / calls if calls else None, "b_call_us": b_us / calls if calls else None,
        "change_pct": (b_us - a_us) / a_us * 100 if a_us > 0 else None,
        "speedup": a_us / b_us if a_us > 0 and b_us > 0 else None,
        "noise_us": 0.0, "separation": sep, "flag": flag, "verdict": verdict,
        "abs_delta_us": abs(b_us - a_us),
    }


def _calls(row: Any) -> float | None:
    """An operator's calls in one run; None where a report did not record them."""
    return _num(row["calls"]) or None if "calls" in row.index else None


def _row(ar: Any, br: Any, how: str, left: float, a: Report, b: Report, na: int, nb: int,
         threshold: float) -> dict[str, Any]:
    """The comparison row of an operator matched (or left on one side): its time a run,
    judged per call, and the change in its calls."""
    a_us = _num(ar["total_us"]) * left if ar is not None else 0.0
    b_us = _num(br["total_us"]) * left if br is not None else 0.0
    a_calls = _calls(ar) if ar is not None else None
    b_calls = _calls(br) if br is not None else None
    # Per call, both sides: the operator's own speed, whatever the number of its calls.
    a_per = 1 / a_calls if a_calls else 1.0
    b_per = 1 / b_calls if b_calls else 1.0
    noise = _noise(_num(ar["spread_us"]) * a_per if ar is not None else 0.0, na,
                   _num(br["spread_us"]) * b_per if br is not None else 0.0, nb)
    sep = None
    if ar is not None and br is not None:
        sep = separation(
            [x * a_per for x in a.runs_us.get(row_id(ar["name"], ar["args"] or ""), [])],
            [x * b_per for x in b.runs_us.get(row_id(br["name"], br["args"] or ""), [])])
    flag, verdict = _verdict(a_us * a_per, b_us * b_per, noise, sep, threshold)
    both = ar is not None and br is not None
    if not both:  # no change to state: the row exists on one side only
        flag, verdict = True, "new" if ar is None else "gone"
    elif a_calls and b_calls and a_calls != b_calls:
        fewer = "fewer calls" if b_calls < a_calls else "more calls"
        flag, verdict = True, fewer if verdict == "same" else f"{fewer}, {verdict} a call"
    first = ar if ar is not None else br
    a_call = a_us * a_per if ar is not None and a_calls else None
    b_call = b_us * b_per if br is not None and b_calls else None
    return {
        "name": first["name"], "args": first["args"] or "", "match": how,
        "name_b": br["name"] if br is not None else None,
        "a_calls": a_calls, "b_calls": b_calls, "a_us": a_us, "b_us": b_us,
        "delta_us": b_us - a_us, "a_call_us": a_call, "b_call_us": b_call,
        "change_pct": (b_us * b_per - a_us * a_per) / (a_us * a_per) * 100
        if both and a_us > 0 else None,
        "speedup": (a_us * a_per) / (b_us * b_per) if both and a_us > 0 and b_us > 0 else None,
        "noise_us": noise, "separation": sep, "flag": flag, "verdict": verdict,
        "abs_delta_us": abs(b_us - a_us),
    }


def _setup_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [f"{k} {a.get(k)!r} vs {b.get(k)!r}" for k in SETUP_KEYS if a.get(k) != b.get(k)]


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(out) else out


def _noise(spread_a: Any, n_a: int, spread_b: Any, n_b: int) -> float:
    """NOISE_SIGMAS standard errors of (median B - median A)."""
    var = (_num(spread_a) ** 2) / max(n_a, 1) + (_num(spread_b) ** 2) / max(n_b, 1)
    return NOISE_SIGMAS * MEDIAN_SE * math.sqrt(var)


def separation(a_runs: Sequence[float], b_runs: Sequence[float]) -> float | None:
    """Cliff's delta of B over A in [-1, 1]; None without enough repeats on both sides."""
    if min(len(a_runs), len(b_runs)) < MIN_REPEATS:
        return None
    a, b = np.asarray(a_runs, dtype=float), np.asarray(b_runs, dtype=float)
    greater = (b[:, None] > a[None, :]).sum()
    less = (b[:, None] < a[None, :]).sum()
    return float((greater - less) / (len(a) * len(b)))


def _verdict(a_us: float, b_us: float, noise_us: float, sep: float | None,
             threshold: float) -> tuple[bool, str]:
    delta = b_us - a_us
    beyond_noise = abs(delta) > noise_us if sep is None else (
        abs(sep) >= SEPARATION and (sep > 0) == (delta > 0))
    beyond = beyond_noise and abs(delta) > threshold / 100 * max(a_us, 1e-9)
    if not beyond:
        return False, "same"
    return True, "slower" if delta > 0 else "faster"


def _match(a: pd.DataFrame, b: pd.DataFrame) -> list[tuple[int | None, int | None, str]]:
    """Pairs of row indices (None where one side lacks the operator) and how they matched."""
    pairs: list[tuple[int | None, int | None, str]] = []
    b_by_key = {(r.name, r.args or ""): i for i, r in zip(b.index, b.itertuples())}
    used_b: set[int] = set()
    left: list[int] = []
    for i, r in zip(a.index, a.itertuples()):
        j = b_by_key.get((r.name, r.args or ""))
        if j is not None and j not in used_b:
            pairs.append((i, j, "name+shapes"))
            used_b.add(j)
        else:
            left.append(i)
    b_by_hash: dict[tuple[str, str], list[int]] = {}
    for j, r in zip(b.index, b.itertuples()):
        if j not in used_b and isinstance(r.struct_hash, str) and r.struct_hash:
            b_by_hash.setdefault((r.struct_hash, r.args or ""), []).append(j)
    for i in left:
        h = a.at[i, "struct_hash"]
        candidates = b_by_hash.get((h, a.at[i, "args"] or ""), []) if isinstance(h, str) else []
        if candidates:
            j = candidates.pop(0)
            pairs.append((i, j, "struct_hash"))
            used_b.add(j)
        else:
            pairs.append((i, None, "only A"))
    pairs += [(None, j, "only B") for j in b.index if j not in used_b]
    return pairs


Group = dict[int, float]  # row index -> share of its time that belongs to the group


def _ops(row: Any) -> list[str]:
    return [op for op in str(row["fused_ops"] or "").split("+") if op]


def _kernel_sequence(report: Report) -> list[int]:
    """Row index of every kernel call of the report's timeline run, in execution order."""
    df = report.operators
    index = {row_id(r.name, r.args or ""): i for i, r in zip(df.index, df.itertuples())}
    return [index[s.row] for s in report.spans
            if s.row in index and df.at[index[s.row], "kind"] == "kernel"]


def _fusion_groups(fused: Report, unfused: Report, fused_left: list[int],
                   unfused_left: set[int]) -> list[tuple[int, Group]]:
    """Fused kernels of ``fused`` matched with runs of unfused kernels of ``unfused``.

    A fused kernel records the Relax ops it groups (``fused_matmul3_add1_add2``: matmul,
    add, add). Walking the other profile's kernels in execution order, consecutive calls of
    kernels not matched otherwise whose own ops, one after the other, spell exactly those
    ops (``matmul3``, ``add1``, ``add2``) are the same work unfused. Each such kernel row
    contributes the share of its calls that fall in the groups found.
    """
    df_f, df_u = fused.operators, unfused.operators
    seq = _kernel_sequence(unfused)
    calls_u = {i: max(1, int(_num(df_u.at[i, "calls"]))) for i in df_u.index}
    out: list[tuple[int, Group]] = []
    for i in fused_left:
        target = _ops(df_f.loc[i])
        if len(target) < 2 or df_f.at[i, "kind"] != "kernel":
            continue
        used: dict[int, int] = {}
        j = 0
        while j < len(seq):
            ops, k = [], j
            while k < len(seq) and seq[k] in unfused_left and len(ops) < len(target):
                ops += _ops(df_u.loc[seq[k]])
                k += 1
                if ops != target[:len(ops)]:
                    break
            if ops == target and k - j >= 2:
                for row in seq[j:k]:
                    used[row] = used.get(row, 0) + 1
                j = k
            else:
                j += 1
        if used:
            out.append((i, {row: min(1.0, n / calls_u[row]) for row, n in used.items()}))
            unfused_left -= {row for row, n in used.items() if n >= calls_u[row]}
    return out


def _consumed(groups: list[tuple[int, Group]]) -> dict[int, float]:
    """Share of each row's time that fusion groups took."""
    out: dict[int, float] = {}
    for _, group in groups:
        for row, share in group.items():
            out[row] = min(1.0, out.get(row, 0.0) + share)
    return out


def _group_runs(report: Report, group: Group) -> list[float]:
    """Per-repeat time of a group of rows, each row weighted by its share."""
    df = report.operators
    runs = [np.asarray(report.runs_us.get(row_id(df.at[r, "name"], df.at[r, "args"] or ""), []))
            * share for r, share in group.items()]
    if not runs or any(len(r) != len(runs[0]) or not len(r) for r in runs):
        return []
    return list(np.sum(runs, axis=0))


def compare(a: Report, b: Report, *, threshold: float = 5.0, force: bool = False,
            names: tuple[str, str] = ("A", "B")) -> Comparison:
    """Per-operator and total speedups of ``b`` over ``a`` (above 1: B is faster)."""
    if threshold < 0:
        raise UserError("--threshold must be >= 0 (percent)")
    warnings = []
    differences = _setup_differences(a.header, b.header)
    if differences and not force:
        raise UserError(
            f"the reports come from different set-ups ({'; '.join(differences)}): their "
            f"times are not comparable; pass --force to compare anyway"
        )
    if differences:
        warnings.append(f"compared despite different set-ups (--force): {'; '.join(differences)}")
    if a.header.get("workload") != b.header.get("workload"):
        # Two models share names like "matmul" (and kernels of the same structure) by chance.
        warnings.append(f"the reports profile different workloads: {a.header.get('workload')} "
                        f"vs {b.header.get('workload')}; their operators were matched by name "
                        f"and shapes, then by structure: a match may be a coincidence")
    if a.header.get("tvm_version") != b.header.get("tvm_version"):
        warnings.append(f"TVM versions differ: {a.header.get('tvm_version')} vs "
                        f"{b.header.get('tvm_version')}")

    rows = []
    ra, rb = a.operators, b.operators
    na, nb = int(_num(a.header.get("repeat")) or 1), int(_num(b.header.get("repeat")) or 1)
    pairs = _match(ra, rb)
    only_a = [i for i, j, _ in pairs if j is None]
    only_b = [j for i, j, _ in pairs if i is None]
    fused_ab = _fusion_groups(a, b, only_a, set(only_b))  # fused in A, unfused in B
    used_b = _consumed(fused_ab)
    fused_ba = _fusion_groups(b, a, [j for j in only_b if used_b.get(j, 0.0) < 1],
                              set(only_a) - {i for i, _ in fused_ab})
    used_a = {**_consumed(fused_ba), **{i: 1.0 for i, _ in fused_ab}}
    used_b.update({j: 1.0 for j, _ in fused_ba})
    for i, group in fused_ab:
        rows.append(_fusion_row(ra.loc[i], a.runs_us, b, group, threshold, a_side=True))
    for j, group in fused_ba:
        rows.append(_fusion_row(rb.loc[j], b.runs_us, a, group, threshold, a_side=False))
    for i, j, how in pairs:
        # What a fusion group took of a one-sided row is compared there; the rest stays here.
        left = 1.0 - (used_a.get(i, 0.0) if j is None else used_b.get(j, 0.0) if i is None else 0)
        if left <= 1e-9:
            continue
        ar = ra.loc[i] if i is not None else None
        br = rb.loc[j] if j is not None else None
        rows.append(_row(ar, br, how, left, a, b, na, nb, threshold))
    df = pd.DataFrame(rows, columns=COLUMNS)
    df = df.sort_values("abs_delta_us", ascending=False, kind="stable").reset_index(drop=True)

    sa, sb = a.summary, b.summary
    a_e2e, b_e2e = _num(sa.get("e2e_median_us")), _num(sb.get("e2e_median_us"))
    e2e_noise = _noise(sa.get("e2e_spread_us"), na, sb.get("e2e_spread_us"), nb)
    e2e_sep = separation(a.runs_us.get(E2E, []), b.runs_us.get(E2E, []))
    _, e2e_verdict = _verdict(a_e2e, b_e2e, e2e_noise, e2e_sep, threshold)
    a_ops, b_ops = float(df["a_us"].sum()), float(df["b_us"].sum())
    header = {
        "a": names[0], "b": names[1],
        **{f"a_{k}": a.header.get(k) for k in ("workload", "target", "device", "tvm_version",
                                                "timestamp")},
        **{f"b_{k}": b.header.get(k) for k in ("workload", "target", "device", "tvm_version",
                                                "timestamp")},
        "forced": bool(differences),
    }
    summary = {
        "a_e2e_us": a_e2e, "b_e2e_us": b_e2e,
        "e2e_speedup": a_e2e / b_e2e if b_e2e > 0 else None,
        "e2e_noise_us": e2e_noise, "e2e_separation": e2e_sep, "e2e_verdict": e2e_verdict,
        "a_operators_us": a_ops, "b_operators_us": b_ops,
        "operators_speedup": a_ops / b_ops if b_ops > 0 else None,
        "threshold_pct": threshold, "flagged": int(df["flag"].sum()), "units": UNITS,
        "matched": int(df["match"].isin(["name+shapes", "struct_hash", "fused ops"]).sum()),
    }
    return Comparison(header, summary, df, warnings)
