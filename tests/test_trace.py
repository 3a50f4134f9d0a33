"""``tk trace``: where one compile spends its time, as a Chrome trace and as tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_dumpir import CUSTOM_PASS

pytest.importorskip("tvm")


def x_events(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


EPS = 1e-3  # µs: span ends are rounded to the nanosecond


def end(e: dict) -> float:
    return e["ts"] + e["dur"]


def inside(e: dict, p: dict) -> bool:
    return p["ts"] - EPS <= e["ts"] and end(e) <= end(p) + EPS


def check_nesting(events: list[dict]) -> None:
    """On each track, two spans are disjoint or one lies inside the other."""
    for tid in {e["tid"] for e in events}:
        track = sorted((e for e in events if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
        for i, a in enumerate(track):
            for b in track[i + 1:]:
                if b["ts"] >= end(a) - EPS:
                    break
                assert end(b) <= end(a) + EPS, f"{b['name']} starts inside {a['name']} and ends after it"


def parents(events: list[dict]) -> dict[int, dict | None]:
    """Each event's innermost enclosing event on its track (by id)."""
    out: dict[int, dict | None] = {}
    for tid in {e["tid"] for e in events}:
        open_: list[dict] = []
        for e in sorted((e for e in events if e["tid"] == tid),
                        key=lambda e: (e["ts"], -e["dur"])):
            while open_ and not inside(e, open_[-1]):
                open_.pop()
            out[id(e)] = open_[-1] if open_ else None
            open_.append(e)
    return out


@pytest.fixture(scope="module")
def mlp_trace(tmp_path_factory: pytest.TempPathFactory):
    from conftest import run_tk

    out = tmp_path_factory.mktemp("trace") / "t.json"
    r = run_tk("trace", "builtin:mlp", "--target", "llvm", "-o", str(out), "--top", "5")
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout, out


def test_trace_is_chrome_trace_json_with_nested_pass_spans(mlp_trace) -> None:
    doc, _, _ = mlp_trace
    assert doc["otherData"]["tk"] == "compile-trace"
    events = x_events(doc)
    for e in events:
        assert {"pid", "tid", "ts", "dur", "name", "cat"} <= e.keys()
        assert e["dur"] >= 0 and e["ts"] >= 0
    check_nesting(events)
    (compile_,) = [e for e in events if e["cat"] == "compile"]
    passes = [e for e in events if e["cat"] == "pass"]
    names = {e["name"].split(" ", 1)[1] for e in passes}
    assert {"LegalizeOps", "CallTIRRewrite", "_pipeline", "sequential"} <= names
    assert any(n.endswith(".MakePackedAPI") for n in names)
    for e in passes:
        depth = e["args"]["depth"]
        # A nested pass lies inside a pass one level up; an outermost one inside the compile.
        if depth == 0:
            assert inside(e, compile_), e["name"]
        else:
            assert any(inside(e, p) for p in passes if p["args"]["depth"] == depth - 1), e["name"]
        assert e["name"] == f"#{e['args']['pass']} " + e["name"].split(" ", 1)[1]
    # The outermost passes and codegen are where the compile goes; the rest (Python between
    # them, the VM's own codegen) is small.
    outer = sum(e["dur"] for e in passes if e["args"]["depth"] == 0)
    codegen = [e for e in events if e["cat"] == "codegen"]
    assert [e["name"] for e in codegen] == ["codegen llvm"]
    spent = outer + sum(e["dur"] for e in codegen)
    assert 0.6 * compile_["dur"] <= spent <= compile_["dur"]


def test_python_calls_of_the_compile_stack_above_the_threshold(mlp_trace) -> None:
    doc, _, _ = mlp_trace
    events = x_events(doc)
    calls = [e for e in events if e["cat"] == "python"]
    assert calls and all(e["dur"] >= 1000 - EPS for e in calls)  # --min-us. default
    assert {e["tid"] for e in calls} == {2}
    assert all(e["name"].startswith(("tvm.", "tvm_ffi.", "toolkit.")) for e in calls)
    assert not any(e["name"].startswith("toolkit.trace.in_tvm") for e in calls)
    (root,) = [e for e in calls if e["name"] == "toolkit.stack.compile"]
    (compile_,) = [e for e in events if e["cat"] == "compile"]
    assert 0.9 * compile_["dur"] <= root["dur"] <= compile_["dur"]
    assert any(e["name"].startswith("tvm.relax.transform.legalize_ops.") for e in calls)


def self_times(events: list[dict]) -> dict[str, float]:
    """Pass name -> time less that of the spans nested directly in it (µs)."""
    up = parents(events)
    own: dict[int, float] = {id(e): e["dur"] for e in events}
    for e in events:
        if up[id(e)] is not None:
            own[id(up[id(e)])] -= e["dur"]
    out: dict[str, float] = {}
    for e in events:
        if e["cat"] == "pass":
            name = e["name"].split(" ", 1)[1]
            out[name] = out.get(name, 0.0) + own[id(e)]
    return out


