"""One run as a timeline: host calls and device spans on one clock, and where the time went.

Pure data in, numbers out (no tvm): ``place`` puts each call's device time on the host's
time axis, ``split`` divides an end-to-end time into device busy, host overhead and the
rest, and ``chrome_trace`` writes the timeline as Chrome/Perfetto trace JSON. Writing a
trace file is here once for tk's traces (``tk profile --trace``, ``tk trace``):
``chrome_document``, ``check_trace_path``, ``write_document``.

On the CPU a kernel runs inside its call, so its device span is the call's own span. On a
GPU the host only launches it: the kernel starts when its launch has returned and the
device has finished the kernel before it (one stream), and runs for the device time its
CUDA events measured. The host calls come from a run with the instrument, which spends a
few microseconds in Python per call that a real run does not; ``place`` takes that cost
(measured: hooked run minus plain run, per call) out of the gaps between calls before
placing kernels, so the device waits only for the host work a real run does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.outputs import writing
from toolkit.profile.records import Call

LAUNCH_BOUND_BUSY = 0.5  # GPU busy below this share of end to end, host overhead leading

# otherData["tk"] of the traces tk writes: a file so marked is tk's, and may be replaced.
PROFILE_MARK = "profile-trace"
COMPILE_MARK = "compile-trace"
TRACE_MARKS = (PROFILE_MARK, COMPILE_MARK)


@dataclass
class Span:
    symbol: str
    row: str  # the report row the call belongs to
    host: tuple[float, float]  # seconds from the run's start
    device: tuple[float, float] | None


def place(calls: Sequence[Call], rows: Sequence[str], *, synchronous: bool,
          hook_overhead: float = 0.0) -> list[Span]:
    """Host and device spans of one run; ``hook_overhead`` (seconds per call) is removed
    from the gaps between calls on asynchronous devices (see the module docstring)."""
    spans: list[Span] = []
    shift, host_end, free = 0.0, 0.0, 0.0
    for call, row in zip(calls, rows):
        start = call.start
        if not synchronous:
            shift += min(hook_overhead, max(0.0, call.start - shift - host_end))
            start = call.start - shift
        end = start + call.host
        host_end = end
        device = None
        if call.device is not None:
            begin = start if synchronous else max(end, free)
            device = (begin, begin + call.device)
            free = device[1]
        spans.append(Span(call.symbol, row, (start, end), device))
    return spans


@dataclass
class Split:
    """End to end divided three ways (seconds); ``parts`` names them for this device."""

    busy: float  # device computing: kernels (and externs) on their device
    host: float  # host work the device waited for (GPU), or builtins (CPU)
    rest: float  # GPU: idle gaps; CPU: the VM interpreter, entry and exit
    gpu: bool

    @property
    def parts(self) -> list[tuple[str, float]]:
        names = (("GPU busy", "host overhead", "idle gaps") if self.gpu
                 else ("kernels", "builtins", "VM and other"))
        return list(zip(names, (self.busy, self.host, self.rest)))


def split(spans: Sequence[Span], end_to_end: float, *, gpu: bool) -> Split:
    """Where ``end_to_end`` went, from one run's spans. ``rest`` may come out negative:
    then the calls add up to more than the run and the caller must say so."""
    busy = sum(s.device[1] - s.device[0] for s in spans if s.device is not None)
    if not gpu:
        host = sum(s.host[1] - s.host[0] for s in spans if s.device is None)
        return Split(busy, host, end_to_end - busy - host, gpu)
    waited, free = 0.0, 0.0  # the device is idle from the run's start until work arrives
    for s in spans:
        if s.device is not None:
            waited += max(0.0, s.device[0] - free)
            free = s.device[1]
    waited = min(waited, max(0.0, end_to_end - busy))
    return Split(busy, waited, end_to_end - busy - waited, gpu)


def verdict(s: Split, end_to_end: float) -> str:
    """One line on what bounds the run."""
    if end_to_end <= 0:
        return "no end-to-end time"
    busy = 100 * s.busy / end_to_end
    if not s.gpu:
        return f"kernels {busy:.0f}% of end to end"
    if s.busy / end_to_end < LAUNCH_BOUND_BUSY:
        if s.host >= s.rest:
            return (f"GPU busy {busy:.0f}% of end to end: launch-bound; CUDA graphs "
                    f"(RewriteCUDAGraph) or more fusion would help")
        return (f"GPU busy {busy:.0f}% of end to end: mostly idle gaps the host's calls do not "
                f"explain (syncs, copies, the VM between calls)")
    return f"GPU busy {busy:.0f}% of end to end: device-bound; faster kernels help most"


def chrome_trace(spans: Sequence[Span], header: dict[str, Any]) -> dict[str, Any]:
    """Chrome trace-event JSON: host calls on one track, device spans on another, in
    execution order, microseconds (the unit the format uses)."""
    pid = 1
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid,
         "args": {"name": f"tk profile {header.get('workload', '')} on {header.get('device', '')}"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1, "args": {"name": "host: VM calls"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": 2,
         "args": {"name": f"device: {header.get('device_timer', 'kernels')}"}},
        {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": 1, "args": {"sort_index": 1}},
        {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": 2, "args": {"sort_index": 2}},
    ]
    for i, s in enumerate(spans):
        events.append({"ph": "X", "pid": pid, "tid": 1, "name": s.symbol, "cat": "host",
                       "ts": s.host[0] * 1e6, "dur": (s.host[1] - s.host[0]) * 1e6,
                       "args": {"call": i, "row": s.row}})
        if s.device is not None:
            events.append({"ph": "X", "pid": pid, "tid": 2, "name": s.symbol, "cat": "device",
                           "ts": s.device[0] * 1e6, "dur": (s.device[1] - s.device[0]) * 1e6,
                           "args": {"call": i, "row": s.row}})
    return chrome_document(events, header, PROFILE_MARK)


def chrome_document(events: list[dict[str, Any]], header: dict[str, Any],
                    mark: str) -> dict[str, Any]:
    """A Chrome/Perfetto trace-event document; ``header`` goes to ``otherData``."""
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {**header, "tk": mark}}


def check_trace_path(path: Path, flag: str = "--trace") -> None:
    """Refuse, before any work, a trace path holding something tk did not write, or one
    where no file can be made."""
    from toolkit.errors import UserError
    from toolkit.outputs import probe_writable

    if os.path.lexists(path):
        try:
            ours = (path.is_file() and not path.is_symlink() and json.loads(
                path.read_text()).get("otherData", {}).get("tk") in TRACE_MARKS)
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise UserError(f"{flag} {path}: is there and is not a trace tk wrote: move it "
                            "away or pick another name")
    probe_writable(path.parent, f"{flag} {path}")


def write_document(path: Path, document: dict[str, Any], flag: str = "--trace") -> Path:
    check_trace_path(path, flag)
    with writing(path, f"{flag} {path}") as tmp:
        tmp.write_text(json.dumps(document) + "\n")
    return path


def write_trace(path: Path, spans: Sequence[Span], header: dict[str, Any]) -> Path:
    return write_document(path, chrome_trace(spans, header))


def spans_from_document(items: Sequence[dict[str, Any]]) -> list[Span]:
    """The ``timeline`` a report document stores, back as spans (seconds)."""
    return [Span(d["symbol"], d["row"], (d["host"][0] / 1e6, d["host"][1] / 1e6),
                 None if d.get("device") is None else (d["device"][0] / 1e6, d["device"][1] / 1e6))
            for d in items]


def spans_to_document(spans: Sequence[Span]) -> list[dict[str, Any]]:
    return [{"symbol": s.symbol, "row": s.row, "host": [s.host[0] * 1e6, s.host[1] * 1e6],
             "device": None if s.device is None else [s.device[0] * 1e6, s.device[1] * 1e6]}
            for s in spans]
