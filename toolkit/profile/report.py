"""The per-operator report: raw timings + kernel facts -> one DataFrame row per operator.

A row is one compiled kernel (or external library call) at one set of argument shapes;
each VM builtin gets one row for all its calls. Times are microseconds. ``total_us`` is
the median over repeats of the row's time within one run, so the rows' totals add up to
what one run of the model spends in them, comparable with the end-to-end median.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit import reports
from toolkit.profile import timeline
from toolkit.profile.records import Call, Measured, Timings, base_op, is_builtin

KIND = "profile"
COLUMNS = [
    "name", "kind", "calls", "total_us", "share", "mean_us", "median_us", "std_us",
    "min_us", "max_us", "spread_us", "host_us", "gflops", "gbps", "flops", "bytes", "args",
    "fused_ops", "op", "struct_hash", "first_call",
]
REQUIRED_COLUMNS = ("name", "args", "total_us")  # what tk profile compare cannot do without
# Filled as unknown when absent (older or hand-made reports).
OPTIONAL_FOR_COMPARE = ("spread_us", "struct_hash", "kind", "calls", "fused_ops", "first_call")
TERMINAL_COLUMNS = ["name", "kind", "calls", "total_us", "share_pct", "median_us", "std_us",
                    "gflops", "gbps", "args"]
HTML_VIEW = {
    "columns": ["name", "kind", "calls", "total_us", "share", "mean_us", "median_us",
                "std_us", "min_us", "max_us", "gflops", "gbps", "args", "fused_ops"],
    "sort": "total_us", "bar": "total_us", "breakdown": "op", "label": "name",
    "barClass": "kind", "barAfter": "share",
}
DTYPE_BITS = {"bool": 8}
E2E = "(end to end)"  # runs_us key of the uninstrumented end-to-end times
NOISE_SHARE = 0.03  # an excess of the parts over end to end this small is called noise


def row_id(name: str, args: str) -> str:
    """The key of a row's per-repeat totals in ``Report.runs_us``."""
    return f"{name}({args})" if args else name


def robust_spread(values: Sequence[float]) -> float:
    """1.4826 x median absolute deviation: a standard deviation that ignores outliers."""
    if len(values) < 2:
        return 0.0
    arr = np.asarray(values, dtype=float)
    return float(1.4826 * np.median(np.abs(arr - np.median(arr))))


def tensor_bytes(desc: str) -> int:
    """``float32[4,64]`` -> 1024."""
    dtype, _, dims = desc.partition("[")
    dims = dims.rstrip("]")
    count = math.prod(int(d) for d in dims.split(",")) if dims else 1
    bits = DTYPE_BITS.get(dtype)
    if bits is None:
        digits = "".join(ch for ch in dtype if ch.isdigit())
        bits = int(digits.split("x")[0]) if digits else 32
    return count * max(bits, 8) // 8


