"""Function bisection's target-side half: which kernel breaks the check, then which pass.

When the check fails even with no optional pass (a wrong legalization, a dlight rule, a
fork's required pass), pass bisection has nothing to skip. Here the workload is lowered twice
through its Relax pipeline - as it is (bad) and with a known-good pipeline (``--good-pipeline``:
the same TVM with the suspect legalization or pass left out) - and PrimFuncs of the good module
are swapped into the bad one, half of the differing ones at a time, each hybrid built the rest
of the way and run against the reference, until one kernel is left whose bad code alone
breaks the check; it stands when, checked again twice, the bad module still fails and the
one with that kernel swapped in still passes (any module checked two ways makes the search
*flaky*, never an answer). Then both lowerings run again under an instrument that notes
every pass changing a PrimFunc; the first such change where the two sides' PrimFuncs differ
names the pass, and its texts give the IR diff.

Only kernels both sides call alike can be swapped, so the good pipeline must lower the
workload to the same kernels: one that fuses where the workload's pipeline fuses (TVM's
``zero``), or not (``default``, which on CPUs does not fuse). ``--good-pipeline auto`` (the
default) lowers with every pipeline of the TVM and takes the one whose kernels are called
most like the bad lowering's, and says so; none alike is a stop, never a silent empty search.

The good side may be another TVM (``tk bisect functions --python PY``: a release in a venv,
say): then ``PY -m toolkit.bisect.in_tvm.functions --good-side DIR`` lowers and checks the workload
there first and writes its kernels' TVMScript, after the pipeline and after every pass that
changed one, into ``DIR/good.json`` (its outputs too when the workload has no reference;
every pipeline's, for ``auto``);
the search runs in the TVM under test with ``--good-from DIR``, parsing those texts into
its own PrimFuncs. A kernel whose text this TVM cannot parse is not swappable.

Run by ``toolkit.bisect.functions`` as ``python -m toolkit.bisect.in_tvm.functions`` in the build's
environment; the result is one JSON line marked ``FUNCS_RESULT_MARKER`` on stdout.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toolkit import stack
from toolkit.bisect.protocol import AUTO_PIPELINE, FUNCS_RESULT_MARKER, FunctionBisection
from toolkit.errors import TvmFailure, UserError
from toolkit.stack import compat
from toolkit.stack import target as targets
from toolkit.stack.workload import TIR, Workload


def relax_pipeline(wl: Workload, options: stack.CompileOptions, target: Any) -> Any:
    """The Relax pipeline a compile with these options runs, as a pass (tvm.compile's rule:
    a name means the target's default for GPUs, ``relax.get_pipeline`` otherwise)."""
    from tvm import relax

    chosen = stack._pipelines(wl, options, target).get("relax_pipeline", "default")
    if not isinstance(chosen, str):
        return chosen
    if chosen == "default" and "gpu" in target.keys and hasattr(relax, "get_default_pipeline"):
        return relax.get_default_pipeline(target)
    return relax.get_pipeline(chosen)


def lower(wl: Workload, target: Any, options: stack.CompileOptions,
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


@dataclass
class OtherTvm:
    """One pipeline's lowering as another TVM made and checked it (``--good-side``), read back
    into this TVM: its kernels parsed from their TVMScript, its pass-by-pass changes as texts."""

    tvm: str
    pipeline: str
    ok: bool
    detail: str
    kernels: dict[str, str]  # name -> TVMScript after the pipeline
    steps: list[tuple[str, dict[str, str]]]  # pass -> the kernels' texts after it
    inputs: list[np.ndarray] | None = None  # with outputs: the good side's run, when the
    outputs: list[np.ndarray] | None = None  # workload has no reference of its own

    FILE = "good.json"
    ARRAYS = "outputs.npz"

    @classmethod
    def read(cls, directory: Path) -> list[OtherTvm]:
        """Every pipeline the other TVM lowered (one, unless it was asked for ``auto``)."""
        data = json.loads((directory / cls.FILE).read_text())
        sides = [cls(data["tvm"], s["pipeline"], s["ok"], s["detail"], s["kernels"],
                     [(name, funcs) for name, funcs in s["steps"]]) for s in data["sides"]]
        if (directory / cls.ARRAYS).exists():
            with np.load(directory / cls.ARRAYS) as arrays:
                for side, s in zip(sides, data["sides"], strict=True):
                    side.inputs = [arrays[f"in{i}"] for i in range(data["n_inputs"])]
                    side.outputs = [arrays[f"{side.pipeline}.out{i}"]
                                    for i in range(s["n_outputs"])]
        return sides


@dataclass
class Side:
    """A candidate good side: a pipeline's lowering of the workload, in this TVM (``module``)
    or in another one (``other``), with its kernels as this TVM's PrimFuncs."""

    pipeline: str
    kernels: dict[str, Any]
    module: Any = None
    other: OtherTvm | None = None

    def alike(self, bad: dict[str, Any]) -> int:
        """How many of the bad lowering's kernels this side has, called alike: what could be
        swapped. A pipeline that fuses where the workload's does not (or the reverse) shares
        none."""
        return sum(n in self.kernels and signature(self.kernels[n]) == signature(f)
                   for n, f in bad.items())


_parsed: dict[str, Any] = {}


def parse(text: str) -> Any:
    """A kernel's TVMScript from another TVM, as this TVM's PrimFunc (None: it cannot read
    it); each text is parsed once."""
    if text not in _parsed:
        import tvm

        try:
            _parsed[text] = tvm.script.from_source(text)
        except Exception:  # noqa: BLE001 - another generation's printer: not swappable
            _parsed[text] = None
    return _parsed[text]


class Flaky(Exception):
    """Two runs of the check on one module disagreed: the search cannot go on."""


def options(pipeline: str) -> stack.CompileOptions:
    """A compile through the Relax pipeline named (the good side's)."""
    return stack.CompileOptions(pipeline=pipeline)


class Search:
    def __init__(self, wl: Workload, target_spec: str, good_pipeline: str, seed: int = 0,
                 rtol: float = 1e-3, atol: float = 1e-4,
                 others: list[OtherTvm] | None = None) -> None:
        if wl.kind == TIR or wl.mod is None:
            raise UserError(f"{wl.source}: function bisection needs a Relax workload")
        known = stack._relax_pipelines()
        if others is None and good_pipeline not in (AUTO_PIPELINE, *known):
            raise UserError(f"--good-pipeline {good_pipeline!r} is not a Relax pipeline of this "
                            f"TVM (those are: {AUTO_PIPELINE}, {', '.join(known)})")
        # The good sides to lower: every pipeline of this TVM for auto, else the one named.
        self.pipelines = known if good_pipeline == AUTO_PIPELINE else [good_pipeline]
        resolved = targets.resolve(target_spec)
        self.wl, self.spec, self.target = wl, target_spec, resolved.tvm
        self.bad_options = stack.CompileOptions()
        self.inputs = wl.make_inputs(seed)
        self.rtol, self.atol = rtol, atol
        self.expected: list[Any] | None = wl.reference_outputs(self.inputs)
        self.others = others
        # What the check said of each module tried, by the good kernels swapped in.
        self._judged: dict[tuple[str, ...], list[tuple[bool, str]]] = {}
        self.result = FunctionBisection(wl.source, target_spec, good_pipeline)
        if others:
            self.result.good_tvm = others[0].tvm

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

    def sides(self) -> list[Side]:
        """The candidate good sides: this TVM's lowerings, or the other TVM's read back. With
        ``auto``, a pipeline that cannot lower the workload is no candidate."""
        if self.others is not None:
            return [Side(o.pipeline, {n: f for n, text in o.kernels.items()
                                      if (f := parse(text)) is not None}, other=o)
                    for o in self.others]
        found = []
        for name in self.pipelines:
            try:
                mod = lower(self.wl, self.target, options(name))
            except Exception:  # noqa: BLE001 - auto tries each; a named one fails loudly
                if len(self.pipelines) == 1:
                    raise
                continue
            found.append(Side(name, primfuncs(mod), module=mod))
        return found

    def choose(self, bad: dict[str, Any]) -> Side | None:
        """The good side: the one named, or (``auto``) the pipeline whose kernels are called
        most like the bad lowering's - ``zero`` when the workload's pipeline fuses, ``default``
        when it does not - ties going to the first; None when no pipeline shares a kernel."""
        r = self.result
        sides = self.sides()
        if r.good_pipeline != AUTO_PIPELINE:
            return sides[0]
        scored = [(side.alike(bad), side) for side in sides]
        tally = ", ".join(f"{side.pipeline} {n}" for n, side in scored) or "none lowers it"
        best = max(scored, key=lambda s: s[0], default=(0, None))
        if best[1] is None or best[0] == 0:
            self._stop(f"no Relax pipeline of {'TVM ' + r.good_tvm if self.others else 'this TVM'}"
                       f" lowers {r.workload} to kernels called like its own pipeline's "
                       f"({len(bad)} kernels; alike: {tally}): name a good side with "
                       "--good-pipeline, or another TVM's with --python")
            return None
        r.good_pipeline = best[1].pipeline
        r.good_choice = (f"{r.good_pipeline}, the pipeline whose kernels are called most like "
                         f"the workload's own (of its {len(bad)}, alike: {tally})")
        return best[1]

    def run(self) -> FunctionBisection:
        import tvm

        r = self.result
        r.tvm = tvm.__version__
        bad_mod = lower(self.wl, self.target, self.bad_options)
        bad = primfuncs(bad_mod)
        side = self.choose(bad)
        if side is None:
            return r
        if self.expected is None:
            if side.other is not None:  # another TVM's good side brought its outputs
                self.inputs, self.expected = side.other.inputs, side.other.outputs
            else:
                self.expected = stack.run(build_rest(self.wl, self.spec, self.target,
                                                     side.module), self.inputs).outputs
        ok, r.detail = self.check(bad_mod)
        if ok:
            return self._stop(f"the check passes with the workload's own pipeline ({r.detail})"
                              ": nothing to bisect")
        self._judge([], ok, r.detail)
        if side.other is None:
            ok, why = self.check(side.module)
            where = f"the good pipeline {r.good_pipeline!r}"
        else:
            ok, why = side.other.ok, side.other.detail
            where = f"TVM {side.other.tvm}'s pipeline {r.good_pipeline!r}"
        if not ok:
            return self._stop(f"the check fails with {where} too ({why}): it is not a "
                              "known-good side")
        good = side.kernels
        r.unswappable = sorted(n for n in bad
                               if n not in good or signature(good[n]) != signature(bad[n]))
        digest = compat.structural_hash()
        r.differing = sorted(n for n in set(bad) - set(r.unswappable)
                             if digest(good[n]) != digest(bad[n]))
        if not r.differing:
            return self._stop("the kernels both lowerings call alike are the same: the "
                              "difference is in the Relax functions or the kernels that cannot "
                              f"be swapped ({', '.join(r.unswappable) or 'none'})")
        try:
            if self._halve(bad_mod, good) is None:
                return r
        except Flaky:
            d = r.disagreements[-1]
            swapped = (f"the good {', '.join(d['good_kernels'])} swapped in"
                       if d["good_kernels"] else "its own kernels")
            r.kernel, r.candidates, r.status = None, [], "flaky"
            r.stop_reason = (f"the check is flaky: with {swapped}, the module "
                             f"{', then '.join(d['verdicts'])} - its outcome does not depend "
                             "on the kernels alone, so no kernel is to blame on this evidence")
            return r
        self._first_pass(side)
        return r

    def _halve(self, bad_mod: Any, good: dict[str, Any]) -> str | None:
        """Swap half the suspects in at a time until one kernel is left, then confirm it:
        the kernel, or None (stopped)."""
        r = self.result
        suspects = list(r.differing)
        if not self._fixes(bad_mod, good, suspects):
            r.candidates = suspects
            self._stop("swapping every differing kernel in does not fix the check")
            return None
        while len(suspects) > 1:
            half = suspects[:len(suspects) // 2]
            rest = suspects[len(suspects) // 2:]
            if self._fixes(bad_mod, good, half):
                suspects = half
            elif self._fixes(bad_mod, good, rest):
                suspects = rest
            else:
                r.candidates = suspects  # only together: more than one kernel is wrong
                self._stop("no single half of the differing kernels fixes the check")
                return None
        # Confirm, as commit and pass bisection do: the bad module fails again and the one
        # with the kernel swapped in passes again, twice each, the second time in reverse
        # order (a check that fails every other run then disagrees with itself).
        for names in ([], suspects, suspects, []):
            self._fixes(bad_mod, good, names, "confirm")
        r.kernel, r.confirmed = suspects[0], True
        return r.kernel

    def _fixes(self, bad_mod: Any, good: dict[str, Any], names: Sequence[str],
               phase: str = "search") -> bool:
        ok, detail = self.check(self.hybrid(bad_mod, good, names))
        self.result.probes.append({"good_kernels": list(names), "ok": ok, "detail": detail,
                                   "phase": phase})
        self._judge(names, ok, detail)
        return ok

    def _judge(self, names: Sequence[str], ok: bool, detail: str) -> None:
        """Keep what the check said of the module with ``names`` swapped in; saying otherwise
        than an earlier run of the same module stops the search (``Flaky``)."""
        runs = self._judged.setdefault(tuple(sorted(names)), [])
        runs.append((ok, detail))
        if len({passed for passed, _ in runs}) > 1:
            self.result.disagreements.append({
                "good_kernels": sorted(names),
                "verdicts": ["passed" if passed else "failed" for passed, _ in runs],
                "details": [why for _, why in runs]})
            raise Flaky

    def _first_pass(self, side: Side) -> None:
        """The first pass after which the PrimFuncs of the two lowerings differ."""
        r = self.result
        good = Changes()
        bad = Changes()
        if side.other is None:
            lower(self.wl, self.target, options(side.pipeline), [changes_instrument(good)])
        else:
            good.read(side.other.steps)
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
    """A kernel's TVMScript, ending in a newline (so one kernel's diff never runs into the
    next one's header)."""
    if entry is None:
        return ""
    script = entry[1] if isinstance(entry[1], str) else entry[1].script()
    return script if script.endswith("\n") else script + "\n"


class Changes:
    """Every pass that changed a PrimFunc, with the PrimFuncs (hash, function) after it."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, dict[str, tuple[int, Any]]]] = []
        self.last: dict[str, int] = {}

    def read(self, steps: Sequence[tuple[str, dict[str, str]]]) -> None:
        """Another TVM's changes, from their texts: hashed as this TVM parses them (a text it
        cannot parse keeps a hash of its own, so it differs), kept as the texts for the diff."""
        digest = compat.structural_hash()
        for name, texts in steps:
            funcs = {}
            for n, t in texts.items():
                f = parse(t)
                funcs[n] = (digest(f) if f is not None else hash(t), t)
            self.steps.append((name, funcs))

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


def good_side(wl: Workload, target_spec: str, good_pipeline: str, seed: int, rtol: float,
              atol: float, out: Path) -> None:
    """``--good-side``: lower and check WORKLOAD here with the pipeline named (every one, for
    ``auto``: the search, in another TVM, chooses), the good side of a search that runs in
    another TVM; write what that search needs into ``out`` (see ``OtherTvm``)."""
    import tvm

    search = Search(wl, target_spec, good_pipeline, seed, rtol, atol)
    sides: list[dict[str, Any]] = []
    arrays: dict[str, Any] = {}
    for name in search.pipelines:
        changes = Changes()
        try:
            mod = lower(wl, search.target, options(name), [changes_instrument(changes)])
            side: dict[str, Any] = {"pipeline": name}
            if search.expected is None:
                outputs = stack.run(build_rest(wl, target_spec, search.target, mod),
                                    search.inputs).outputs
                arrays.update({f"{name}.out{i}": a for i, a in enumerate(outputs)})
                side.update(ok=True, detail="its outputs are the expected ones (no reference)",
                            n_outputs=len(outputs))
            else:
                side["ok"], side["detail"] = search.check(mod)
        except Exception:  # noqa: BLE001 - auto tries each; a named one fails loudly
            if len(search.pipelines) == 1:
                raise
            continue
        side["kernels"] = {n: f.script() for n, f in primfuncs(mod).items()}
        side["steps"] = [[step, {n: f.script() for n, (_, f) in funcs.items()}]
                         for step, funcs in changes.steps]
        sides.append(side)
    if arrays:
        np.savez(out / OtherTvm.ARRAYS, **{f"in{i}": a for i, a in enumerate(search.inputs)},
                 **arrays)
    (out / OtherTvm.FILE).write_text(json.dumps(
        {"tvm": tvm.__version__, "n_inputs": len(search.inputs), "sides": sides}))


def _main(argv: Sequence[str]) -> int:
    import argparse

    from toolkit.stack import workload as workloads

    p = argparse.ArgumentParser(prog="python -m toolkit.bisect.in_tvm.functions")
    p.add_argument("--workload", required=True)
    p.add_argument("--target", default="llvm")
    p.add_argument("--good-pipeline", default=AUTO_PIPELINE)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    sides = p.add_mutually_exclusive_group()
    sides.add_argument("--good-side", type=Path, metavar="DIR",
                       help="lower and check the good side here; write it into DIR")
    sides.add_argument("--good-from", type=Path, metavar="DIR",
                       help="search with the good side another TVM wrote into DIR")
    a = p.parse_args(argv)
    try:
        wl = workloads.load(a.workload, seed=a.seed)
        if a.good_side is not None:
            good_side(wl, a.target, a.good_pipeline, a.seed, a.rtol, a.atol, a.good_side)
            out: dict[str, Any] = {"good_side": str(a.good_side)}
        else:
            others = OtherTvm.read(a.good_from) if a.good_from is not None else None
            out = asdict(Search(wl, a.target, a.good_pipeline, a.seed, a.rtol, a.atol,
                                others).run())
    except (UserError, TvmFailure) as e:
        out = {"error": str(e).splitlines()[0], "user_error": isinstance(e, UserError)}
    sys.stdout.write(FUNCS_RESULT_MARKER + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
