from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolkit.cli.options import (
    build_options,
    echo_json,
    entry_option,
    json_option,
    target_option,
    workload_argument,
)


@click.command("compile")
@workload_argument
@target_option
@entry_option
@build_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Export the library here (.so), and its params beside it (.params.npz): "
                   "'tk run model.so' runs the pair.")
@click.option("--cc", metavar="COMPILER",
              help="Link the library with this (cross) compiler, e.g. aarch64-linux-gnu-gcc "
                   "(default: <mtriple>-gcc for a foreign mtriple, else the host's).")
@click.option("--emit-source", type=click.Path(file_okay=False, path_type=Path),
              help="Write generated sources (host LLVM IR, CUDA .cu, ...) into this directory.")
@json_option
def compile_cmd(workload: str, target: str, entry: str | None, build: dict[str, Any],
                output: Path | None, cc: str | None, emit_source: Path | None,
                as_json: bool) -> None:
    """Compile WORKLOAD (builtin:NAME, a .py or an .onnx file) for a target."""
    from toolkit.errors import UserError
    from toolkit.tvm_side import stack
    from toolkit.tvm_side import workload as workloads

    if cc and not output:
        raise UserError("--cc links the library -o writes; give -o too")
    if output:  # before the compile: an unwritable -o is not a TVM failure
        from toolkit.outputs import probe_writable

        probe_writable(output.parent, f"-o {output}")
    options = stack.build_options(**build)
    wl = workloads.load(workload, entry=entry)
    compiled = stack.compile(wl, target, options=options)
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
    if as_json:
        echo_json(result)
        return
    click.echo(f"compiled {wl.source} ({wl.entry}) for {target} in {compiled.seconds:.2f} s")
    if exported:
        linked = f" (linked by {exported.cross_compiler})" if exported.cross_compiler else ""
        click.echo(f"  library: {exported.library}{linked}")
        click.echo(f"  params:  {exported.params}")
    for path in result["sources"]:
        click.echo(f"  source:  {path}")
