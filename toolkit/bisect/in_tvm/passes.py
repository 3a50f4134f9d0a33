"""Pass bisection's probe server: the half that runs inside the TVM under test.

``toolkit.bisect.passes`` (host) starts ``python -m toolkit.bisect.in_tvm.passes serve`` in the
build's environment, writes one JSON request per line on its stdin and reads one result per
request from stdout, on a line starting with ``PASS_RESULT_MARKER`` (the protocol is written
down in ``toolkit.bisect.protocol``). The server loads the workload once and forks a child per
probe: skipping passes can crash TVM outright.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolkit.bisect.protocol import BAD, CONTAINERS, GOOD, PASS_NO_COMPILE, PASS_RESULT_MARKER
from toolkit.errors import TvmFailure
from toolkit.process import fork_and_wait, signal_name


def containers(pipeline: Any) -> frozenset[str]:
    """Names of the passes that only hold others: TVM's pipeline wrappers (``CONTAINERS``) and
    every ``Sequential`` in the workload's pipeline, named or not - a fork's own pipeline
    (the pass scaffold's ``NAME.pipeline``) is a list of passes, each one a unit, never one
    pass that must run whole."""
    import tvm

    names = set(CONTAINERS)

    def walk(p: Any) -> None:
        if isinstance(p, tvm.transform.Sequential):
            names.add(p.info.name)
            for nested in getattr(p, "passes", ()):
                walk(nested)

    walk(pipeline)
    return frozenset(names)


def prefix_instrument(k: int | None, required: set[str], diff_unit: int | None = None,
                      wrappers: frozenset[str] = CONTAINERS) -> Any:
    """A PassInstrument letting units ``0..k-1`` and required passes run, skipping the rest;
    it records the unit names and, for ``diff_unit``, the module before and after it. With
    every pass running (``k`` None) it also records each unit's pass number, dump-ir's.
    ``wrappers`` (``containers``) always run: their contents are the units."""
    import tvm

    from toolkit.stack import compat
    from toolkit.stack.numbering import PassNumbering, functions

    numbering = PassNumbering(compat.structural_hash()) if k is None else None

    @tvm.instrument.pass_instrument
    class Prefix:
        def __init__(self) -> None:
            self.names: list[str] = []
            self.numbers: list[int] = []  # per unit, its pass number (k None only)
            self.skipped: list[int] = []
            self.before = self.after = None
            self._inside = 0  # > 0 while a unit runs: its nested passes belong to it
            self._stack: list[int | None] = []  # per running pass: its unit index, if a unit
            self._next: int | None = None

        def should_run(self, mod: Any, info: Any) -> bool:
            self._next = None
            if info.name in wrappers or self._inside:
                return True
            i = len(self.names)
            self.names.append(info.name)
            run = k is None or i < k or info.name in required
            if run:
                self._next = i
            else:
                self.skipped.append(i)
            return run

        def run_before_pass(self, mod: Any, info: Any) -> None:
            if numbering is not None:
                number = numbering.start(functions(mod))[1]
                if self._next is not None:
                    self.numbers.append(number)
            self._stack.append(self._next)
            if self._next is not None:
                self._inside += 1
                if self._next == diff_unit:
                    self.before = mod.script()
            self._next = None

        def run_after_pass(self, mod: Any, info: Any) -> None:
            if numbering is not None:
                numbering.end(functions(mod))
            unit = self._stack.pop()
            if unit is not None:
                self._inside -= 1
                if unit == diff_unit:
                    self.after = mod.script()

    return Prefix()


def probe(wl: Any, target: str, k: int | None, required: Sequence[str],
          baseline: str | None = None, save: str | None = None, diff_unit: int | None = None,
          seed: int = 0, rtol: float = 1e-3, atol: float = 1e-4,
          wrappers: frozenset[str] = CONTAINERS) -> dict[str, Any]:
    """Compile a loaded workload with the prefix ``k`` (None: every pass), run it, compare."""
    import numpy as np
    import tvm

    from toolkit import stack

    inst = prefix_instrument(k, set(required), diff_unit, wrappers)
    result: dict[str, Any] = {"k": k}
    try:
        compiled = stack.compile(wl, target, instruments=[inst])
        inputs = wl.make_inputs(seed)
        outputs = stack.run(compiled, inputs).outputs
    except TvmFailure as e:
        result.update(status=PASS_NO_COMPILE, detail=str(e).splitlines()[0])
    else:
        expected = wl.reference_outputs(inputs)
        against = "reference"
        if expected is None and baseline and Path(baseline).exists():
            with np.load(baseline) as data:
                expected = [data[f"arr_{i}"] for i in range(len(data.files))]
            against = "prefix 0"
        if save:
            np.savez(save, *outputs)
        result["compared"] = expected is not None
        if expected is None:
            result.update(status=GOOD, detail="baseline saved (no reference)")
        else:
            cmp = stack.compare(outputs, expected, against, rtol, atol)
            result.update(status=GOOD if cmp.ok else BAD,
                          detail=f"{'matches' if cmp.ok else 'differs from'} {against}: max abs "
                                 f"err {cmp.max_abs:.3g}, max rel err {cmp.max_rel:.3g}")
    result.update(units=inst.names, skipped=inst.skipped, tvm=tvm.__version__,
                  numbers=inst.numbers if k is None else None,
                  before=inst.before, after=inst.after)
    return result


def _forked(fn: Callable[[], dict[str, Any]], timeout: float | None) -> dict[str, Any]:
    """Run ``fn`` in a forked child: skipping passes can crash TVM, and the workload stays
    loaded in the parent (importing TVM is most of a probe's cost). The result goes through
    a file: a module's text can be more than a pipe holds while the child is waited for."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        def work() -> None:
            try:
                Path(out.name).write_text(json.dumps(fn()))
            except BaseException as e:  # noqa: BLE001 - reported to the parent, never raised
                Path(out.name).write_text(json.dumps(
                    {"status": PASS_NO_COMPILE, "detail": f"{type(e).__name__}: {e}"[:300]}))

        ended = fork_and_wait(work, timeout)
        if ended.timed_out:
            return {"status": PASS_NO_COMPILE, "detail": f"timed out after {timeout:g}s"}
        if ended.signal is not None:
            return {"status": PASS_NO_COMPILE,
                    "detail": f"the compile crashed ({signal_name(ended.signal)})"}
        if ended.ended_early:  # its file may be empty or half written
            return {"status": PASS_NO_COMPILE, "detail": f"the compile ended its process "
                                                         f"(os._exit({ended.code})) early"}
        return json.loads(Path(out.name).read_text())


def serve(workload: str, target: str, seed: int, rtol: float, atol: float,
          timeout: float | None) -> int:
    """Answer probe requests (JSON lines on stdin) with results (marked lines on stdout)."""
    from toolkit.stack import workload as workloads

    wl = workloads.load(workload, seed=seed)
    wrappers = containers(wl.pipeline)
    for line in sys.stdin:
        req = json.loads(line)
        out = _forked(lambda req=req: probe(
            wl, target, req.get("k"), req.get("required", []), req.get("baseline"),
            req.get("save"), req.get("diff_unit"), seed, rtol, atol, wrappers), timeout)
        out.setdefault("k", req.get("k"))
        sys.stdout.write(PASS_RESULT_MARKER + json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


def _main(argv: Sequence[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m toolkit.bisect.in_tvm.passes serve")
    p.add_argument("mode", choices=["serve"])
    p.add_argument("--workload", required=True)
    p.add_argument("--target", default="llvm")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--timeout", type=float, default=None)
    a = p.parse_args(argv)
    return serve(a.workload, a.target, a.seed, a.rtol, a.atol, a.timeout)

if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
