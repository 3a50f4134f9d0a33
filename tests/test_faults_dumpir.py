"""dump-ir under adversarial use (issue 18): user files, crafted names and indexes, kills."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_tk
from test_dumpir import CUSTOM_PASS, dump_ir, load_index


@pytest.fixture(scope="module")
def mlp_dump(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "dump"
    r = dump_ir(out)
    assert r.returncode == 0, r.stderr
    return out


def test_a_file_the_user_put_into_a_dump_is_never_deleted(tmp_path: Path):
    out = tmp_path / "d"
    assert dump_ir(out).returncode == 0
    model = out / "model.py"
    shutil.copy(REPO / "examples" / "gelu_mlp.py", model)
    r = run_tk("dump-ir", str(model), "-o", str(out))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "model.py, which tk did not write" in r.stderr
    assert model.read_text() == (REPO / "examples" / "gelu_mlp.py").read_text()

    # A file tk wrote and the user then edited is the user's too.
    model.unlink()
    (out / "index.json").write_text((out / "index.json").read_text() + " ")
    r = dump_ir(out)
    assert r.returncode == 2 and "index.json, which tk did not write" in r.stderr

    # A project folder holding a copied index.json (no tk manifest) is not a dump.
    project = tmp_path / "project"
    project.mkdir()
    (project / "index.json").write_text(json.dumps({"format": "tk-dump-ir/1"}))
    (project / "train.py").write_text("print('mine')\n")
    r = dump_ir(project)
    assert r.returncode == 2 and "no tk manifest" in r.stderr
    assert sorted(p.name for p in project.iterdir()) == ["index.json", "train.py"]

    # A dump exactly as tk wrote it is still replaced, and nothing else is left beside it.
    shutil.rmtree(out)
    assert dump_ir(out).returncode == 0
    r = dump_ir(out, "builtin:mlp", "llvm", "--funcs", "matmul*")
    assert r.returncode == 0, r.stderr
    assert load_index(out)["summary"]["func_filter"] == "matmul*"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "project"]


INJECTING_NAME = 'x"""; __import__("os").system("touch REPRO_INJECTED"); """.py'


def test_a_workload_path_cannot_inject_code_into_repro(tmp_path: Path):
    workload = tmp_path / INJECTING_NAME
    workload.write_text(CUSTOM_PASS)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 1 and "pass FuseMyOps" in r.stderr
    source = (out / "repro.py").read_text()
    literals = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in ("WORKLOAD", "WORKLOAD_SOURCE")
    }
    assert literals["WORKLOAD"] == str(workload.resolve())  # the path survives as data
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert "running only FuseMyOps" in proc.stdout and "cannot fuse matmul yet" in proc.stderr
    assert not (tmp_path / "REPRO_INJECTED").exists()


@pytest.mark.parametrize("crafted", ["../../../outside", "/tmp/outside", "0" * 23 + "/"])
def test_crafted_store_keys_do_not_read_outside_the_dump(mlp_dump: Path, tmp_path: Path,
                                                          crafted: str):
    dump = tmp_path / "dump"
    shutil.copytree(mlp_dump, dump)
    index = load_index(dump)
    legalize = next(p for p in index["passes"] if p["name"] == "LegalizeOps")
    name = next(iter(legalize["added"]))
    legalize["added"][name] = crafted
    (dump / "index.json").write_text(json.dumps(index))
    for args in (("show", str(dump), "--pass", "LegalizeOps"),
                 ("find", str(dump), "anything")):
        r = run_tk("dump-ir", *args)
        assert r.returncode == 2, r.stderr
        assert "not a tk store key" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("content", ["[]", '{"format": "tk-dump-ir/1"}',
                                     '{"format": "tk-dump-ir/1", "summary": {}, "input": {}, '
                                     '"passes": [{"seq": 0}]}', "not json"])
def test_a_malformed_index_is_one_line_and_exit_2(tmp_path: Path, content: str):
    (tmp_path / "index.json").write_text(content)
    r = run_tk("dump-ir", "show", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "internal error" not in r.stderr


SLOW_PASS = CUSTOM_PASS.replace(
    '        raise ValueError("FuseMyOps: cannot fuse matmul yet")',
    '        import time; time.sleep(600)',
)


def test_ctrl_c_inside_a_python_pass_is_an_interruption_not_a_failing_pass(tmp_path: Path):
    """The KeyboardInterrupt comes back from TVM as a RuntimeError raised by the pass: it
    must end as Ctrl-C does (130, "interrupted"), with no failed dump or repro.py."""
    workload = tmp_path / "slow.py"
    workload.write_text(SLOW_PASS)
    out = tmp_path / "dump"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "dump-ir", str(workload), "-o",
                             str(out)], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            journals = list(tmp_path.glob(".dump.tk-*/passes.journal"))
            if journals and "FuseMyOps" in journals[0].read_text():
                break
            time.sleep(0.2)
        else:
            pytest.fail("the dump never reached the slow pass")
        proc.send_signal(signal.SIGINT)  # tk forwards it to its worker, as a terminal's Ctrl-C
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "tk: interrupted", err
    assert not out.exists() and not list(tmp_path.glob(".dump.tk-*"))


def test_a_killed_dump_leaves_nothing_behind_after_the_next_run(tmp_path: Path):
    workload = tmp_path / "slow.py"
    workload.write_text(SLOW_PASS)
    out = tmp_path / "dump"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "dump-ir", str(workload), "-o",
                             str(out)], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            journals = list(tmp_path.glob(".dump.tk-*/passes.journal"))
            if journals and "FuseMyOps" in journals[0].read_text():
                break
            time.sleep(0.2)
        else:
            pytest.fail("the dump never reached the slow pass")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10  # the kernel reaps the forked worker too
    while _alive_pid_dirs(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(tmp_path.glob(".dump.tk-*")), "the killed run left no work directory to reap"
    # A user's directory that merely looks like a leftover is not tk's: it stays.
    lookalike = tmp_path / ".dump.tk-1-mine"
    lookalike.mkdir()

    r = dump_ir(out)
    assert r.returncode == 0, r.stderr
    assert re.search(r"earlier run \(pid \d+\) died inside pass FuseMyOps \(#2\)", r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == [lookalike.name, "dump", "slow.py"]
    assert "FuseMyOps" in load_index(out)["summary"]["earlier_crashes"][0]


def _alive_pid_dirs(root: Path) -> bool:
    for work in root.glob(".dump.tk-*-*"):
        pid = work.name.split("-")[1]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            return True
    return False


HTML_NAME = "<!--<script>x.py"


def test_a_name_that_opens_a_script_comment_does_not_blank_the_page(tmp_path: Path, browser):
    workload = tmp_path / HTML_NAME
    shutil.copy(REPO / "examples" / "gelu_mlp.py", workload)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert run_tk("dump-ir", "page", str(out)).returncode == 0
    page = (out / "index.html").read_text()
    assert page.count("<!--") == 0 and page.count("<script") == 3  # only the page's own
    dom = browser.dom(out / "index.html")
    index = load_index(out)
    assert len(re.findall(r'<li data-seq="\d+"', dom)) == len(index["passes"])
    assert 'data-ready="1"' in dom and "&lt;!--&lt;script&gt;x.py" in dom
