from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.options import echo_json, json_option, target_option, workload_argument


@click.command("compile")
@workload_argument
@target_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Export the compiled library here (.so).")
@click.option("--emit-source", type=click.Path(file_okay=False, path_type=Path),
              help="Write generated sources (host LLVM IR, CUDA .cu, ...) into this directory.")
@json_option
def compile_cmd(workload: str, target: str, output: Path | None, emit_source: Path | None,
                as_json: bool) -> None:
    """Compile WORKLOAD (builtin:NAME, a .py or an .onnx file) for a target."""
    from toolkit.tvm_side import stack
    from toolkit.tvm_side import workload as workloads

    wl = workloads.load(workload)
    compiled = stack.compile(wl, target)
    result = {
        "workload": wl.source,
        "target": target,
        "compile_seconds": round(compiled.seconds, 4),
        "library": str(stack.export(compiled, output)) if output else None,
        "sources": [str(p) for p in stack.emit_sources(compiled, emit_source)]
        if emit_source else [],
    }
    if as_json:
        echo_json(result)
        return
    click.echo(f"compiled {wl.source} for {target} in {compiled.seconds:.2f} s")
    if result["library"]:
        click.echo(f"  library: {result['library']}")
    for path in result["sources"]:
        click.echo(f"  source:  {path}")