@dataclass
class Report:
    """A profile: the header that makes it comparable, totals, and the operator table."""

    header: dict[str, Any]
    summary: dict[str, Any]
    operators: pd.DataFrame
    # Per row (``row_id``) and for ``E2E``: the time of each repeat, microseconds.
    runs_us: dict[str, list[float]] = field(default_factory=dict)
    # One run (``summary["trace_run"]``) call by call: what --trace draws.
    spans: list[timeline.Span] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return reports.to_document(KIND, self.header, self.summary, self.operators,
                                   runs_us=self.runs_us,
                                   timeline=timeline.spans_to_document(self.spans))

    def write_trace(self, path: Path) -> Path:
        """Chrome/Perfetto trace JSON of the timeline run."""
        return timeline.write_trace(path, self.spans, {**self.header, **{
            k: self.summary.get(k) for k in ("device_timer", "clock", "trace_run")}})

    def write(self, directory: Path, formats: Sequence[str] = reports.FORMATS,
              stem: str = "profile") -> dict[str, Path]:
        return reports.write(
            directory, stem, formats, kind=KIND, title=f"tk profile: {self.header['workload']}",
            header=self.header, summary=self.summary, df=self.operators, view=HTML_VIEW,
            runs_us=self.runs_us, timeline=timeline.spans_to_document(self.spans),
        )

    def table(self, limit: int | None = 15) -> str:
        shown = self.operators.assign(share_pct=(100 * self.operators["share"]).round(1))
        return reports.terminal_table(shown, TERMINAL_COLUMNS, limit)

    @classmethod
    def load(cls, path: Path) -> Report:
        from toolkit.errors import UserError

        try:
            doc = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise UserError(f"{path}: no such file") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise UserError(f"{path}: not a JSON profile report ({e})") from None
        if not isinstance(doc, dict) or doc.get("report") != KIND:
            raise UserError(f"{path}: not a tk profile report (write one with 'tk profile "
                            f"WORKLOAD -o DIR'; it is DIR/profile.json)")
        problem = reports.document_problem(doc, REQUIRED_COLUMNS)
        if problem is None and not isinstance(doc.get("runs_us", {}), dict):
            problem = "'runs_us' is not an object"
        try:
            if problem is None:
                header, summary, df = reports.from_document(doc)
                for name in OPTIONAL_FOR_COMPARE:
                    if name not in df.columns:
                        df[name] = None
                return cls(header, summary, df[[c for c in COLUMNS if c in df.columns]],
                           doc.get("runs_us", {}),
                           timeline.spans_from_document(doc.get("timeline", [])))
        except (ValueError, TypeError, KeyError, IndexError) as e:
            problem = f"{type(e).__name__}: {e}"
        raise UserError(f"{path}: not a valid tk profile report ({problem})")


def _row_keys(timings: Timings, runs: Sequence[Sequence[Call]]) -> list[list[RowKey]]:
    """Row key of every call of every run: (symbol, argument shapes); builtins by symbol."""
    sigs = timings.signatures
    first_sig: dict[str, tuple[str, ...]] = {}
    for symbol, args in sigs:
        first_sig.setdefault(symbol, args)

    def key(symbol: str, args: tuple[str, ...]) -> RowKey:
        return (symbol, ()) if is_builtin(symbol) else (symbol, args)

    out = []
    for run in runs:
        if [c.symbol for c in run] == [s for s, _ in sigs]:
            out.append([key(s, a) for s, a in sigs])
        else:  # control flow changed the call sequence: fall back to names
            out.append([key(c.symbol, first_sig.get(c.symbol, ())) for c in run])
    return out


RowKey = tuple[str, tuple[str, ...]]


def _usable_runs(timings: Timings) -> tuple[list[list[Call]], list[float]]:
    """The runs to report, with their end-to-end partners (same repeat).

    On a GPU with a device timer, a run whose device-timed twin was not usable (the filler
    ran out three times) has no device times: it is left out rather than mixed in.
    """
    pairs = list(zip(timings.runs, timings.end_to_end))
    if timings.gpu and timings.device_runs:
        pairs = [(run, e2e) for run, e2e in pairs
                 if all(c.device is not None or is_builtin(c.symbol) for c in run)]
    return [run for run, _ in pairs], [e2e for _, e2e in pairs]


