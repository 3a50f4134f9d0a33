from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.options import (
    SEED,
    TOLERANCE,
    compile_options,
    entry_option,
    ext_option,
    json_option,
    remote_options,
    target_option,
    workload_argument,
)
from toolkit.cli.terminal import Terminal, pass_terminal

if TYPE_CHECKING:
    from toolkit.stack.remote import Remote


@click.command("run")
@workload_argument
@target_option
@ext_option
@entry_option
@compile_options
@remote_options
@click.option("--inputs", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help=".npz with the inputs, by argument name or in order (arr_0, arr_1, ...).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for random inputs.")
@click.option("--check", is_flag=True,
              help="Compare with the workload's reference, else onnxruntime (.onnx), else an "
                   "unoptimised build on another code generator; exit 1 on mismatch.")
@click.option("--rtol", type=TOLERANCE, default=1e-3, show_default=True)
@click.option("--atol", type=TOLERANCE, default=1e-4, show_default=True)
@json_option
@pass_terminal
def run_cmd(term: Terminal, workload: str, target: str, extensions: tuple[str, ...],
            entry: str | None, compiling: dict[str, Any], remote: Remote | None,
            inputs: Path | None, seed: int, check: bool, rtol: float, atol: float,
            as_json: bool) -> int:
    """Run WORKLOAD (or a library from 'tk compile -o') on the target's device, or a remote one."""
    from toolkit import stack
    from toolkit.ext.loader import use
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads

    for ext in extensions:
        use(ext)
    options = stack.compile_options(**compiling)
    wl = workloads.load(workload, seed=seed, entry=entry)
    if wl.origin_problem:
        term.note(f"{wl.origin_problem}: running {wl.source} on "
                  f"{'the given' if inputs else 'seeded-random'} inputs, without its reference")
    args = read_inputs(inputs, wl) if inputs else wl.make_inputs(seed)
    t = targets.resolve(target)  # once: the device check and the compile share it
    with contextlib.ExitStack() as ending:
        session = None
        if remote is not None:
            from toolkit.stack import remote as remotes

            session = ending.enter_context(remotes.connect(remote))
        if wl.library is None:  # refuse before a compile that could not run
            session.device(t.tvm) if session is not None else targets.device_for(t.tvm)
        compiled = stack.compile(wl, t, options=options, remote=session is not None)
        for note in compiled.notes:
            term.note(note)
        result = stack.run(compiled, args, remote=session, input_flags=input_flags(inputs, seed))
    report = {
        "workload": wl.source,
        "entry": wl.entry,
        "target": compiled.target_spec,
        "device": result.device,
        "compile_seconds": round(compiled.seconds, 4),
        "run_seconds": round(result.seconds, 6),
        "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype)} for o in result.outputs],
    }
    status = 0
    if check:
        cmp = stack.check(compiled, args, result.outputs, rtol=rtol, atol=atol)
        report["check"] = cmp.__dict__
        status = 0 if cmp.ok else 1
    term.result(report, render_run)
    return status


def render_run(r: dict[str, Any]) -> str:
    lines = [f"ran {r['workload']} ({r['entry']}) on {r['device']} in "
             f"{r['run_seconds'] * 1e3:.3f} ms"]
    lines += [f"  output {i}: {out['dtype']}{out['shape']}" for i, out in enumerate(r["outputs"])]
    c = r.get("check")
    if c:
        lines.append(f"  check against {c['against']}: {'OK' if c['ok'] else 'MISMATCH'} max "
                     f"abs err {c['max_abs']:.3g}, max rel err {c['max_rel']:.3g} (rtol "
                     f"{c['rtol']:g}, atol {c['atol']:g})")
    return "\n".join(lines)


def input_flags(inputs: Path | None, seed: int) -> list[str]:
    """The options that chose a run's inputs, as a reproduce line repeats them."""
    return ["--inputs", str(inputs)] if inputs else ["--seed", str(seed)]


def read_inputs(path: Path, wl) -> list:
    import numpy as np

    from toolkit.errors import UserError

    try:
        data = np.load(path)
    except Exception as e:  # noqa: BLE001 - numpy raises several kinds for a bad file
        raise UserError(f"--inputs {path}: not a readable .npz file ({e})") from None
    names = [s.name for s in wl.input_specs]
    if all(n in data for n in names):
        arrays = [data[n] for n in names]
    else:
        arrays = [data[f"arr_{i}"] for i in range(len(names)) if f"arr_{i}" in data]
    if len(arrays) != len(names):
        raise UserError(
            f"--inputs {path}: expected arrays named {', '.join(names)} (or arr_0..), "
            f"found {', '.join(data.files)}"
        )
    for spec, arr in zip(wl.input_specs, arrays):
        if tuple(arr.shape) != spec.shape and -1 not in spec.shape:
            raise UserError(f"--inputs {path}: {spec.name} has shape {arr.shape}, "
                            f"the workload wants {spec.shape}")
    return arrays
