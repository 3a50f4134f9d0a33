"""The records a profile is made of: raw VM-call timings and what each kernel is.

Pure data, shared by the in-TVM half that measures (``toolkit.profile.in_tvm``) and the
host half that reports and compares (``toolkit.profile.report``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

BUILTIN_PREFIX = "vm."
# Builtins without side effects that are safe to call twice (the second result is dropped).
PURE_BUILTINS = frozenset({
    "vm.builtin.alloc_storage", "vm.builtin.alloc_tensor", "vm.builtin.null_value",
    "vm.builtin.match_shape", "vm.builtin.make_shape", "vm.builtin.check_tensor_info",
    "vm.builtin.check_shape_info", "vm.builtin.check_tuple_info", "vm.builtin.check_func_info",
    "vm.builtin.check_prim_value_info", "vm.builtin.tuple_getitem", "vm.builtin.make_tuple",
    "vm.builtin.shape_of", "vm.builtin.reshape", "vm.builtin.read_if_cond",
})


def is_builtin(symbol: str) -> bool:
    return symbol.startswith(BUILTIN_PREFIX)


@dataclass
class Call:
    """One VM call of one run. Times in seconds from the run's start, on the host clock.

    ``device``: what the device spent on it, from the device timer's marks (kernels and
    externs; on the CPU the same span as the host's); None for builtins, which run on the
    host, and where no device timer exists (then host times include a sync around the call).
    """

    symbol: str
    start: float
    end: float
    device: float | None = None

    @property
    def host(self) -> float:
        return self.end - self.start

    @property
    def time(self) -> float:
        """The row's time: on the device where it was measured there, else on the host."""
        return self.host if self.device is None else self.device


@dataclass
class Timings:
    """Raw measurements of one profiling session."""

    method: str  # "instrument" or "vm.profile"
    # Per instrumented run: the calls in order.
    runs: list[list[Call]]
    # Per call index of the first instrumented run: tensor arguments as "dtype[d0,d1]".
    signatures: list[tuple[str, tuple[str, ...]]]
    end_to_end: list[float]  # seconds on ``clock``, entry function without any instrument
    instrumented: list[float] = field(default_factory=list)  # seconds, with the timing hook
    hooked_noop: list[float] = field(default_factory=list)  # seconds, with a no-op hook
    end_to_end_wall: list[float] = field(default_factory=list)  # wall seconds, same runs
    # Seconds until the entry function returned, before the sync: the host's time to issue
    # a plain run and an instrumented one (on the CPU the whole run).
    issue_plain: list[float] = field(default_factory=list)
    issue_instrumented: list[float] = field(default_factory=list)
    clock: str = "wall"  # what end_to_end and host times are: "wall" or "thread CPU time"
    device_timer: str = "host clock"  # what Call.device is (devtimer.*.name)
    gpu: bool = False
    # GPU runs timed on the device: issued while the filler kept the stream busy / redone.
    device_runs: int = 0
    device_runs_redone: int = 0
    device_runs_gapped: int = 0  # kept although the device idled while they were issued
    # Per symbol, seconds taken off each call: timing it from Python with nothing to do.
    floors: dict[str, float] = field(default_factory=dict)

    builtin_note = ("externs and builtins outside PURE_BUILTINS are timed between the "
                    "instrument's callbacks and include their entry cost")


@dataclass
class KernelInfo:
    name: str
    flops: float | None  # per call; None where the TIR does not say (symbolic extents, externs)
    struct_hash: str | None  # of the PrimFunc without its name: matches renamed kernels
    fused_ops: list[str] = field(default_factory=list)


@dataclass
class Measured:
    """What one profiling session measured, before any aggregation: the in-TVM half returns
    it, the host half's ``report.build`` makes the report of it."""

    timings: Timings
    kernels: dict[str, KernelInfo]  # symbol -> what the kernel is
    header: dict[str, Any]  # what makes two profiles comparable (``measure.header_for``)
    warnings: list[str] = field(default_factory=list)  # for the report's summary


_DIGITS = re.compile(r"\d+$")


def base_op(name: str) -> str:
    """``matmul3`` -> ``matmul``: LegalizeOps numbers the PrimFuncs of one op."""
    return _DIGITS.sub("", name) or name


