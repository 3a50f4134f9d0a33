"""The steps of benchmarks/gpu/run, each with its time budget and its own check.

Stdlib only: the first step installs what the others use. Every step runs tk, or a
benchmark, as a separate process in the environment the install step made, and judges its
JSON output here, so what is checked is written down once, beside the step.

A step's ``needs`` say what it cannot run without: ``gpu`` (a CUDA device; never in a dry
run), ``nvcc``, ``payload`` (the install step passed; in a dry run this Python's TVM and this
tree's tk stand in), ``tree`` (the payload's TVM tree), ``build`` (the runtime build step's
result). A step whose needs are not met is skipped,
with the reason, and the rest go on.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import payload

REPO = Path(__file__).resolve().parent.parent.parent
# The goals for tk profile on a GPU.
KERNELS_RANGE = (0.85, 1.0)  # sum of kernel device time over end to end
ALONE_TOLERANCE = 0.15  # every kernel of 10 us or more against itself timed alone
# Relax workloads: tk profile times a VM's calls, and builtin:matmul is one TIR kernel.
ACCURACY_WORKLOADS = ["builtin:mlp40", "builtin:convnet", "builtin:attention", "builtin:mlp"]
TRACE_WORKLOAD = "builtin:convnet"
TRACE_BUSY_TOLERANCE = 0.10  # the trace run's kernel time against the report's median
TRACE_ROW_TOLERANCE = 0.25  # one row's kernels in the trace run against its median total
TRACE_ROW_MIN_US = 10.0
VERIFY_WORKLOAD = "builtin:attention"
RUN_CHECK_LEFT_OUT = {  # builtin workloads run-check does not run, and why
    "mlp400": "the scale workload (benchmarks/scale.py): its cuda compile alone outran the "
              "step's 75 s beside the others on an H200 machine's 16 cores (2026-11-27)",
}
FALLBACK = "host-side: cuda-bindings is not installed"
LOAD_CUDA_RUNTIME = (  # in a tk env shell: the build's CUDA runtime, then the device
    "import ctypes, json, os, tvm\n"
    "lib = os.path.join(os.environ['TVM_LIBRARY_PATH'].split(os.pathsep)[0], "
    "'libtvm_runtime_cuda.so')\n"
    "ctypes.CDLL(lib)\n"
    "d = tvm.cuda(0)\n"
    "print(json.dumps({'library': lib, 'exist': bool(d.exist), "
    "'name': d.device_name if d.exist else None}))")


class Cut(Exception):
    """A command ran past its step's budget (or the run's) and was stopped."""


@dataclass
class Result:
    name: str
    what: str
    budget_s: float
    status: str = "skipped"  # passed, failed, cut, skipped
    reason: str | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None  # this process and the step's commands, user + system
    commands: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    out: Path  # what comes back: report.json, steps.log, the figures' files
    work: Path  # scratch: the unpacked payload, the install, tk's cache, builds
    payload_dir: Path
    dry_run: bool
    deadline: float  # time.monotonic() by which the whole run ends
    gpu: str | None = None  # what nvidia-smi names, when a GPU is used
    gpu_absent: str | None = None  # why not
    nvcc: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    python: str = sys.executable  # the environment's, once install made it
    site: Path | None = None  # where install put the payload's packages
    have: set[str] = field(default_factory=set)
    build_id: str | None = None
    manifest: payload.Manifest | None = None
    step_deadline: float = 0.0

    @property
    def tree(self) -> Path | None:
        if self.manifest is None or self.manifest.tree is None:
            return None
        return self.work / "tree" / self.manifest.tree.name

    def log(self, text: str) -> None:
        with (self.out / "steps.log").open("a") as f:
            f.write(text if text.endswith("\n") else text + "\n")

    def sh(self, result: Result, argv: list[str], *, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run ``argv`` within what is left of the step's budget; its output goes to the log.
        Past the budget its whole process group is stopped and the step is cut."""
        shown = " ".join(argv)
        result.commands.append(shown)
        left = min(self.step_deadline, self.deadline) - time.monotonic()
        if left <= 1:
            raise Cut(f"no time left for: {shown}")
        self.log(f"$ {shown}")
        start = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd or self.work, env={**self.env, **(env or {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            # The group this command started, no other; tk's own workers die with tk.
            os.killpg(proc.pid, signal.SIGKILL)
            try:
                stdout, stderr = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # something outside the group holds the pipes
                stdout, stderr = "", "(output not collected)"
            self.log(f"{stdout[-4000:]}{stderr[-8000:]}[cut after {time.monotonic() - start:.0f} s]")
            raise Cut(f"{shown} was stopped after {left:.0f} s (the step's budget, or the "
                      "run's)") from None
        self.log(f"{stdout[-20000:]}{stderr[-20000:]}[exit {proc.returncode}, "
                 f"{time.monotonic() - start:.1f} s]")
        return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)

    def tk(self, result: Result, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
        return self.sh(result, [self.python, "-m", "toolkit", *args], env=env)


@dataclass
class Step:
    name: str
    what: str
    budget_s: float
    needs: tuple[str, ...]
    action: Callable[[Context, Result], None]


class Failed(Exception):
    """The step ran and its check did not hold: the message says which."""


def _json(proc: subprocess.CompletedProcess, what: str) -> Any:
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise Failed(f"{what} exited {proc.returncode} without JSON: "
                     f"{_last_line(proc.stderr)}") from None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


# -- the steps --------------------------------------------------------------------------------

def install(ctx: Context, r: Result) -> None:
    """Unpack the bundle, install its wheels into an environment of their own, import them."""
    if ctx.dry_run:
        if not (ctx.payload_dir / payload.MANIFEST).is_file():
            r.figures["payload"] = None
            r.figures["note"] = "dry run without a payload: tk from this tree, TVM from this Python"
        else:
            m = payload.check(ctx.payload_dir)
            r.figures.update(_payload_figures(m), note="dry run: payload verified (sha256), "
                             "not installed: its wheels are for another Python")
        ctx.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        ctx.have.add("payload")
        return
    m = payload.check(ctx.payload_dir)
    ctx.manifest = m
    r.figures.update(_payload_figures(m))
    here = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    if here != m.python:
        raise Failed(f"the payload's wheels are for {m.python}, this Python is {here} "
                     f"({sys.executable}): run this script with that Python")
    start = time.monotonic()
    payload.unpack(ctx.payload_dir, ctx.work)
    r.figures["unpack_s"] = round(time.monotonic() - start, 1)
    start = time.monotonic()
    r.commands.append(f"python -m venv --without-pip {ctx.work / 'env'}; pip install "
                      "--no-index --no-deps --target <its site-packages> wheels/*.whl")
    ctx.log(f"$ {r.commands[-1]}")
    try:
        python, ctx.site = payload.make_env(ctx.work / "env", sorted((ctx.work / "wheels").glob("*.whl")))
    except (RuntimeError, subprocess.CalledProcessError) as e:
        raise Failed(f"installing the payload failed: {e}") from None
    ctx.python = str(python)
    r.figures["install_s"] = round(time.monotonic() - start, 1)
    # tk is this tree, which travels with every call: the code under review, no copy of it.
    ctx.env["PYTHONPATH"] = str(REPO)
    ctx.have.add("payload")
    if ctx.tree is not None and ctx.tree.is_dir():
        ctx.have.add("tree")
    code = ("import json, importlib.metadata as md, tvm, tvm_ffi, toolkit\n"
            "def v(d):\n"
            "    try: return md.version(d)\n"
            "    except md.PackageNotFoundError: return None\n"
            "print(json.dumps({d: v(d) for d in ('apache-tvm', 'apache-tvm-ffi', 'cuda-bindings', "
            "'numpy', 'pandas', 'click', 'pytest', 'scikit-build-core', 'cython', 'setuptools')} "
            "| {'tvm_file': tvm.__file__, 'toolkit_file': toolkit.__file__}))")
    found = _json(ctx.sh(r, [ctx.python, "-c", code]), "importing the installed packages")
    r.figures["versions"] = found
    for w in m.wheels:
        if w.name.replace("_", "-") in ("apache-tvm", "apache-tvm-ffi") and \
                found.get(w.name.replace("_", "-")) != w.version:
            raise Failed(f"{w.name} {found.get(w.name.replace('_', '-'))} imported, "
                         f"payload has {w.version}")
    if not found["tvm_file"].startswith(str(ctx.site)):
        raise Failed(f"tvm imported from {found['tvm_file']}, not from the payload")
    if not found["toolkit_file"].startswith(str(REPO)):
        raise Failed(f"tk imported from {found['toolkit_file']}, not from {REPO}")


def _payload_figures(m: payload.Manifest) -> dict[str, Any]:
    return {"payload_mib": round(m.bundle_bytes / 2**20, 2),
            "largest_call_mib": round(m.call_bytes / 2**20, 2), "calls": max(1, len(m.parts)),
            "limit_mib": m.limit_bytes / 2**20,
            "tree": None if m.tree is None else f"{m.tree.name} ({m.tree.content})",
            "wheels": [f"{w.name} {w.version}" for w in m.wheels], "created": m.created}


def doctor(ctx: Context, r: Result) -> None:
    """tk doctor: nothing failed; on a GPU, the CUDA runtime loaded and the device seen."""
    doc = _json(ctx.tk(r, "doctor", "--json"), "tk doctor")
    _judge_doctor(ctx, r, doc)


def _judge_doctor(ctx: Context, r: Result, doc: dict[str, Any], *,
                  cuda_checked: bool = False) -> None:
    rows = doc.get("checks", [])
    failed = [f"{c['name']}: {c['detail']}" for c in rows if c["status"] == "fail"]
    cuda = next((c for c in rows if c["name"] == "runtime cuda"), None)
    r.figures.update(ok=doc.get("ok"), failed=failed,
                     warnings=[f"{c['name']}: {c['detail']}" for c in rows if c["status"] == "warn"],
                     runtime_cuda=None if cuda is None else cuda["detail"])
    if failed:
        raise Failed(f"tk doctor failed: {failed[0]}")
    if ctx.gpu and not cuda_checked and (cuda is None
                                         or not cuda["detail"].endswith("device present")):
        raise Failed(f"runtime cuda: {cuda and cuda['detail']} (a GPU is here: {ctx.gpu})")


def accuracy(ctx: Context, r: Result, *, hidden: bool = False, filler: str = "hold") -> None:
    """benchmarks/profile_accuracy.py on the GPU; judged against the issue's goals, or, with
    cuda-bindings hidden, on whether every report says it fell back to host-side times.
    With ``filler="memset"`` (tk's first filler) the figures are kept beside the hold's and
    not judged: the step fails only when no figures came."""
    name = ("accuracy-host.json" if hidden else "accuracy.json" if filler == "hold"
            else f"accuracy-{filler}.json")
    argv = [ctx.python, str(REPO / "benchmarks/profile_accuracy.py"), "--target", "cuda",
            "--repeat", "20" if filler == "hold" and not hidden else "10",
            "--json", str(ctx.out / name), "--filler", filler,
            *(["--no-cuda-bindings"] if hidden else []), *ACCURACY_WORKLOADS]
    proc = ctx.sh(r, argv)
    if not (ctx.out / name).is_file():
        raise Failed(f"profile_accuracy.py exited {proc.returncode} without {name}: "
                     f"{_last_line(proc.stderr)}")
    doc = json.loads((ctx.out / name).read_text())
    rows, misses = judge_accuracy(doc, hidden=hidden)
    r.figures.update(workloads=rows, file=name, repeat=doc["repeat"],
                     cuda_compile_mode=doc["cuda_compile_mode"], load_average=doc["load_average"])
    if len(doc["workloads"]) != len(ACCURACY_WORKLOADS):
        misses.insert(0, f"{len(doc['workloads'])} of {len(ACCURACY_WORKLOADS)} workloads "
                         f"measured: {_last_line(proc.stderr)}")
    if misses:
        r.figures["misses"] = misses
        if filler == "hold" or len(doc["workloads"]) != len(ACCURACY_WORKLOADS):
            raise Failed(misses[0] + (f" (and {len(misses) - 1} more)" if len(misses) > 1
                                      else ""))


def judge_accuracy(doc: dict[str, Any], *, hidden: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """profile_accuracy.py's --json document against the issue's goals (or, for a run with
    cuda-bindings hidden, against its one goal: say so). Returns (one row per workload,
    what missed)."""
    rows, misses = [], []
    for w in doc["workloads"]:
        alone = w["alone"]
        rows.append({"workload": w["workload"], "kernels_over_e2e": round(w["kernels"], 3),
                     "unaccounted_us": round(w["rest_us"], 1), "e2e_us": round(w["e2e_us"], 1),
                     "alone_within": f"{sum(a['within'] for a in alone)}/{len(alone)}",
                     "worst_alone_ratio": max((round(a["ratio"], 3) for a in alone),
                                              key=lambda x: abs(x - 1), default=None),
                     "device_timer": w["device_timer"]})
        if hidden:
            if not (w["device_timer"].startswith(FALLBACK) and w["device_timer"] in w["warnings"]):
                misses.append(f"{w['workload']}: the report does not say it fell back "
                              f"(device times: {w['device_timer']})")
            continue
        if not w["device_timer"].startswith("CUDA events"):
            misses.append(f"{w['workload']}: device times came from {w['device_timer']}")
        if not KERNELS_RANGE[0] <= w["kernels"] <= KERNELS_RANGE[1]:
            misses.append(f"{w['workload']}: kernels / end to end {w['kernels']:.3f} outside "
                          f"{KERNELS_RANGE[0]}-{KERNELS_RANGE[1]}")
        for a in alone:
            if not a["within"]:
                misses.append(f"{w['workload']}: {a['kernel']} {a['profile_us']:.1f} us against "
                              f"{a['alone_us']:.1f} us alone")
        if w["rest_us"] < 0:
            misses.append(f"{w['workload']}: unaccounted {w['rest_us']:.1f} us < 0")
    return rows, misses


def fallback(ctx: Context, r: Result) -> None:
    accuracy(ctx, r, hidden=True)


def memset_filler(ctx: Context, r: Result) -> None:
    accuracy(ctx, r, filler="memset")


def trace(ctx: Context, r: Result) -> None:
    """tk profile --trace: the trace's kernel spans against the report of the same session."""
    path = ctx.out / "trace.json"
    doc = _json(ctx.tk(r, "profile", TRACE_WORKLOAD, "--target", "cuda", "-n", "20", "--json",
                       "--trace", str(path)), "tk profile --trace")
    problems, figures = check_trace(doc, json.loads(path.read_text()), gpu=True)
    r.figures.update(figures)
    if problems:
        r.figures["problems"] = problems
        raise Failed(problems[0])


def check_trace(report: dict[str, Any], trace_doc: dict[str, Any], *, gpu: bool
                ) -> tuple[list[str], dict[str, Any]]:
    """What in a ``tk profile --json`` document and its ``--trace`` file disagrees: the
    device spans are the kernel calls of one run, one at a time, each after its launch (on a
    GPU), and their time matches the report's. Returns (problems, figures)."""
    s = report["summary"]
    rows = [r for r in report["rows"] if r["kind"] != "builtin"]
    ids = {(f"{r['name']}({r['args']})" if r["args"] else r["name"]): r for r in rows}
    events = [e for e in trace_doc["traceEvents"] if e.get("ph") == "X"]
    host = {e["args"]["call"]: e for e in events if e["tid"] == 1}
    device = sorted((e for e in events if e["tid"] == 2), key=lambda e: e["ts"])
    problems = []
    other = trace_doc.get("otherData", {})
    if other.get("device_timer") != s["device_timer"]:
        problems.append(f"trace says device times came from {other.get('device_timer')!r}, "
                        f"the report {s['device_timer']!r}")
    if gpu and not s["device_timer"].startswith("CUDA events"):
        problems.append(f"device times came from {s['device_timer']}")
    calls = sum(r["calls"] for r in rows)
    if len(device) != calls:
        problems.append(f"{len(device)} kernel spans in the trace, {calls} kernel calls a run "
                        "in the report")
    strays = sorted({e["args"]["row"] for e in device} - set(ids))
    if strays:
        problems.append(f"trace spans of rows the report does not have: {strays[:3]}")
    for a, b in zip(device, device[1:]):
        if a["ts"] + a["dur"] > b["ts"] + 1e-3:
            problems.append(f"kernel spans overlap on one stream: {a['name']} and {b['name']}")
            break
    if gpu:
        early = [e["name"] for e in device if e["args"]["call"] in host
                 and e["ts"] + 1e-3 < host[e["args"]["call"]]["ts"] + host[e["args"]["call"]]["dur"]]
        if early:
            problems.append(f"{len(early)} kernels start before their launch returned: {early[0]}")
    busy_trace = sum(e["dur"] for e in device)
    busy_report = next(iter(s["split_us"].values()))  # "GPU busy" (or "kernels" on a CPU)
    figures: dict[str, Any] = {
        "workload": report["header"]["workload"], "kernel_spans": len(device),
        "kernel_calls": calls, "busy_trace_us": round(busy_trace, 1),
        "busy_report_us": round(busy_report, 1), "e2e_us": round(s["e2e_median_us"], 1),
        "device_timer": s["device_timer"]}
    if busy_report > 0:
        figures["busy_ratio"] = round(busy_trace / busy_report, 3)
        if abs(busy_trace / busy_report - 1) > TRACE_BUSY_TOLERANCE:
            problems.append(f"trace kernels {busy_trace:.1f} us, report {busy_report:.1f} us "
                            f"(beyond {100 * TRACE_BUSY_TOLERANCE:.0f}%)")
    per_row: dict[str, float] = {}
    for e in device:
        per_row[e["args"]["row"]] = per_row.get(e["args"]["row"], 0.0) + e["dur"]
    worst = None
    for rid, us in per_row.items():
        row = ids.get(rid)
        if row is None or row["total_us"] < TRACE_ROW_MIN_US:
            continue
        ratio = us / row["total_us"]
        if worst is None or abs(ratio - 1) > abs(worst[1] - 1):
            worst = (rid, ratio)
    if worst is not None:
        figures["worst_row"] = {"row": worst[0], "trace_over_report": round(worst[1], 3)}
        if abs(worst[1] - 1) > TRACE_ROW_TOLERANCE:
            problems.append(f"row {worst[0]}: trace {worst[1]:.2f}x the report's total "
                            f"(beyond {100 * TRACE_ROW_TOLERANCE:.0f}%)")
    return problems, figures


def run_check(ctx: Context, r: Result) -> None:
    """tk run --check on every builtin workload, on cuda."""
    names = _json(ctx.sh(r, [ctx.python, "-c", "import json; from toolkit.stack.workload "
                             "import builtin_names; print(json.dumps(builtin_names()))"]),
                  "listing the builtin workloads")
    r.figures["left_out"] = {f"builtin:{n}": why for n, why in RUN_CHECK_LEFT_OUT.items()}
    names = [n for n in names if n not in RUN_CHECK_LEFT_OUT]
    rows, failed = [], []
    # Side by side, each a process of its own: one after another they outran the budget.
    with ThreadPoolExecutor(max_workers=max(1, min(len(names), (os.cpu_count() or 2) // 2))) as pool:
        procs = list(pool.map(lambda name: ctx.tk(r, "run", f"builtin:{name}", "--target", "cuda",
                                                  "--check", "--json"), names))
    for name, proc in zip(names, procs):
        try:
            doc = json.loads(proc.stdout)
        except ValueError:
            doc = {}
        check = doc.get("check") or {}
        rows.append({"workload": f"builtin:{name}", "exit": proc.returncode,
                     "ok": check.get("ok"), "against": check.get("against"),
                     "max_abs": check.get("max_abs"), "device": doc.get("device"),
                     "compile_s": doc.get("compile_seconds")})
        if proc.returncode or not check.get("ok"):
            failed.append(f"builtin:{name}: exit {proc.returncode}, "
                          f"{check or _last_line(proc.stderr)}")
    r.figures["workloads"] = rows
    if failed:
        raise Failed(failed[0] + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""))


def dump_ir_verify(ctx: Context, r: Result) -> None:
    """tk dump-ir --target cuda --verify: nvcc/ptxas accept every kernel TVM generated."""
    out = ctx.work / "dump"
    shutil.rmtree(out, ignore_errors=True)
    proc = ctx.tk(r, "dump-ir", VERIFY_WORKLOAD, "--target", "cuda", "--verify", "-o",
                  str(out), "--json")
    doc = _json(proc, "tk dump-ir --verify")
    index = json.loads((out / "index.json").read_text()) if (out / "index.json").is_file() else {}
    verified = [p["verify"] for p in index.get("passes", []) if p.get("verify")]
    r.figures.update(workload=VERIFY_WORKLOAD, status=doc.get("status"), passes=doc.get("passes"),
                     verified=[f"{v['tool']}: {'ok' if v['ok'] else v['error']}" for v in verified])
    if proc.returncode or doc.get("status") != "ok":
        raise Failed(f"dump-ir exited {proc.returncode}: {doc.get('first_cause')}")
    if not verified or not all(v["ok"] for v in verified):
        raise Failed("no generated CUDA was verified" if not verified else "nvcc refused the CUDA")


def build_runtime(ctx: Context, r: Result) -> None:
    """tk build --cuda --runtime-only of the real tree with this machine's nvcc, offline: the
    tree's tvm-ffi wheel builds from the payload's wheels and this Python's build tools."""
    assert ctx.tree is not None
    env = {"TK_CACHE": str(ctx.work / "tk-cache"), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(ctx.work / "wheels"),
           # pip reads a negative flag's variable inverted: 0 turns build isolation off, so
           # the wheel builds with the scikit-build-core and Cython this Python has.
           "PIP_NO_BUILD_ISOLATION": "0"}
    proc = ctx.tk(r, "build", "-C", str(ctx.tree), "--cuda", "--runtime-only", "--cuda-arch",
                  "native", "-j", str(os.cpu_count() or 1), "--json", env=env)
    doc = _json(proc, "tk build")
    check = doc.get("check") or {}
    r.figures.update(id=doc.get("id"), from_store=doc.get("from_store"),
                     check_ok=check.get("ok"), cuda=check.get("cuda"),
                     cuda_architectures=(doc.get("cmake_values") or {}).get("CMAKE_CUDA_ARCHITECTURES"),
                     nvcc=(doc.get("toolchain") or {}).get("nvcc"),
                     libraries=sorted(a["name"] for a in doc.get("artifacts", [])),
                     python=(doc.get("python") or {}).get("version"))
    if proc.returncode or not check.get("ok") or check.get("cuda") is not True:
        raise Failed(f"tk build exited {proc.returncode}; check {check.get('ok')}, "
                     f"cuda {check.get('cuda')}: {_last_line(proc.stderr)}")
    ctx.build_id = doc["id"]
    ctx.have.add("build")


def env_doctor(ctx: Context, r: Result) -> None:
    """eval "$(tk env ID)", then tk doctor in that shell: clean, with the build's CUDA runtime."""
    cache = {"TK_CACHE": str(ctx.work / "tk-cache")}
    enter = f'eval "$({ctx.python} -m toolkit env {ctx.build_id})" || exit 3\n'
    script = (enter + f'{ctx.python} -c "import tvm; print(tvm.__file__)" >&2\n'
              f"exec {ctx.python} -m toolkit doctor --json")
    doc = _json(ctx.sh(r, ["bash", "-c", script], env=cache), "tk doctor after tk env")
    # The build is runtime-only (build-runtime's), and TVM main's Python loads
    # libtvm_runtime_cuda.so only beside its compiler: doctor fails the row and names the load.
    # Loaded by hand from the build's lib/ (TVM_LIBRARY_PATH), it must find the GPU.
    rows = doc.get("checks", [])
    unloaded = next((c for c in rows if c["name"] == "runtime cuda" and c["status"] == "fail"),
                    None)
    if unloaded is not None:
        script = enter + f"exec {ctx.python} -c {shlex.quote(LOAD_CUDA_RUNTIME)}"
        found = _json(ctx.sh(r, ["bash", "-c", script], env=cache),
                      "loading the build's CUDA runtime by hand")
        r.figures["runtime_cuda_by_hand"] = {"doctor": unloaded["detail"], "loaded": found}
        if ctx.gpu and not found.get("exist"):
            raise Failed(f"the build's {found.get('library')}, loaded by hand, finds no CUDA "
                         f"device ({ctx.gpu})")
        doc["checks"] = [c for c in rows if c is not unloaded]
    _judge_doctor(ctx, r, doc, cuda_checked=unloaded is not None)
    libraries = [c["detail"].split(" ")[0] for c in doc.get("checks", []) if c["name"] == "library"]
    r.figures["libraries"] = libraries
    if ctx.tree is not None and not any(str(ctx.work / "tk-cache") in lib for lib in libraries):
        raise Failed(f"doctor did not load the build's libraries: {libraries}")


def pytest_gpu(ctx: Context, r: Result) -> None:
    """The test suite's gpu-marked tests (a dry run only collects them)."""
    xml = ctx.work / "pytest-gpu.xml"
    argv = [ctx.python, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "-rfEs",
            str(REPO / "tests")]
    if ctx.dry_run:
        proc = ctx.sh(r, [*argv, "--collect-only"], cwd=REPO)
        tests = [line for line in proc.stdout.splitlines() if "::" in line]
        r.figures.update(collected=len(tests), tests=tests, note="dry run: collected, not run")
        if proc.returncode or not tests:
            raise Failed(f"collecting the gpu tests exited {proc.returncode}: "
                         f"{_last_line(proc.stdout + proc.stderr)}")
        return
    proc = ctx.sh(r, [*argv, f"--junitxml={xml}"], cwd=REPO)
    if not xml.is_file():
        raise Failed(f"pytest exited {proc.returncode} without a report: {_last_line(proc.stderr)}")
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    details = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        if not case.get("classname"):  # a module skipped at collection, not a gpu test
            continue
        test = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skip = case.find("skipped")
        if bad is not None:
            counts["failed"] += 1
            details.append(f"FAILED {test}: {(bad.get('message') or '')[:300]}")
        elif skip is not None:
            counts["skipped"] += 1
            details.append(f"skipped {test}: {(skip.get('message') or '')[:200]}")
        else:
            counts["passed"] += 1
    r.figures.update(counts, details=details)
    if proc.returncode or counts["failed"]:
        raise Failed(f"pytest exited {proc.returncode}: "
                     f"{next((d for d in details if d.startswith('FAILED')), _last_line(proc.stdout))}")


STEPS = [
    Step("install", "the payload, offline, into a --target folder; versions checked", 60,
         (), install),
    Step("doctor", "tk doctor: clean; the CUDA runtime sees the GPU", 30, ("payload",), doctor),
    Step("profile-accuracy", "benchmarks/profile_accuracy.py --target cuda: kernel device time "
         "over end to end, kernels against themselves alone, unaccounted time", 120,
         ("payload", "gpu"), accuracy),
    Step("profile-memset", "the same behind tk's first filler (128 MiB memsets), for "
         "comparison: figures only", 75, ("payload", "gpu"), memset_filler),
    Step("profile-fallback", "the same with cuda-bindings hidden: each report names the "
         "host-side fallback", 75, ("payload", "gpu"), fallback),
    Step("profile-trace", f"tk profile --trace ({TRACE_WORKLOAD}): kernel spans against the "
         "report", 45, ("payload", "gpu"), trace),
    Step("run-check", "tk run --check of every builtin workload on cuda", 75,
         ("payload", "gpu"), run_check),
    Step("build-runtime", "tk build --cuda --runtime-only --cuda-arch native of the real tree, "
         "offline", 180, ("payload", "gpu", "nvcc", "tree"), build_runtime),
    Step("env-doctor", "eval \"$(tk env ID)\"; tk doctor: clean, the build's CUDA runtime "
         "loaded", 30, ("build", "gpu"), env_doctor),
    Step("dump-ir-verify", f"tk dump-ir {VERIFY_WORKLOAD} --target cuda --verify (nvcc/ptxas)",
         40, ("payload", "gpu", "nvcc"), dump_ir_verify),
    Step("pytest-gpu", "pytest -m gpu: the suite's GPU-marked tests", 90, ("payload",),
         pytest_gpu),
]


def missing(ctx: Context, step: Step) -> str | None:
    """Why ``step`` cannot run here, or None."""
    for need in step.needs:
        if need == "gpu" and not ctx.gpu:
            return ctx.gpu_absent
        if need == "nvcc" and not ctx.nvcc:
            return "nvcc is not on PATH"
        if need in ("payload", "tree", "build") and need not in ctx.have:
            return {"payload": "the payload is not installed (install did not pass)",
                    "tree": "the payload carries no TVM tree",
                    "build": "no runtime build (build-runtime did not pass)"}[need]
    return None


def run_step(ctx: Context, step: Step) -> Result:
    r = Result(step.name, step.what, step.budget_s)
    why = missing(ctx, step)
    if why:
        r.reason = why
        return r
    left = ctx.deadline - time.monotonic()
    if left < 1:
        r.status, r.reason = "cut", "not started: the run's time was spent"
        return r
    ctx.step_deadline = time.monotonic() + step.budget_s
    ctx.log(f"\n=== {step.name} (budget {step.budget_s:.0f} s, {left:.0f} s left in the run)")
    before = payload.cpu_seconds()
    start = time.monotonic()
    try:
        step.action(ctx, r)
        r.status = "passed"
    except Cut as e:
        r.status, r.reason = "cut", str(e)
    except Failed as e:
        r.status, r.reason = "failed", str(e)
    except Exception as e:  # noqa: BLE001 - any surprise is this step's failure, not the run's
        r.status, r.reason = "failed", f"{type(e).__name__}: {e}"
        ctx.log(f"{type(e).__name__}: {e}")
    r.seconds = round(time.monotonic() - start, 1)
    r.cpu_seconds = round(payload.cpu_seconds() - before, 1)
    return r


def as_json(results: list[Result]) -> list[dict[str, Any]]:
    return [asdict(r) for r in results]
