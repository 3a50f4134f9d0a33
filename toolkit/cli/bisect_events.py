"""How a bisection's events read on the terminal: ``tk bisect`` and ``tk fork rebase-check``
(whose steps are a bisection's) both import this."""

from __future__ import annotations

from toolkit.bisect import events as ev
from toolkit.cli.terminal import describe


@describe.register
def _(e: ev.Window) -> str:
    return (f"[{e.probe}] {e.untested} commit{'s' if e.untested != 1 else ''} left between "
            f"{e.good[:10]} (good) and {e.bad[:10]} (bad), ~{e.steps_left} "
            f"step{'s' if e.steps_left != 1 else ''}")


@describe.register
def _(e: ev.StepStarted) -> str:
    what = {"good-end": "checking the good end", "bad-end": "checking the bad end"}.get(
        e.phase, f"probing {e.index}/{e.total}")
    return f"{what}: {e.commit[:10]}"


@describe.register
def _(e: ev.BuildStarted) -> str:
    return f"  slot {e.slot}: building {e.commit[:10]} ahead (it may be probed next)"


@describe.register
def _(e: ev.BuildDone) -> str | None:
    if e.prefetch:
        if e.cache_hit:
            return None  # someone stored it meanwhile: nothing to tell
        how = f"built in {e.seconds:.1f}s" if e.ok else f"build failed ({e.message})"
        return f"  slot {e.slot}: {e.commit[:10]} {how}"
    if not e.ok:
        return f"  build failed ({e.message or f'see {e.log}'})"
    if e.cache_hit is None:
        return "  nothing to build (the check builds)"
    return "  built: from the store" if e.cache_hit else f"  built in {e.seconds:.1f}s"


@describe.register
def _(e: ev.VerdictKnown) -> str:
    return f"  known from {e.runs} earlier run{'s' if e.runs != 1 else ''}: nothing to build or run"


@describe.register
def _(e: ev.CheckStarted) -> str | None:
    # The check was shown at start; a verdict line follows. Only repeated runs are news.
    return f"  checking, {e.runs} runs" if e.runs > 1 else None


@describe.register
def _(e: ev.Verdict) -> str:
    who = f"{e.commit[:10]} " if e.phase == "confirm" else ""
    return f"  {who}-> {e.verdict} ({e.reason})"


@describe.register
def _(e: ev.Confirming) -> str:
    return f"confirming: {e.culprit[:10]} bad, its parent {e.parent[:10]} good"


@describe.register(ev.Stopped)
@describe.register(ev.Finished)
def _(e: ev.Stopped | ev.Finished) -> None:
    return None  # the error line, or the report on stdout, says it


@describe.register
def _(e: ev.PassSearchStarted) -> str:
    return f"compiling {e.workload} for {e.target} with every pass"


@describe.register
def _(e: ev.PrefixProbed) -> str:
    label = "every pass" if e.k is None else f"first {e.k} passes"
    return f"  {label}: {e.status} ({e.detail})"


@describe.register
def _(e: ev.RequiredRemembered) -> str:
    return f"  required (learned before for TVM {e.tvm}): {', '.join(e.passes)}"


@describe.register
def _(e: ev.RequiredLearned) -> str:
    return f"  learned: {e.name} must always run (without it prefix {e.k} does not compile)"


@describe.register
def _(e: ev.PassesListed) -> str:
    return f"{e.count} passes; checking with none but the required ones"


@describe.register
def _(e: ev.PassConfirming) -> str:
    return f"confirming: the first {e.k - 1} passes good and the first {e.k} bad, twice each"


@describe.register
def _(e: ev.PassWindow) -> str:
    return f"passes {e.lo}..{e.hi}: ~{e.steps_left} probes left; trying the first {e.trying}"
