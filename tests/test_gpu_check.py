"""benchmarks/gpu: the one-call GPU check, kept from rotting between lendings of a GPU.

The dry run executes the run script's steps here, on the CPU: every step is reported, those
that need a GPU skipped with the reason, the others run. The payload's packing and
installing (prepare's and run's halves of one format) meet on a small real wheel; the
checks the GPU steps apply meet real CPU output of the tk and benchmark they read. What is
not run here: prepare's downloads and its 250 MB compression (minutes and 100 MB from PyPI;
docs/gpu-check.md), and the GPU steps themselves.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GPU = REPO / "benchmarks" / "gpu"
sys.path.insert(0, str(GPU))

import payload  # noqa: E402 - benchmarks/gpu/payload.py
import steps  # noqa: E402 - benchmarks/gpu/steps.py


def script(name: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GPU / name), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


def test_dry_run_reports_every_step_and_skips_the_gpu_ones(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = script("run", "--dry-run", "--out", str(out), "--payload", str(tmp_path / "none"),
                  "--work", str(tmp_path / "work"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["dry_run"] is True and report["machine"]["gpu"] is None
    by = {s["name"]: s for s in report["steps"]}
    assert list(by) == [s.name for s in steps.STEPS]
    for step in steps.STEPS:
        r = by[step.name]
        if "gpu" in step.needs:
            assert r["status"] == "skipped" and r["reason"], r
            assert r["commands"] == []
        else:
            assert r["status"] == "passed", r
    assert by["build-runtime"]["reason"].startswith("--dry-run")
    assert by["doctor"]["figures"]["ok"] is True and by["doctor"]["commands"]
    collected = by["pytest-gpu"]["figures"]["tests"]
    assert "tests/test_profile.py::test_cuda_kernels_timed_on_the_device" in collected
    assert "tests/test_gpu_check.py" not in " ".join(collected)  # only gpu-marked ones
    assert report["summary"]["failed"] == report["summary"]["cut"] == report["not_reached"] == []
    log = (out / "steps.log").read_text()
    assert "-m toolkit doctor --json" in log and "[exit 0," in log
    # The terminal says the same, one line a step.
    for step in steps.STEPS:
        assert f"  {step.name}" in proc.stdout


def test_bad_arguments_get_one_line_and_exit_2(tmp_path: Path) -> None:
    r = script("run", "--dry-run", "--only", "doctor,nope", "--out", str(tmp_path))
    assert r.returncode == 2 and "unknown step nope" in r.stderr
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("mine")
    r = script("run", "--dry-run", "--work", str(tmp_path / "busy"), "--out", str(tmp_path))
    assert r.returncode == 2 and "not an empty folder" in r.stderr
    assert (tmp_path / "busy" / "x").read_text() == "mine"
    r = script("prepare", "--tree-archive", str(tmp_path / "missing.tar.xz"))
    assert r.returncode == 2 and "no such file" in r.stderr


def _wheel(folder: Path, blob: bytes) -> Path:
    """A real wheel (pip installs it): one module, one large data file, one folder that the
    repack drops."""
    files = {
        "gpuprobe/__init__.py": b"VALUE = 42\n",
        "gpuprobe/blob.bin": blob,
        "gpuprobe/headers/big.h": b"// dropped\n" * 100,
        "gpuprobe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: gpuprobe\nVersion: 1.0\n",
        "gpuprobe-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                        b"Tag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("gpuprobe-1.0.dist-info/RECORD,,")
    path = folder / "gpuprobe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("gpuprobe-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def test_payload_packs_and_installs_offline(tmp_path: Path) -> None:
    blob = hashlib.sha256(b"seed").digest() * 8192  # 256 KiB
    src = _wheel(tmp_path, blob)
    stored = tmp_path / "stored"
    stored.mkdir()
    wheel = payload.repack(src, stored, {"gpuprobe/headers/": "not needed"}, last="gpuprobe/blob.bin")
    with zipfile.ZipFile(stored / wheel.file) as zf:
        names = zf.namelist()
        assert names[-1] == "gpuprobe/blob.bin" and "gpuprobe/headers/big.h" not in names
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        record = zf.read("gpuprobe-1.0.dist-info/RECORD").decode().splitlines()
        assert "gpuprobe/headers/big.h,," not in record and "gpuprobe/blob.bin,," in record
    tree = tmp_path / "tvm-mini"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.cc").write_text("int a;\n")
    folder, cache = tmp_path / "payload", tmp_path / "cache"
    folder.mkdir()
    tar = tmp_path / "bundle.tar"
    span = payload.write_tar(tar, [stored / wheel.file], tree, [tree / "src" / "a.cc"],
                             "gpuprobe/blob.bin")
    assert tar.read_bytes()[span[0]:span[0] + span[1]] == blob
    payload.compress_tar(tar, folder / payload.BUNDLE, span, cache, lambda _: None)
    [cached] = cache.glob("*.xz")
    first = (folder / payload.BUNDLE).read_bytes()
    payload.compress_tar(tar, folder / payload.BUNDLE, span, cache, lambda _: None)
    assert (folder / payload.BUNDLE).read_bytes() == first and list(cache.glob("*.xz")) == [cached]
    payload.Manifest(created="now", python="cp312", platform="any", wheels=[wheel],
                     tree=payload.Tree("tvm-mini", str(tree), "whole", 1, 7),
                     bundle_bytes=len(first),
                     bundle_sha256=hashlib.sha256(first).hexdigest(), repo_bytes=0).save(folder)
    manifest = payload.check(folder)
    assert manifest.wheels[0].dropped == ["gpuprobe/headers/ (not needed)"]
    work = tmp_path / "work"
    payload.unpack(folder, work)
    assert (work / "tree" / "tvm-mini" / "src" / "a.cc").read_text() == "int a;\n"
    python, site = payload.make_env(work / "env", sorted((work / "wheels").glob("*.whl")))
    assert (site / "gpuprobe" / "blob.bin").read_bytes() == blob
    # The environment's own package, and this interpreter's (numpy) beneath it, with no
    # PYTHONPATH (tk's tests and tk env's shells set their own).
    out = subprocess.run([str(python), "-c", "import gpuprobe, numpy, sys; "
                          "print(gpuprobe.VALUE, gpuprobe.__file__.startswith(sys.prefix))"],
                         capture_output=True, text=True, env={})
    assert out.stdout.split() == ["42", "True"], out.stderr
    # A bundle changed after prepare is refused before anything is unpacked.
    damaged = bytearray(first)
    damaged[len(damaged) // 2] ^= 0xFF
    (folder / payload.BUNDLE).write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match="sha256"):
        payload.check(folder)


def test_a_bundle_cut_for_two_calls_is_joined_and_checked(tmp_path: Path) -> None:
    """What no single device call can carry travels in parts (the tool refused 63.96 MiB):
    run joins them and checks the whole; a part left behind is named."""
    folder = tmp_path / "payload"
    folder.mkdir()
    bundle = folder / payload.BUNDLE
    data = hashlib.sha256(b"parts").digest() * 1001 + b"!"  # odd: the parts differ by a byte
    bundle.write_bytes(data)
    sizes = payload.cut(bundle, 2)
    assert sizes == [len(data) // 2 + 1, len(data) // 2] and not bundle.exists()
    payload.Manifest(created="now", python="cp312", platform="any", wheels=[], tree=None,
                     bundle_bytes=len(data), bundle_sha256=hashlib.sha256(data).hexdigest(),
                     repo_bytes=0, parts=sizes).save(folder)
    # What one call carries: the largest part, the manifest, the repository.
    assert payload.Manifest.load(folder).call_bytes == sizes[0] + payload.MANIFEST_ROOM
    payload.check(folder)
    assert bundle.read_bytes() == data
    bundle.unlink()
    payload.part_path(folder, 1).unlink()
    with pytest.raises(FileNotFoundError, match=r"bundle\.tar\.xz\.1 is missing: carry it"):
        payload.check(folder)


def test_trace_check_holds_on_a_real_profile_and_catches_a_lost_span(tk, tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    r = tk("profile", "builtin:mlp", "-n", "5", "--json", "--trace", str(trace))
    assert r.returncode == 0, r.stderr
    report, doc = json.loads(r.stdout), json.loads(trace.read_text())
    problems, figures = steps.check_trace(report, doc, gpu=False)
    assert problems == [] and figures["kernel_spans"] == figures["kernel_calls"] > 0
    assert figures["busy_ratio"] == pytest.approx(1, abs=steps.TRACE_BUSY_TOLERANCE)
    # On a GPU the same figures must come from CUDA events; these are the host clock's.
    problems, _ = steps.check_trace(report, doc, gpu=True)
    assert any("device times came from host clock" in p for p in problems)
    device = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["tid"] == 2]
    doc["traceEvents"].remove(device[0])
    problems, _ = steps.check_trace(report, doc, gpu=False)
    assert any(f"{len(device) - 1} kernel spans in the trace" in p for p in problems)
    device[2]["ts"] = device[1]["ts"]
    problems, _ = steps.check_trace(report, doc, gpu=False)
    assert any("overlap" in p for p in problems)


def test_accuracy_judge_reads_the_benchmarks_json(tmp_path: Path) -> None:
    """profile_accuracy.py --json on the CPU: the judge reads every figure it names, and
    refuses these as GPU figures (their device times are the host clock's)."""
    out = tmp_path / "acc.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks/profile_accuracy.py"),
                           "--repeat", "3", "--warmup", "1", "--json", str(out), "builtin:mlp"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.is_file(), proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    rows, misses = steps.judge_accuracy(doc, hidden=False)
    assert [r["workload"] for r in rows] == ["builtin:mlp"]
    assert rows[0]["e2e_us"] > 0 and rows[0]["alone_within"] == "0/0"
    assert misses[0].startswith("builtin:mlp: device times came from host clock")
    _, misses = steps.judge_accuracy(doc, hidden=True)
    assert misses == ["builtin:mlp: the report does not say it fell back (device times: "
                      f"{doc['workloads'][0]['device_timer']})"]


def test_a_step_past_the_runs_budget_is_cut_and_the_rest_not_started(tmp_path: Path) -> None:
    """tk doctor takes seconds (TVM's import, its probes): in a run of 2.5 s it is stopped,
    with its process group, and what comes after it is reported, not run."""
    out = tmp_path / "out"
    proc = script("run", "--dry-run", "--budget", "2.5", "--out", str(out), "--payload",
                  str(tmp_path / "none"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    by = {s["name"]: s for s in report["steps"]}
    assert by["doctor"]["status"] == "cut" and "stopped after" in by["doctor"]["reason"]
    assert by["pytest-gpu"]["status"] == "cut" and by["pytest-gpu"]["reason"].startswith("not started")
    assert report["summary"]["cut"] == ["doctor", "pytest-gpu"]
    assert "[cut after" in (out / "steps.log").read_text()
