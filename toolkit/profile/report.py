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
from toolkit.profile.records import KernelInfo, Timings, base_op, is_builtin

KIND = "profile"
COLUMNS = [
    "name", "kind", "calls", "total_us", "share", "mean_us", "median_us", "std_us",
    "min_us", "max_us", "spread_us", "gflops", "gbps", "flops", "bytes", "args",
    "fused_ops", "op", "struct_hash",
]
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

    def document(self) -> dict[str, Any]:
        return reports.to_document(KIND, self.header, self.summary, self.operators,
                                   runs_us=self.runs_us)

    def write(self, directory: Path, formats: Sequence[str] = reports.FORMATS,
              stem: str = "profile") -> dict[str, Path]:
        return reports.write(
            directory, stem, formats, kind=KIND, title=f"tk profile: {self.header['workload']}",
            header=self.header, summary=self.summary, df=self.operators, view=HTML_VIEW,
            runs_us=self.runs_us,
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
        header, summary, df = reports.from_document(doc)
        return cls(header, summary, df[[c for c in COLUMNS if c in df.columns]],
                   doc.get("runs_us", {}))


def _row_keys(timings: Timings) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Row key of every call of every run: (symbol, argument shapes); builtins by symbol."""
    sigs = timings.signatures
    first_sig: dict[str, tuple[str, ...]] = {}
    for symbol, args in sigs:
        first_sig.setdefault(symbol, args)

    def key(symbol: str, args: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        return (symbol, ()) if is_builtin(symbol) else (symbol, args)

    out = []
    for run in timings.runs:
        if [s for s, _ in run] == [s for s, _ in sigs]:
            out.append([key(s, a) for s, a in sigs])
        else:  # control flow changed the call sequence: fall back to names
            out.append([key(s, first_sig.get(s, ())) for s, _ in run])
    return out


def build(timings: Timings, kernels: dict[str, KernelInfo], header: dict[str, Any]) -> Report:
    """Aggregate timings into the operator table and the end-to-end summary."""
    per_call: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    per_run: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    calls_first: dict[tuple[str, tuple[str, ...]], int] = {}
    repeats = len(timings.runs)
    for r, (run, keys) in enumerate(zip(timings.runs, _row_keys(timings))):
        for (_, seconds), key in zip(run, keys):
            per_call.setdefault(key, []).append(seconds * 1e6)
            totals = per_run.setdefault(key, [0.0] * repeats)
            totals[r] += seconds * 1e6
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
        })
    df = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "share"])
    accounted = float(df["total_us"].sum()) if len(df) else 0.0
    df.insert(COLUMNS.index("share"), "share",
              df["total_us"] / accounted if accounted > 0 else 0.0)
    df = df.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)
    runs_us[E2E] = [t * 1e6 for t in timings.end_to_end]
    return Report(header, _summary(timings, df, accounted), df, runs_us)


def _overhead(hooked: Sequence[float], plain: Sequence[float], calls: int) -> float:
    """Extra microseconds per VM call, fastest hooked run against fastest plain run.

    Load from other processes only ever adds time, so the fastest of the repeats is the
    least disturbed estimate of each; a difference of medians of multi-millisecond runs
    would mostly measure that load.
    """
    return (float(np.min(hooked)) - float(np.min(plain))) * 1e6 / calls


def _summary(timings: Timings, df: pd.DataFrame, accounted: float) -> dict[str, Any]:
    e2e = np.asarray(timings.end_to_end) * 1e6
    median = float(np.median(e2e)) if len(e2e) else float("nan")
    calls = len(timings.runs[0]) if timings.runs else 0
    summary: dict[str, Any] = {
        "e2e_median_us": median,
        "e2e_mean_us": float(e2e.mean()) if len(e2e) else None,
        "e2e_std_us": float(e2e.std(ddof=1)) if len(e2e) > 1 else 0.0,
        "e2e_min_us": float(e2e.min()) if len(e2e) else None,
        "e2e_max_us": float(e2e.max()) if len(e2e) else None,
        "e2e_spread_us": robust_spread(list(e2e)),
        "accounted_us": accounted,
        "unaccounted_us": median - accounted,
        "accounted_ratio": accounted / median if median > 0 else None,
        # The median over runs of each run's operator sum: under one-sided load it tracks the
        # end-to-end median, which the sum of per-operator medians then falls below.
        "operators_run_median_us": float(np.median([sum(t for _, t in run)
                                                    for run in timings.runs]) * 1e6)
        if timings.runs else None,
        "kernels_us": float(df.loc[df["kind"] != "builtin", "total_us"].sum()),
        "builtins_us": float(df.loc[df["kind"] == "builtin", "total_us"].sum()),
        "vm_calls_per_run": calls,
    }
    plain = np.asarray(timings.end_to_end)
    if len(timings.instrumented) == len(plain) and calls:
        summary["instrumented_median_us"] = float(np.median(timings.instrumented) * 1e6)
        summary["timer_overhead_us_per_call"] = _overhead(timings.instrumented, plain, calls)
    if len(timings.hooked_noop) == len(plain) and calls:
        summary["hook_overhead_us_per_call"] = _overhead(timings.hooked_noop, plain, calls)
    if timings.method == "instrument":
        summary["note"] = timings.builtin_note
    return summary
