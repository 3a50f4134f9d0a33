"""Function bisection's target-side half: which kernel breaks the check, then which pass.

When the check fails even with no optional pass (a wrong legalization, a dlight rule, a
fork's required pass), pass bisection has nothing to skip. Here the workload is lowered twice
through its Relax pipeline - as it is (bad) and with a known-good pipeline (``--good-pipeline``:
the same TVM with the suspect legalization or pass left out) - and PrimFuncs of the good module
are swapped into the bad one, half of the differing ones at a time, each hybrid built the rest
of the way and run against the reference, until one kernel is left whose bad code alone
breaks the check. Then both lowerings run again under an instrument that notes every pass
changing a PrimFunc; the first such change where the two sides' PrimFuncs differ names the
pass, and its texts give the IR diff.

Run by ``toolkit.bisect.functions`` as ``python -m toolkit.tvm_side.funcs`` in the build's
environment; the result is one JSON line marked ``FUNCS_RESULT_MARKER`` on stdout.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from toolkit.bisect.functions import FunctionBisection
from toolkit.errors import TvmFailure, UserError
from toolkit.process import FUNCS_RESULT_MARKER
from toolkit.tvm_side import compat, stack
from toolkit.tvm_side import target as targets
from toolkit.tvm_side.workload import TIR, Workload


def relax_pipeline(wl: Workload, options: stack.BuildOptions, target: Any) -> Any:
    """The Relax pipeline a compile with these options runs, as a pass (tvm.compile's rule:
    a name means the target's default for GPUs, ``relax.get_pipeline`` otherwise)."""
    from tvm import relax

    chosen = stack._pipelines(wl, options, target).get("relax_pipeline", "default")
    if not isinstance(chosen, str):
        return chosen
    if chosen == "default" and "gpu" in target.keys and hasattr(relax, "get_default_pipeline"):
        return relax.get_default_pipeline(target)
    return relax.get_pipeline(chosen)


def lower(wl: Workload, target: Any, options: stack.BuildOptions,
          instruments: Sequence[Any] = ()) -> Any:
    """The workload's module after its Relax pipeline: Relax functions calling PrimFuncs."""
    import tvm

    pipeline = relax_pipeline(wl, options, target)
    with tvm.transform.PassContext(opt_level=options.opt_level, instruments=list(instruments),
                                   config=dict(options.pass_config)), target:
        return pipeline(wl.mod)


def primfuncs(mod: Any) -> dict[str, Any]:
    prim = compat.tir().PrimFunc
    return {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, prim)}


def build_rest(wl: Workload, target_spec: str, target: Any, mod: Any) -> stack.Compiled:
    """Build a lowered module the rest of the way (VM codegen and the TIR pipeline only)."""
    import tvm

    try:
        with tvm.transform.PassContext(opt_level=3):
            exe = compat.compile_fn()(mod, target=target, relax_pipeline=None)
    except Exception as e:  # noqa: BLE001 - a hybrid that does not build is a verdict too
        raise TvmFailure(
            f"building the hybrid module failed: {str(e).splitlines()[0][:200]}") from e
    return stack.Compiled(wl, target_spec, target, exe, 0.0)


