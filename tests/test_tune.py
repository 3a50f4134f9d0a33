"""tk tune: MetaSchedule tuning with the hosted stack, its database on disk, --db applying it.

Tiny on purpose (a 16x12x8 matmul, two trials): CI measures that the plumbing works, not
that tuning wins (benchmarks/tune_speedup.py measures that).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from workload_files import te_matmul

from toolkit.errors import TkError
from toolkit.stack import tune


def _tuning_works() -> str | None:
    """Why MetaSchedule cannot run in this install, or None (its Python needs are tk's own
    dependencies: a missing one is a failure here, not a skip)."""
    try:
        tune.check_serialisation()
    except TkError as e:
        return str(e)
    return None


def test_empty_database_is_refused(tk, tmp_path):
    db = tmp_path / "db"
    db.mkdir()
    (db / tune.WORKLOAD_FILE).write_text("")
    (db / tune.RECORD_FILE).write_text("")
    result = tk("run", "builtin:matmul", "--db", str(db))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"tk: error: --db {db}: the database holds no tuning record; tune with more trials "
        "(tk tune --trials N)"]


def test_database_of_failed_candidates_counts_as_empty(tmp_path):
    # MetaSchedule records a candidate that timed out or failed as running 1e10 s.
    (tmp_path / tune.RECORD_FILE).write_text(json.dumps([0, [[], [1e10]]]) + "\n")
    assert tune.records(tmp_path) == 0
    (tmp_path / tune.RECORD_FILE).write_text(json.dumps([0, [[], [2.5e-6, 2.4e-6]]]) + "\n")
    assert tune.records(tmp_path) == 1


def test_broken_serialisation_is_one_line_exit_1(tk, tmp_path):
    reason = _tuning_works()
    if reason is None or "JSON serialisation" not in reason:
        pytest.skip("TVM's JSON serialisation works here")
    result = tk("tune", str(te_matmul(tmp_path)), "--trials", "2", "-o", str(tmp_path / "db"))
    assert result.returncode == 1
    assert "MetaSchedule cannot save or ship IR" in result.stderr
    assert not (tmp_path / "db").exists()


REPAIR = """
import json
import tvm
from toolkit.stack import compat, tune
from workload_files import TE_MATMUL

raw = tune._serialises()
cleared = [] if raw else compat.clear_foreign_any_hash_hooks()
space = {}
exec(TE_MATMUL.format(reference="a @ b"), space)
mod = space["mod"]  # a PrimFunc: every index and buffer shape in it is a PrimExpr
text = tvm.ir.save_json(mod) if tune._serialises() else None
if text is not None:
    tvm.ir.assert_structural_equal(tvm.ir.load_json(text), mod)
print(json.dumps({"raw": raw, "cleared": cleared, "round_trip": text is not None}))
"""


def test_serialisation_repaired_where_tvm_ffi_hash_hooks_disagree():
    """apache-tvm 0.27.0.post1 beside apache-tvm-ffi 0.1.15: TVM's PrimType hash hook has
    the old calling convention and every save_json of a PrimExpr segfaults; tk drops the
    hook in its own process and IR then round-trips through TVM's JSON."""
    pytest.importorskip("tvm")
    here = os.path.dirname(__file__)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(here), here, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", REPAIR], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["raw"]:
        pytest.skip("save_json works in this install without the repair")
    assert result["cleared"] == ["ir.PrimType"]
    assert result["round_trip"]


@pytest.mark.slow
def test_tune_then_apply_database(tk, tmp_path):
    reason = _tuning_works()
    if reason is not None:
        pytest.skip(reason)
    source = str(te_matmul(tmp_path))
    db = tmp_path / "db"
    result = tk("tune", source, "--trials", "2", "-o", str(db), "--json", timeout=1800)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["trials"] == 2 and report["tasks"] == 1
    assert "trials: [2/2]" in result.stderr  # progress, as plain lines off a TTY
    assert (db / tune.WORKLOAD_FILE).exists() and (db / tune.RECORD_FILE).exists()
    if report["records"] == 0:
        pytest.skip("no candidate built and ran in time on this machine (busy?)")
    ran = tk("run", source, "--db", str(db), "--check", "--json", timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["check"]["ok"]

    # A database tuned for another workload matches none of its kernels: refused, not
    # applied silently (the compile would be untuned).
    foreign = tk("run", "builtin:mlp", "--db", str(db))
    assert foreign.returncode == 2, foreign.stderr
    assert foreign.stderr.strip().splitlines() == [
        f"tk: error: --db {db}: it holds no schedule for any of the 4 kernel(s) of builtin:mlp "
        f"for this target (it was tuned for another workload or target); tune this one: tk "
        f"tune builtin:mlp -o DIR"]

    # Cut short (a full disk, a killed tune), or not MetaSchedule's: one line naming it.
    records = (db / tune.RECORD_FILE).read_bytes()
    # Cut inside a line: half of two records of one length is a whole first record, a
    # shorter database and no damage.
    cut_at = len(records) // 2
    # ... and not on a line's newline either: a whole first line without its "\n" is a valid
    # database too (when the second record is one byte shorter than the first).
    while b"\n" in (records[cut_at - 1:cut_at], records[cut_at:cut_at + 1]):
        cut_at += 1
    (db / tune.RECORD_FILE).write_bytes(records[:cut_at])
    for command in (("run", source), ("compile", source), ("profile", "builtin:mlp")):
        cut = tk(*command, "--db", str(db))
        assert cut.returncode == 2, cut.stderr
        assert cut.stderr.count("\n") == 1 and "internal error" not in cut.stderr
        assert f"--db {db}: line " in cut.stderr and f"of {tune.RECORD_FILE} is not a tuning " \
            "record" in cut.stderr
    (db / tune.RECORD_FILE).write_bytes(records)
    (db / tune.WORKLOAD_FILE).write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    foreign_file = tk("run", source, "--db", str(db))
    assert foreign_file.returncode == 2 and foreign_file.stderr.count("\n") == 1, \
        foreign_file.stderr
