"""Record where one compile spends its time: passes, dlight rules, codegen, Python calls.

One compile through the hosted stack (``stack.compile``) with three seams attached:

- a pass instrument: a span per pass from ``run_before_pass`` to ``run_after_pass``, nested
  as the passes ran, numbered as ``tk dump-ir`` numbers them (``dumpir.numbering``), and
  naming the function it ran on when the module held just one;
- dump-ir's codegen and dlight seams (``dumpir.codegen``): a span per ``codegen_build`` call
  (one per module: TVM generates a module's functions in one call) and per function
  ``ApplyDefaultSchedule`` scheduled, with the rule that did;
- ``sys.setprofile`` on the compile's thread: a span per call of a Python function in TVM's
  or tk's code that lasted at least ``min_seconds``.

tk's own hooks cost time the compile would not spend; it is measured and taken out of the
clock every span is placed on (``_Clock``), so spans add up to the compile's own time and
still nest.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import toolkit
from toolkit import stack
from toolkit.cause import one_line
from toolkit.errors import TvmFailure
from toolkit.stack import codegen, compat
from toolkit.stack import target as targets
from toolkit.stack.numbering import PassNumbering, functions
from toolkit.stack.workload import Workload
from toolkit.trace.spans import CODEGEN, COMPILE, DLIGHT, PASS, PYTHON, Span

# tk's own seams: their frames are the tracing, not the compile.
SEAMS = (str(Path(__file__).resolve()), str(Path(codegen.__file__).resolve()))


class _Clock:
    """perf_counter less the time spent in tk's hooks so far, free of what tracing adds.
    Never goes back (the profiler's share is an estimate, see ``_Calls.bias``), so spans
    placed on it keep their nesting."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        self.origin = time.perf_counter()
        self.hooks = 0.0
        self._last = 0.0

    def now(self) -> float:
        return self.at(time.perf_counter())

    def at(self, perf: float) -> float:
        """A perf_counter reading taken outside the hooks or at a hook's start, on this clock."""
        self._last = max(self._last, perf - self.origin - self.hooks)
        return self._last


@dataclass
class CompileTrace:
    spans: list[Span]
    workload: str
    target: str
    tvm_version: str
    wall_seconds: float  # the compile with tracing on, hooks included
    hook_seconds: float  # of which tk's hooks (taken out of every span)
    min_seconds: float
    failure: Any = None  # the TvmFailure when the compile raised (the trace is still written)
    header: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.header = {"workload": self.workload, "target": self.target,
                       "tvm_version": self.tvm_version,
                       "wall_seconds": round(self.wall_seconds, 6),
                       "hook_seconds": round(self.hook_seconds, 6),
                       "min_us": round(self.min_seconds * 1e6, 3),
                       "status": "failed" if self.failure is not None else "ok"}


class _Passes:
    """The pass instrument's side: open spans, numbering, the functions of each module."""

    def __init__(self, clock: _Clock, spans: list[Span]) -> None:
        self.clock = clock
        self.spans = spans
        self.numbering = PassNumbering(compat.structural_hash())
        self.open: list[Span] = []
        self.names: dict[int, str] = {}  # object handle -> name, of functions passes received

    def before(self, mod: Any, name: str) -> None:
        t0 = time.perf_counter()
        funcs = functions(mod)
        for fname, f in funcs.items():
            self.names[compat.object_handle(f)] = fname
        _, number = self.numbering.start(funcs)
        only = next(iter(funcs)) if len(funcs) == 1 else None
        span = Span(name, PASS, 0.0, 0.0, number=number, function=only,
                    args={"depth": len(self.open), "functions": len(funcs)})
        self.spans.append(span)
        self.open.append(span)
        self.clock.hooks += time.perf_counter() - t0
        span.start = self.clock.now()

    def after(self, mod: Any, name: str) -> None:
        end = self.clock.now()
        t0 = time.perf_counter()
        span = self.open.pop()
        span.seconds = end - span.start
        self.numbering.end(functions(mod))
        self.clock.hooks += time.perf_counter() - t0

    def abandon(self, end: float) -> Span | None:
        """The compile raised: the passes still open end when it did (``end``), marked
        failed. Returns the innermost, the pass that raised (None when it raised outside
        every pass)."""
        for span in self.open:
            span.seconds = end - span.start
            span.args["status"] = "failed"
        failed = self.open[-1] if self.open else None
        self.open.clear()
        self.numbering.abandon()
        return failed


class _Calls:
    """``sys.setprofile``'s side: Python calls in TVM's and tk's code, at least min_seconds."""

    def __init__(self, clock: _Clock, spans: list[Span], min_seconds: float) -> None:
        import tvm

        self.clock = clock
        self.spans = spans
        self.min = min_seconds
        self.roots = tuple(str(Path(m.__file__).resolve().parent) for m in _packages(tvm))
        self.kept: dict[CodeType, str | None] = {}  # code -> span name, None: not traced
        self.stack: list[tuple[FrameType, float]] = []
        # Seconds each profile event costs before the hook's first clock reading and after
        # its last (the interpreter calling into Python): the hook cannot time that part.
        self.bias = 0.0

    def _name(self, code: CodeType) -> str | None:
        path = code.co_filename
        if path in SEAMS or not path.startswith(self.roots):
            return None
        module = _module_of(path, self.roots)
        return f"{module}.{code.co_qualname}" if hasattr(code, "co_qualname") \
            else f"{module}.{code.co_name}"

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        t0 = time.perf_counter()
        if event == "call":
            code = frame.f_code
            name = self.kept.get(code, False)
            if name is False:
                name = self.kept[code] = self._name(code)
            if name is not None:
                self.stack.append((frame, self.clock.at(t0)))
        elif event == "return" and self.kept.get(frame.f_code) is not None and self.stack and (
                self.stack[-1][0] is frame or any(f is frame for f, _ in self.stack)):
            end = self.clock.at(t0)
            # Pop down to this frame: one that returned unseen ends with it.
            while self.stack:
                top, start = self.stack.pop()
                self._span(top, start, end)
                if top is frame:
                    break
        self.clock.hooks += time.perf_counter() - t0 + self.bias

    def calibrate(self, calls: int = 20000, tries: int = 3) -> None:
        """Measure :attr:`bias`: a loop of empty calls with the hook on, less the same loop
        without it and less what the hook timed itself, per event (a call and a return per
        call). The best of ``tries``: a loaded machine only ever adds."""
        def empty() -> None:
            pass

        def loop() -> float:
            start = time.perf_counter()
            for _ in range(calls):
                empty()
            return time.perf_counter() - start

        plain = min(loop() for _ in range(tries))
        hooked = []
        for _ in range(tries):
            timed = self.clock.hooks
            sys.setprofile(self.hook)
            seconds = loop()
            sys.setprofile(None)
            hooked.append(seconds - (self.clock.hooks - timed))
        self.bias = max(0.0, (min(hooked) - plain) / (2 * calls))

    def _span(self, frame: FrameType, start: float, end: float) -> None:
        if end - start >= self.min:
            code = frame.f_code
            self.spans.append(Span(self.kept[code] or code.co_name, PYTHON, start, end - start,
                                   args={"at": f"{code.co_filename}:{code.co_firstlineno}"}))

    def close(self, end: float) -> None:
        """Frames still open when profiling stopped at ``end`` (the compile raised past
        them) end then."""
        while self.stack:
            top, start = self.stack.pop()
            self._span(top, start, end)


def _packages(tvm: Any) -> list[Any]:
    out = [tvm, toolkit]
    try:
        import tvm_ffi

        out.append(tvm_ffi)
    except ImportError:
        pass
    return out


def _module_of(path: str, roots: tuple[str, ...]) -> str:
    """``/…/site-packages/tvm/relax/vm_build.py`` -> ``tvm.relax.vm_build``."""
    for root in roots:
        if path.startswith(root):
            rel = Path(root).name + path[len(root):].removesuffix(".py")
            return rel.replace("/", ".").removesuffix(".__init__")
    return path


def trace(workload: Workload, target: str | targets.Target, *, min_seconds: float = 0.001,
          options: stack.CompileOptions | None = None) -> CompileTrace:
    """Compile ``workload`` for ``target`` once, recording spans (see the module docstring)."""
    from tvm.ir.instrument import pass_instrument

    resolved = targets.resolve(target)
    spans: list[Span] = []
    clock = _Clock()
    passes = _Passes(clock, spans)
    calls = _Calls(clock, spans, min_seconds)

    @pass_instrument
    class TraceInstrument:
        # Profiling is off inside the hooks: their calls are tk's, not the compile's.
        def run_before_pass(self, mod: Any, info: Any) -> None:
            sys.setprofile(None)
            passes.before(mod, info.name)
            sys.setprofile(calls.hook)

        def run_after_pass(self, mod: Any, info: Any) -> None:
            sys.setprofile(None)
            passes.after(mod, info.name)
            sys.setprofile(calls.hook)

    calls.calibrate()
    applied: list[codegen.RuleApplication] = []
    failure = None
    with codegen.capture(sources=False, clock=clock.now) as codegens, \
            codegen.dlight_rules(None, applied, clock=clock.now):
        clock.restart()  # calibrating is not the compile
        start = clock.now()
        sys.setprofile(calls.hook)
        try:
            stack.compile(workload, resolved, instruments=[TraceInstrument()], options=options)
        except TvmFailure as e:
            failure = e
        finally:
            sys.setprofile(None)
            end = clock.now()
    wall = time.perf_counter() - clock.origin
    calls.close(end)
    failed = passes.abandon(end)
    if failure is not None and failed is not None:
        cause = failure.__cause__ or failure
        failure = TvmFailure(f"pass {failed.name} (#{failed.number}) raised while compiling "
                             f"{workload.source} for {resolved.spec}: {one_line(cause)}",
                             reproduce=failure.reproduce)
    spans.insert(0, Span(f"compile {workload.source} for {resolved.spec}", COMPILE, start,
                         end - start))
    for call in codegens:
        only = call.functions[0] if len(call.functions) == 1 else None
        spans.append(Span(f"codegen {call.target}", CODEGEN, call.start, call.seconds,
                          function=only,
                          args={"functions": len(call.functions), "names": call.functions[:20],
                                **({"error": call.error} if call.error else {})}))
    for a in applied:
        name = passes.names.get(compat.object_handle(a.function))
        spans.append(Span(f"dlight {a.rule or '(no rule)'}", DLIGHT, a.start, a.seconds,
                          function=name, args={"rule": a.rule}))
    return CompileTrace(spans, workload.source, resolved.spec,
                        getattr(compat.tvm(), "__version__", "unknown"), wall, clock.hooks,
                        min_seconds, failure)