class Search:
    def __init__(self, wl: Workload, target_spec: str, good_pipeline: str, seed: int = 0,
                 rtol: float = 1e-3, atol: float = 1e-4) -> None:
        if wl.kind == TIR or wl.mod is None:
            raise UserError(f"{wl.source}: function bisection needs a Relax workload")
        known = stack._relax_pipelines()
        if good_pipeline not in known:
            raise UserError(f"--good-pipeline {good_pipeline!r} is not a Relax pipeline of this "
                            f"TVM (those are: {', '.join(known)})")
        resolved = targets.resolve(target_spec)
        self.wl, self.spec, self.target = wl, target_spec, resolved.tvm
        self.good_options = stack.BuildOptions(pipeline=good_pipeline)
        self.bad_options = stack.BuildOptions()
        self.inputs = wl.make_inputs(seed)
        self.rtol, self.atol = rtol, atol
        self.expected: list[Any] | None = wl.reference_outputs(self.inputs)
        self.result = FunctionBisection(wl.source, target_spec, good_pipeline)

    def check(self, mod: Any) -> tuple[bool, str]:
        try:
            outputs = stack.run(build_rest(self.wl, self.spec, self.target, mod),
                                self.inputs).outputs
        except TvmFailure as e:
            return False, str(e).splitlines()[0]
        assert self.expected is not None
        against = "reference" if self.wl.reference is not None else "the good compile"
        cmp = stack.compare(outputs, self.expected, against, self.rtol, self.atol)
        return cmp.ok, (f"{'matches' if cmp.ok else 'differs from'} {against}: max abs err "
                        f"{cmp.max_abs:.3g}")

    def hybrid(self, bad: Any, good: dict[str, Any], names: Sequence[str]) -> Any:
        import tvm

        mod = bad.clone() if hasattr(bad, "clone") else tvm.IRModule(dict(bad.functions.items()))
        for name in names:
            mod[mod.get_global_var(name)] = good[name]
        return mod

    def run(self) -> FunctionBisection:
        import tvm

        r = self.result
        r.tvm = tvm.__version__
        good_mod = lower(self.wl, self.target, self.good_options)
        bad_mod = lower(self.wl, self.target, self.bad_options)
        if self.expected is None:
            self.expected = stack.run(build_rest(self.wl, self.spec, self.target, good_mod),
                                      self.inputs).outputs
        ok, r.detail = self.check(bad_mod)
        if ok:
            return self._stop(f"the check passes with the workload's own pipeline ({r.detail})"
                              ": nothing to bisect")
        ok, why = self.check(good_mod)
        if not ok:
            return self._stop(f"the check fails with the good pipeline {r.good_pipeline!r} "
                              f"too ({why}): it is not a known-good side")
        good, bad = primfuncs(good_mod), primfuncs(bad_mod)
        r.unswappable = sorted(n for n in bad
                               if n not in good or signature(good[n]) != signature(bad[n]))
        digest = compat.structural_hash()
        r.differing = sorted(n for n in set(bad) - set(r.unswappable)
                             if digest(good[n]) != digest(bad[n]))
        if not r.differing:
            return self._stop("the kernels both lowerings call alike are the same: the "
                              "difference is in the Relax functions or the kernels that cannot "
                              f"be swapped ({', '.join(r.unswappable) or 'none'})")
        suspects = list(r.differing)
        if not self._fixes(bad_mod, good, suspects):
            r.candidates = suspects
            return self._stop("swapping every differing kernel in does not fix the check")
        while len(suspects) > 1:
            half = suspects[:len(suspects) // 2]
            rest = suspects[len(suspects) // 2:]
            if self._fixes(bad_mod, good, half):
                suspects = half
            elif self._fixes(bad_mod, good, rest):
                suspects = rest
            else:
                r.candidates = suspects  # only together: more than one kernel is wrong
                return self._stop("no single half of the differing kernels fixes the check")
        r.kernel = suspects[0]
        self._first_pass()
        return r

    def _fixes(self, bad_mod: Any, good: dict[str, Any], names: Sequence[str]) -> bool:
        ok, detail = self.check(self.hybrid(bad_mod, good, names))
        self.result.probes.append({"good_kernels": list(names), "ok": ok, "detail": detail})
        return ok

    def _first_pass(self) -> None:
        """The first pass after which the PrimFuncs of the two lowerings differ."""
        r = self.result
        good = Changes()
        bad = Changes()
        lower(self.wl, self.target, self.good_options, [changes_instrument(good)])
        lower(self.wl, self.target, self.bad_options, [changes_instrument(bad)])
        for i, ((_, g_funcs), (b_name, b_funcs)) in enumerate(zip(good.steps, bad.steps)):
            names = sorted(n for n in {*g_funcs, *b_funcs}
                           if g_funcs.get(n, (None,))[0] != b_funcs.get(n, (None,))[0])
            if names:
                r.pass_name, r.pass_index, r.pass_kernels = b_name, i, names
                r.diff = "".join(
                    "".join(difflib.unified_diff(
                        text(g_funcs.get(n)).splitlines(True), text(b_funcs.get(n)).splitlines(True),
                        f"good {n} after {good.steps[i][0]}", f"bad {n} after {b_name}"))
                    for n in names)
                return

    def _stop(self, reason: str) -> FunctionBisection:
        self.result.status, self.result.stop_reason = "stopped", reason
        return self.result


def signature(func: Any) -> list[str]:
    """How a kernel is called: its parameters' kinds, in order (the Relax call that uses it
    fixes the buffers' shapes, the same on both sides; what differs is how many it takes)."""
    return [str(param.dtype) for param in func.params]


def text(entry: tuple[int, Any] | None) -> str:
    return "" if entry is None else entry[1].script()


class Changes:
    """Every pass that changed a PrimFunc, with the PrimFuncs (hash, function) after it."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, dict[str, tuple[int, Any]]]] = []
        self.last: dict[str, int] = {}

    def after(self, mod: Any, name: str) -> None:
        digest = compat.structural_hash()
        funcs = {n: (digest(f), f) for n, f in primfuncs(mod).items()}
        hashes = {n: h for n, (h, _) in funcs.items()}
        if hashes != self.last:  # a container after its children changes nothing new
            self.steps.append((name, funcs))
            self.last = hashes


def changes_instrument(changes: Changes) -> Any:
    import tvm

    @tvm.instrument.pass_instrument
    class KernelChanges:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            changes.after(mod, info.name)

    return KernelChanges()


def _main(argv: Sequence[str]) -> int:
    import argparse

    from toolkit.tvm_side import workload as workloads

    p = argparse.ArgumentParser(prog="python -m toolkit.tvm_side.funcs")
    p.add_argument("--workload", required=True)
    p.add_argument("--target", default="llvm")
    p.add_argument("--good-pipeline", default="default")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    a = p.parse_args(argv)
    try:
        wl = workloads.load(a.workload, seed=a.seed)
        out = asdict(Search(wl, a.target, a.good_pipeline, a.seed, a.rtol, a.atol).run())
    except (UserError, TvmFailure) as e:
        out = {"error": str(e).splitlines()[0], "user_error": isinstance(e, UserError)}
    sys.stdout.write(FUNCS_RESULT_MARKER + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
