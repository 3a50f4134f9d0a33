from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolkit.cli.options import (
    compile_options,
    entry_option,
    ext_option,
    json_option,
    target_option,
    workload_argument,
)
from toolkit.cli.terminal import Terminal, pass_terminal


@click.command("compile")
@workload_argument
@target_option
@ext_option
@entry_option
@compile_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Export the library here (.so), and its params beside it (.params.npz): "
                   "'tk run model.so' runs the pair.")
@click.option("--cc", metavar="COMPILER",
              help="Link the library with this (cross) compiler, e.g. aarch64-linux-gnu-gcc "
                   "(default: <mtriple>-gcc for a foreign mtriple, else the host's).")
@click.option("--emit-source", type=click.Path(file_okay=False, path_type=Path),
              help="Write generated sources (host LLVM IR, CUDA .cu, ...) into this directory.")
@json_option
@pass_terminal
def compile_cmd(term: Terminal, workload: str, target: str, extensions: tuple[str, ...],
                entry: str | None, compiling: dict[str, Any], output: Path | None, cc: str | None,
                emit_source: Path | None, as_json: bool) -> None:
    """Compile WORKLOAD (builtin:NAME, a .py or an .onnx file) for a target."""
    from toolkit import stack
    from toolkit.errors import UserError
    from toolkit.ext.loader import use
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads

    if cc and not output:
        raise UserError("--cc links the library -o writes; give -o too")
    if output:  # before the compile: an unwritable -o is not a TVM failure
        from toolkit.outputs import probe_writable

        probe_writable(output.parent, f"-o {output}")
    for ext in extensions:
        use(ext)
    options = stack.compile_options(**compiling)
    wl = workloads.load(workload, entry=entry)
    compiled = stack.compile(wl, targets.resolve(target), options=options)
    for note in compiled.notes:
        term.note(note)
    exported = stack.export(compiled, output, cc) if output else None
    result = {
        "workload": wl.source,
        "entry": wl.entry,
        "kind": wl.kind,
        "target": target,
        "host": options.host,
        "compile_seconds": round(compiled.seconds, 4),
        "library": str(exported.library) if exported else None,
        "params": str(exported.params) if exported else None,
        "cross_compiler": exported.cross_compiler if exported else None,
        "sources": [str(p) for p in stack.emit_sources(compiled, emit_source)]
        if emit_source else [],
    }
    term.result(result, render_compiled)


def render_compiled(r: dict[str, Any]) -> str:
    lines = [f"compiled {r['workload']} ({r['entry']}) for {r['target']} in "
             f"{r['compile_seconds']:.2f} s"]
    if r["library"]:
        linked = f" (linked by {r['cross_compiler']})" if r["cross_compiler"] else ""
        lines += [f"  library: {r['library']}{linked}", f"  params:  {r['params']}"]
    lines += [f"  source:  {path}" for path in r["sources"]]
    return "\n".join(lines)
