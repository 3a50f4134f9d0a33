"""``tk trace``: where one compile spends its time, as a Chrome/Perfetto trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolkit.cli.options import (
    COUNT,
    Number,
    compile_options,
    entry_option,
    json_option,
    target_option,
    workload_argument,
)
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("trace")
@workload_argument
@target_option
@entry_option
@compile_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The trace file (Chrome trace-event JSON: ui.perfetto.dev, chrome://tracing).")
@click.option("--min-us", type=Number(float, min=0), default=1000.0, show_default=True,
              help="Keep Python calls of the compile stack lasting at least this many µs.")
@click.option("--top", type=COUNT, default=None, metavar="N",
              help="Print time by pass, by function and by dlight rule, N rows each.")
@json_option
@pass_terminal
def trace_cmd(term: Terminal, workload: str, target: str, entry: str | None,
              compiling: dict[str, Any], output: Path, min_us: float, top: int | None,
              as_json: bool) -> int:
    """Compile WORKLOAD once and write where the time went: passes as nested spans, dlight
    rules and codegen, and the Python calls of the compile stack."""
    from toolkit import stack
    from toolkit.profile import timeline
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads
    from toolkit.trace import report as traces
    from toolkit.trace.in_tvm import record as tracer

    timeline.check_trace_path(output, "-o")  # before the compile, not after
    options = stack.compile_options(**compiling)
    wl = workloads.load(workload, entry=entry)
    traced = tracer.trace(wl, targets.resolve(target), min_seconds=min_us / 1e6, options=options)
    timeline.write_document(output, traces.chrome_trace(traced.spans, traced.header), "-o")
    result = {**traced.header, "trace": str(output),
              **traces.top(traced.spans, top or 0), "spans": len(traced.spans)}
    if top is None:
        for key in ("by_pass", "by_function", "by_rule"):
            del result[key]
    term.result(result, lambda r: _text(r, top))
    if traced.failure is not None:
        term.error(str(traced.failure))
        return 1
    return 0


def _text(r: dict[str, Any], top: int | None) -> str:
    from toolkit.trace import report as traces

    head = (f"traced {r['workload']} for {r['target']}: compile "
            f"{r['compile_seconds'] * 1e3:.1f} ms (tracing added {r['hook_seconds'] * 1e3:.1f} "
            f"ms, taken out), {r['spans']} spans -> {r['trace']}")
    return head if top is None else head + "\n" + traces.top_text(r)