def build(measured: Measured) -> Report:
    """Aggregate a session's timings into the operator table, the end-to-end split and one
    timeline."""
    timings, kernels, header = measured.timings, measured.kernels, measured.header
    runs, e2e_paired = _usable_runs(timings)
    keys = _row_keys(timings, runs)
    per_call: dict[RowKey, list[float]] = {}
    per_run: dict[RowKey, list[float]] = {}
    host_run: dict[RowKey, list[float]] = {}
    calls_first: dict[RowKey, int] = {}
    first_call: dict[RowKey, int] = {}
    repeats = len(runs)
    for r, (run, run_keys) in enumerate(zip(runs, keys)):
        for i, (call, key) in enumerate(zip(run, run_keys)):
            per_call.setdefault(key, []).append(call.time * 1e6)
            totals = per_run.setdefault(key, [0.0] * repeats)
            totals[r] += call.time * 1e6
            host_run.setdefault(key, [0.0] * repeats)[r] += call.host * 1e6
            first_call.setdefault(key, i)
            if r == 0:
                calls_first[key] = calls_first.get(key, 0) + 1

    rows, runs_us = [], {}
    for key, samples in per_call.items():
        symbol, args = key
        arr = np.asarray(samples)
        info = kernels.get(symbol)
        kind = "builtin" if is_builtin(symbol) else ("kernel" if info else "extern")
        median = float(np.median(arr))
        nbytes = sum(tensor_bytes(a) for a in args) if kind != "builtin" else None
        flops = info.flops if info else None
        runs_us[row_id(symbol, " ".join(args))] = per_run[key]
        rows.append({
            "name": symbol, "kind": kind,
            "calls": calls_first.get(key, round(len(samples) / max(repeats, 1))),
            "total_us": float(np.median(per_run[key])),
            "host_us": float(np.median(host_run[key])),
            "mean_us": float(arr.mean()), "median_us": median,
            "std_us": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
            "min_us": float(arr.min()), "max_us": float(arr.max()),
            "spread_us": robust_spread(per_run[key]),
            "gflops": flops / median / 1e3 if flops and median > 0 else None,
            "gbps": nbytes / median / 1e3 if nbytes and median > 0 else None,
            "flops": flops, "bytes": nbytes,
            "args": " ".join(args),
            "fused_ops": "+".join(info.fused_ops) if info else base_op(symbol),
            # The leading op names the kernel's group in the breakdown chart.
            "op": info.fused_ops[0] if info and info.fused_ops else base_op(symbol),
            "struct_hash": info.struct_hash if info else None,
            "first_call": first_call[key],
        })
    df = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "share"])
    accounted = float(df["total_us"].sum()) if len(df) else 0.0
    df.insert(COLUMNS.index("share"), "share",
              df["total_us"] / accounted if accounted > 0 else 0.0)
    df = df.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)
    runs_us[E2E] = [t * 1e6 for t in e2e_paired]
    summary, spans = _summary(timings, runs, keys, e2e_paired, df, accounted)
    if measured.warnings:
        summary.setdefault("warnings", []).extend(measured.warnings)
    return Report(header, summary, df, runs_us, spans)


def _overhead(hooked: Sequence[float], plain: Sequence[float], calls: int) -> float:
    """Extra microseconds per VM call, fastest hooked run against fastest plain run.

    Load from other processes only ever adds time, so the fastest of the repeats is the
    least disturbed estimate of each; a difference of medians of multi-millisecond runs
    would mostly measure that load.
    """
    return (float(np.min(hooked)) - float(np.min(plain))) * 1e6 / calls