def test_top_lists_the_passes_that_took_longest(mlp_trace) -> None:
    doc, stdout, out = mlp_trace
    lines = stdout.splitlines()
    assert lines[0].startswith("traced builtin:mlp for llvm: compile ") and str(out) in lines[0]
    start = lines.index("by pass (self time):")
    rows = lines[start + 1:start + 6]
    printed = [re.match(r"\s+[\d.]+ ms\s+[\d.]+%\s+(\S+)", r).group(1) for r in rows]
    own = self_times(x_events(doc))
    assert printed == sorted(own, key=lambda n: -own[n])[:5]
    assert "LegalizeOps" in printed
    legalize = next(r for r in rows if " LegalizeOps " in r)
    number = next(e["args"]["pass"] for e in x_events(doc) if e["name"].endswith(" LegalizeOps"))
    assert legalize.endswith(f"#{number}")
    assert "by function (spans that ran on it alone):" in lines
    assert "by dlight rule (rules tried before it included):" in lines


def test_pass_numbers_are_dump_irs(mlp_trace, tk, tmp_path: Path) -> None:
    doc, _, _ = mlp_trace
    assert tk("dump-ir", "builtin:mlp", "--target", "llvm", "-o", str(tmp_path / "d")
              ).returncode == 0
    records = json.loads((tmp_path / "d" / "index.json").read_text())["passes"]
    dumped = {r["seq"]: r["name"] for r in records if r["kind"] in ("pass", "wrapper")}
    traced = {e["args"]["pass"]: e["name"].split(" ", 1)[1] for e in x_events(doc)
              if e["cat"] == "pass"}
    assert traced == dumped


def test_cuda_compile_traces_dlight_rules_and_device_codegen(tk, tmp_path: Path) -> None:
    """Compile only: the wheel generates CUDA C without a GPU."""
    import tvm

    if tvm.get_global_func("target.build.cuda", allow_missing=True) is None:
        pytest.skip("this TVM has no CUDA codegen")
    out = tmp_path / "cuda.json"
    r = tk("trace", "builtin:mlp", "--target", "cuda -arch=sm_80", "-o", str(out), "--top", "3")
    assert r.returncode == 0, r.stderr
    events = x_events(json.loads(out.read_text()))
    check_nesting(events)
    dlight = [e for e in events if e["cat"] == "dlight"]
    assert dlight and all(e["args"]["rule"] and e["args"]["function"] for e in dlight)
    (schedule,) = [e for e in events if e["name"].endswith(" ApplyDefaultSchedule")]
    assert all(inside(e, schedule) for e in dlight)
    assert {e["name"] for e in events if e["cat"] == "codegen"} == {
        "codegen cuda -arch=sm_80", "codegen llvm"}
    rules = r.stdout.splitlines()
    start = rules.index("by dlight rule (rules tried before it included):")
    assert dlight[0]["args"]["rule"] in "\n".join(rules[start + 1:start + 4])


def test_bad_input_is_one_line_exit_2(tk, tmp_path: Path) -> None:
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": true}\n')
    for args, words in (
        (["builtin:nope", "-o", str(tmp_path / "a.json")], "unknown builtin workload 'nope'"),
        (["builtin:mlp", "-o", "/proc/t.json"], "-o /proc/t.json: cannot write"),
        (["builtin:mlp", "-o", str(mine)], "is not a trace tk wrote"),
        (["builtin:mlp", "-o", str(tmp_path / "b.json"), "--min-us", "-1"], "at least 0"),
    ):
        r = tk("trace", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr
    assert mine.read_text() == '{"mine": true}\n'
    assert not (tmp_path / "a.json").exists()


def test_a_pass_that_raises_leaves_a_trace_and_is_named(tk, tmp_path: Path) -> None:
    workload = tmp_path / "raising.py"
    workload.write_text(CUSTOM_PASS)  # its FuseMyOps raises
    out = tmp_path / "t.json"
    r = tk("trace", str(workload), "-o", str(out))
    assert r.returncode == 1
    assert "pass FuseMyOps (#2) raised while compiling" in r.stderr
    assert "cannot fuse matmul yet" in r.stderr and "reproduce: " in r.stderr
    doc = json.loads(out.read_text())
    assert doc["otherData"]["status"] == "failed"
    passes = {e["name"]: e["args"] for e in x_events(doc) if e["cat"] == "pass"}
    assert passes["#2 FuseMyOps"]["status"] == "failed"
    assert passes["#0 sequential"]["status"] == "failed"
    assert "status" not in passes["#1 LegalizeOps"]
    check_nesting(x_events(doc))
