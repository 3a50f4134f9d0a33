"""Pass bisection: the search over pass prefixes, then a real miscompiling pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.bisect import events as ev
from toolkit.bisect.passes import PassBisector, markdown
from toolkit.bisect.protocol import PASS_NO_COMPILE as NO_COMPILE

FIXTURE = Path(__file__).parent / "fixtures" / "bisect" / "miscompile.py"
UNITS = ["Canon", "Fold", "Lower", "Fuse", "Bug", "Tidy", "Codegen"]
# Their pass numbers in a full compile: containers and nested passes take numbers between.
NUMBERS = [1, 2, 4, 7, 9, 10, 12]


def fake_pipeline(no_compile_at=(), crash_without=("Lower", "Codegen")):
    """A pipeline where Bug miscompiles and some passes are needed to compile at all."""
    calls = []

    def run_probe(k, required, diff_unit=None):
        calls.append(k)
        ran = [u for i, u in enumerate(UNITS) if k is None or i < k or u in required]
        out = {"k": k, "units": UNITS, "tvm": "fake", "numbers": NUMBERS if k is None else None}
        if any(u not in ran for u in crash_without) or k in no_compile_at:
            return {**out, "status": NO_COMPILE, "detail": "probe killed by signal 11"}
        bad = "Bug" in ran
        out.update(status="bad" if bad else "good", detail="differs" if bad else "matches")
        if diff_unit is not None:
            out.update(before="x = 1.5\n", after="x = 2.5\n")
        return out

    return run_probe, calls


def flaky_pipeline(pattern):
    """Bug miscompiles on the runs ``pattern`` says (True: bad), one run after another."""
    runs = iter(pattern)
    run_probe, calls = fake_pipeline()

    def probe(k, required, diff_unit=None):
        out = run_probe(k, required, diff_unit)
        if out["status"] == "bad":
            bad = next(runs)
            out.update(status="bad" if bad else "good", detail="differs" if bad else "matches")
        return out

    return probe, calls


# Steady, the probes are: every pass, 0, 3, 5, 4, then the confirmation's 4, 5, 5, 4; Bug
# (unit 4) runs in those above 4.
@pytest.mark.parametrize("pattern", [
    [True, False, True, True],  # prefix 5 lucky: 6 looks first bad; 5 bad when re-run
    [True, False, False, False, False],  # 5, 6 lucky: every pass good when re-run
    [True, True, False],  # the search is right; the culprit's prefix good when re-run
    [True, True, True, False],  # ... good the second time it is re-run
])
def test_a_flaky_check_is_never_a_culprit(pattern):
    """The same prefix judged bad, then good: flaky, with the prefix, never a culprit."""
    run_probe, _ = flaky_pipeline(pattern)
    r = PassBisector("w.py", "llvm", run_probe=run_probe, required=["Lower", "Codegen"]).run()
    assert r.status == "flaky" and r.culprit is None and r.candidates == []
    d = r.disagreements[-1]
    assert set(d.verdicts) == {"good", "bad"}
    text = markdown(r)
    assert text.startswith("# Pass bisection: the check is flaky - no culprit\n")
    assert f"- Runs of {r.prefix(d.k)}: " in text and "First bad pass" not in text


def test_a_steady_culprit_is_confirmed():
    run_probe, calls = fake_pipeline()
    r = PassBisector("w.py", "llvm", run_probe=run_probe, required=["Lower", "Codegen"]).run()
    assert r.culprit_name == "Bug" and r.confirmed is True and r.disagreements == []
    c = r.culprit + 1  # the culprit's prefix; the one before it, twice each
    assert calls[-4:] == [c - 1, c, c, c - 1]


def test_learns_required_passes_and_finds_the_bug():
    run_probe, calls = fake_pipeline()
    r = PassBisector("w.py", "llvm", run_probe=run_probe).run()
    assert r.culprit_name == "Bug" and r.culprit == 4
    assert set(r.learned) == {"Lower", "Codegen"}
    assert "+x = 2.5" in r.diff
    text = markdown(r)
    assert text.startswith("# First bad pass: #9 Bug\n")  # its pass number, not its unit index
    assert "tk dump-ir show ir-dump --pass 9 --diff" in text


def test_the_pass_search_reports_typed_events():
    run_probe, calls = fake_pipeline()
    seen = []
    PassBisector("w.py", "llvm", run_probe=run_probe, events=seen.append).run()
    assert seen[0] == ev.PassSearchStarted("w.py", "llvm")
    probed = [e for e in seen if isinstance(e, ev.PrefixProbed)]
    assert [e.k for e in probed] == calls  # one event per probe, in order
    assert probed[0].k is None and probed[0].status == "bad"
    assert ev.PassesListed(len(UNITS)) in seen
    learned = [e.name for e in seen if isinstance(e, ev.RequiredLearned)]
    assert set(learned) == {"Lower", "Codegen"}
    windows = [e for e in seen if isinstance(e, ev.PassWindow)]
    assert windows and all(w.lo < w.trying < w.hi for w in windows)
    confirming = seen.index(ev.PassConfirming(UNITS.index("Bug") + 1))
    assert [e.k for e in seen[confirming:] if isinstance(e, ev.PrefixProbed)] == [4, 5, 5, 4]


def test_listed_required_passes_need_no_learning():
    run_probe, calls = fake_pipeline()
    r = PassBisector("w.py", "llvm", run_probe=run_probe, required=["Lower", "Codegen"]).run()
    assert r.culprit_name == "Bug" and r.learned == []
    assert len(calls) <= 9  # every pass, none, ~log2(7), the confirmation (and the diff)


def test_prefix_that_does_not_compile_is_not_a_verdict():
    run_probe, _ = fake_pipeline(no_compile_at=(4,))
    r = PassBisector("w.py", "llvm", run_probe=run_probe, required=["Lower", "Codegen"],
                     learn=False).run()
    assert 4 in r.no_compile
    assert r.culprit is None and [UNITS[i] for i in r.candidates] == ["Fuse", "Bug"]
    assert "- #7 Fuse, #9 Bug" in markdown(r)


def test_nothing_compiles_without_learning_stops_clearly():
    run_probe, _ = fake_pipeline()
    r = PassBisector("w.py", "llvm", run_probe=run_probe, learn=False).run()
    assert r.status == "stopped" and "--required" in r.stop_reason


@pytest.mark.slow
def test_finds_the_miscompiling_pass_of_a_real_pipeline(tk, tmp_path):
    r = tk("bisect", "passes", str(FIXTURE), "--target", "llvm", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["culprit_name"] == "FoldBiasBug"
    assert '-            z: R.Tensor((4, 8), dtype="float32") = R.add(y, R.const(1.5, ' \
        '"float32"))' in data["diff"]
    assert "R.const(2.5" in data["diff"]
    assert len(data["probes"]) <= 12
    assert "every pass" in r.stderr  # progress

    # The same compile under dump-ir gives the culprit the same number: the pipeline's
    # wrappers (sequential, _pipeline) and nested passes count in both.
    number = data["culprit_number"]
    dump = tmp_path / "dump"
    assert tk("dump-ir", str(FIXTURE), "--target", "llvm", "-o", str(dump)).returncode == 0
    records = json.loads((dump / "index.json").read_text())["passes"]
    assert [p["seq"] for p in records if p["name"] == "FoldBiasBug"] == [number]
    assert number != data["culprit"]  # the unit index is not what is printed
    shown = tk("dump-ir", "show", str(dump), "--pass", str(number), "--diff")
    assert shown.returncode == 0, shown.stderr
    assert f"(after #{number} FoldBiasBug)" in shown.stdout
    listed = tk("dump-ir", "show", str(dump)).stdout.splitlines()[number].split()
    assert listed[0] == str(number) and "FoldBiasBug" in listed
    text = tk("bisect", "passes", str(FIXTURE), "--target", "llvm").stdout
    assert text.startswith(f"# First bad pass: #{number} FoldBiasBug\n")
    assert f"tk dump-ir show ir-dump --pass {number} --diff" in text


# The pass scaffold's shape (toolkit/data/ext_template_pass's pipeline.py): a fork's pipeline
# is a named Sequential holding its passes and TVM's own pipelines.
NAMED_PIPELINE = """
pipeline = tvm.transform.Sequential([
    relax.transform.CanonicalizeBindings(), fold_bias_bug, relax.pipeline.zero_pipeline(),
    relax.pipeline.default_build_pipeline(),
], name="myfork.pipeline")
"""


@pytest.mark.slow
def test_the_passes_nested_in_a_named_sequential_are_units(tk, tmp_path):
    """Learned as one required pass, a named pipeline hid the buggy pass inside it: the
    bisection could never skip it. Its passes (and zero_pipeline's) are units now."""
    text = FIXTURE.read_text()
    named = tmp_path / "named.py"
    named.write_text(text[:text.index("# The fork's pipeline")] + NAMED_PIPELINE)
    # A cache of its own: no passes learned as required by another test's run.
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("bisect", "passes", str(named), "--target", "llvm", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["culprit_name"] == "FoldBiasBug"
    assert "myfork.pipeline" not in data["units"] + data["required"]
    assert {"FuseOps", "FuseTIR"} <= set(data["units"])  # zero_pipeline's, opened too
    dump = tmp_path / "dump"
    assert tk("dump-ir", str(named), "--target", "llvm", "-o", str(dump), env=env).returncode == 0
    records = json.loads((dump / "index.json").read_text())["passes"]
    assert [p["seq"] for p in records if p["name"] == "FoldBiasBug"] == [data["culprit_number"]]


# A pass that miscompiles every other time it runs (a run counter beside the workload: each
# probe is a process of its own), as a pass that races or reads uninitialised memory would.
FLAKY_PIPELINE = """
from pathlib import Path

_RUNS = Path(__file__).with_name("runs")


@tvm.transform.module_pass(opt_level=0, name="FlakyBump")
def flaky_bump(mod, ctx):
    runs = int(_RUNS.read_text()) if _RUNS.exists() else 0
    _RUNS.write_text(str(runs + 1))
    if runs % 2 == 0:
        for gv, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                mod[gv] = _Bump(mod).visit_expr(func)
    return mod


pipeline = tvm.transform.Sequential([
    relax.transform.CanonicalizeBindings(), relax.transform.FoldConstant(), flaky_bump,
    relax.transform.LegalizeOps(), relax.pipeline.default_build_pipeline(),
])
"""


@pytest.mark.slow
def test_a_real_flaky_pass_makes_a_flaky_bisection(tk, tmp_path):
    """The issue's run named a culprit, exit 0, though its own log judged one prefix bad and
    then good: now the bisection is flaky (exit 3) and says which prefix disagreed."""
    text = FIXTURE.read_text()
    flaky = tmp_path / "flaky.py"
    flaky.write_text(text[:text.index("# The fork's pipeline")] + FLAKY_PIPELINE)
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("bisect", "passes", str(flaky), "--target", "llvm", "--json", env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "flaky" and data["culprit"] is None and data["dump_ir"] is None
    d = data["disagreements"][0]
    assert sorted(set(d["verdicts"])) == ["bad", "good"]
    judged = [p["status"] for p in data["probes"] if p["k"] == d["k"]]
    assert judged == d["verdicts"]  # the log shows the same prefix judged both ways
    (tmp_path / "runs").unlink()
    r = tk("bisect", "passes", str(flaky), "--target", "llvm", env=env)
    assert r.returncode == 3
    assert r.stdout.startswith("# Pass bisection: the check is flaky - no culprit\n")
    assert "the check is flaky: " in r.stdout and "First bad pass" not in r.stdout


def test_without_reference_every_prefix_is_held_to_prefix_zero():
    run_probe, calls = fake_pipeline()
    seen_baseline = []

    def no_reference(k, required, diff_unit=None):
        out = run_probe(k, required, diff_unit)
        if k == 0:
            seen_baseline.append(True)
        if not seen_baseline and out["status"] != NO_COMPILE:
            out.update(status="good", detail="baseline saved (no reference)", compared=False)
        return out

    r = PassBisector("w.py", "llvm", run_probe=no_reference, required=["Lower", "Codegen"]).run()
    assert r.culprit_name == "Bug"
    assert calls[:3] == [None, 0, None]  # every pass again, once prefix 0 set the baseline


def test_a_probe_that_ends_its_process_early_is_no_compile():
    """A compile that calls os._exit(0) (a pass, a library) leaves no result file: it is a
    prefix that does not compile, never a server that dies reading an empty file."""
    import os

    from toolkit.bisect.in_tvm.passes import _forked

    out = _forked(lambda: os._exit(0), None)
    assert out == {"status": NO_COMPILE,
                   "detail": "the compile ended its process (os._exit(0)) early"}
    assert _forked(lambda: {"status": "good"}, None) == {"status": "good"}