def _median(values: Sequence[float]) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def _summary(timings: Timings, runs: list[list[Call]], keys: list[list[RowKey]],
             e2e_paired: list[float], df: pd.DataFrame,
             accounted: float) -> tuple[dict[str, Any], list[timeline.Span]]:
    e2e = np.asarray(e2e_paired) * 1e6
    median = _median(e2e)
    calls = len(runs[0]) if runs else 0
    summary: dict[str, Any] = {
        "clock": timings.clock,
        "device_timer": timings.device_timer,
        "e2e_median_us": median,
        "e2e_mean_us": float(e2e.mean()) if len(e2e) else None,
        "e2e_std_us": float(e2e.std(ddof=1)) if len(e2e) > 1 else 0.0,
        "e2e_min_us": float(e2e.min()) if len(e2e) else None,
        "e2e_max_us": float(e2e.max()) if len(e2e) else None,
        "e2e_spread_us": robust_spread(list(e2e)),
    }
    if timings.end_to_end_wall and timings.clock != "wall":
        summary["e2e_wall_median_us"] = _median(timings.end_to_end_wall) * 1e6
    summary.update({
        "accounted_us": accounted,
        # The median over runs of each run's operator sum: under one-sided load it tracks the
        # end-to-end median, which the sum of per-operator medians then falls below.
        "operators_run_median_us": _median([sum(c.time for c in run) for run in runs]) * 1e6
        if runs else None,
        "kernels_us": float(df.loc[df["kind"] != "builtin", "total_us"].sum()),
        "builtins_us": float(df.loc[df["kind"] == "builtin", "total_us"].sum()),
        "vm_calls_per_run": calls,
        "timing_floor_us_per_call": _median(list(timings.floors.values())) * 1e6
        if timings.floors else 0.0,
    })
    plain = np.asarray(timings.end_to_end)
    if len(timings.instrumented) == len(plain) and calls:
        summary["instrumented_median_us"] = float(np.median(timings.instrumented) * 1e6)
        # On the host's issue times: on a GPU the end-to-end times of a device-bound plain
        # run and a host-bound instrumented one would hide part of the instrument's cost.
        issued = len(timings.issue_plain) == len(timings.issue_instrumented) == len(plain)
        summary["timer_overhead_us_per_call"] = (
            _overhead(timings.issue_instrumented, timings.issue_plain, calls) if issued
            else _overhead(timings.instrumented, plain, calls))
    if len(timings.hooked_noop) == len(plain) and calls:
        summary["hook_overhead_us_per_call"] = _overhead(timings.hooked_noop, plain, calls)
    if timings.gpu and timings.device_runs:
        summary["device_runs"] = timings.device_runs
        summary["device_runs_redone"] = timings.device_runs_redone
        summary["device_runs_gapped"] = timings.device_runs_gapped

    # The split: each part's median over runs; the last part is what is left of the
    # end-to-end median, so the three add up to it exactly.
    synchronous = not timings.gpu or not timings.device_runs
    overhead = max(0.0, summary.get("timer_overhead_us_per_call", 0.0)) * 1e-6
    rows = [[row_id(s, " ".join(a)) for s, a in run_keys] for run_keys in keys]
    per_run = [timeline.split(timeline.place(run, names, synchronous=synchronous,
                                             hook_overhead=overhead), e2e_r, gpu=timings.gpu)
               for run, names, e2e_r in zip(runs, rows, e2e_paired)]
    spans: list[timeline.Span] = []
    warnings: list[str] = []
    if per_run:
        busy = _median([p.busy for p in per_run])
        host = _median([p.host for p in per_run])
        parts = timeline.Split(busy, host, median / 1e6 - busy - host, timings.gpu)
        summary["split_us"] = {name: value * 1e6 for name, value in parts.parts}
        summary["unaccounted_us"] = parts.rest * 1e6
        summary["accounted_ratio"] = ((busy + host) * 1e6 / median) if median > 0 else None
        summary["verdict"] = timeline.verdict(parts, median / 1e6)
        if parts.rest < 0:
            what = "kernel device time" if timings.gpu else "operators"
            over = -parts.rest * 1e6
            why = (f"within the end-to-end spread ({summary['e2e_spread_us']:.1f} us)"
                   if over <= max(summary["e2e_spread_us"], NOISE_SHARE * median)
                   else "beyond noise: the per-call times carry cost the plain run does not "
                        "have (cache traffic of the instrument between calls), or the load "
                        "changed between runs")
            warnings.append(f"{what} add up to {over:.1f} us more than end to end "
                            f"({100 * (busy + host) / (median / 1e6):.0f}%), {why}")
        # The trace shows the run whose operator sum is the median one.
        sums = [sum(c.time for c in run) for run in runs]
        k = int(np.argsort(sums)[len(sums) // 2])
        spans = timeline.place(runs[k], rows[k], synchronous=synchronous, hook_overhead=overhead)
        summary["trace_run"] = k
    if timings.device_runs_gapped:
        warnings.append(
            f"{timings.device_runs_gapped} of {timings.device_runs} device-timed runs let the "
            f"GPU idle while they were issued (something in the run syncs the stream): their "
            f"kernel times may include launch latency")
    if timings.gpu and not timings.device_runs:
        warnings.append(timings.device_timer)  # "host-side: why, and what the rows include"
    if timings.method == "instrument":
        summary["note"] = timings.builtin_note
    summary["warnings"] = warnings
    return summary, spans
