"""tk explain's answers from TVM's own history (issue 25): the index generator on a real git
repository, the shipped index of apache/tvm, API-drift and error-site answers, the environment
check through the real probe, ``--source``, and the public corpus's development set."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from explain_corpus import DEV, HELD_OUT, answer_text, cases, named

from toolkit.explain import explain
from toolkit.explain.history import DATA, api, matches_template, sites

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "scripts" / "explain_index.py"
CORPUS = Path(__file__).parent / "fixtures" / "explain" / "corpus"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))


BODY = """
    def {name}(shape, dtype="float32", name="x"):
        if not shape:
            raise ValueError(f"{name} needs a shape, got {{shape}}")
        return shape
"""


@pytest.fixture(scope="module")
def tiny_history(tmp_path_factory) -> Path:
    """A TVM-shaped git repository with two releases and main, indexed by the generator."""
    root = tmp_path_factory.mktemp("tvm")
    git(root, "init", "-q", "-b", "main")
    write(root, {
        "python/tvm/__init__.py": "from .api import placeholder\nfrom . import relay\n",
        "python/tvm/api.py": BODY.format(name="placeholder"),
        "python/tvm/relay/__init__.py": "from .build import build\n",
        "python/tvm/relay/build.py": "def build(mod, target=None):\n    return mod\n",
        "src/relay/build.cc": """
            TVM_REGISTER_GLOBAL("relay.build").set_body_typed([](int x) { return x; });
            namespace tvm {
            int Check(int n) {
              ICHECK(n > 0) << "need a positive n, got " << n;
              return n;
            }
            }
            """,
        "src/contrib/uma/targets.cc": 'TVM_REGISTER_GLOBAL("relay.uma.Register");\n',
        "cmake/modules/UMA.cmake": "if(USE_UMA)\n  file(GLOB S src/contrib/uma/*.cc)\nendif()\n",
        "CMakeLists.txt": "include(cmake/modules/UMA.cmake)\n",
    })
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v0.1")
    git(root, "tag", "v0.1.0")
    # v0.2: placeholder moves to tvm.te (same definition), relay goes away.
    (root / "python/tvm/api.py").unlink()
    for path in ("python/tvm/relay/__init__.py", "python/tvm/relay/build.py", "src/relay/build.cc"):
        (root / path).unlink()
    write(root, {
        "python/tvm/__init__.py": "from . import te\n",
        "python/tvm/te/__init__.py": "from .operation import placeholder\n",
        "python/tvm/te/operation.py": BODY.format(name="placeholder"),
        "src/te/check.cc": """
            namespace tvm {
            int Check(int n) {
              ICHECK(n > 0) << "need a positive n, got " << n;
              return n;
            }
            }
            """,
    })
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v0.2")
    git(root, "tag", "v0.2.0")
    write(root, {"python/tvm/te/new.py": "def fresh():\n    return 1\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    out = tmp_path_factory.mktemp("index")
    run = subprocess.run([sys.executable, str(GENERATOR), str(root / ".git"), "--since", "v0.1.0",
                          "--out", str(out), "--jobs", "1"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "3 versions (v0.1.0..main)" in run.stderr
    return out


def test_generator_records_versions_renames_globals_options_and_sites(tiny_history: Path):
    history = api(tiny_history)
    v = history.versions
    assert v.labels == ("v0.1.0", "v0.2.0", "main")
    assert v.span(history.python("tvm.relay.build")) == "v0.1.0"
    assert v.span(history.python("tvm.te.placeholder")) == "v0.2.0–main"
    assert v.span(history.python("tvm.te.new.fresh")) == "main"
    # The same definition left tvm.api for tvm.te.operation; tvm.placeholder followed it.
    moved = history.rename_of("tvm.placeholder")
    assert moved is not None and moved.new == "tvm.te.placeholder" and v.labels[moved.at] == "v0.2.0"
    mask, where = history.get("F", "relay.build")
    assert v.span(mask) == "v0.1.0" and where == "src/relay/build.cc"
    assert history.option_for("src/contrib/uma/targets.cc")[0] == "USE_UMA"
    index = sites(tiny_history)
    check = [s for s in index.sites if s.condition == "n > 0"]
    assert {(s.file, s.function, v.span(s.mask)) for s in check} == {
        ("src/relay/build.cc", "Check", "v0.1.0"), ("src/te/check.cc", "Check", "v0.2.0–main")}
    assert matches_template(check[0].template, "need a positive n, got -3") > 0
    raised = [s for s in index.sites if s.kind == "raise ValueError"]
    assert raised and raised[0].condition == "not shape" and raised[0].function == "placeholder"


def test_generator_refuses_a_missing_git_directory(tmp_path: Path):
    run = subprocess.run([sys.executable, str(GENERATOR), str(tmp_path / "absent")],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "no such git directory" in run.stderr


def test_shipped_index_is_compact_and_knows_apache_tvm():
    size = sum(p.stat().st_size for p in DATA.glob("*.gz"))
    assert size <= 3_000_000
    assert (DATA / "NOTICE").read_text().count("Apache") >= 1
    history = api()
    v = history.versions
    assert v.labels[0] == "v0.6.0" and v.labels[-1] == "main"
    # Facts checked by hand with `git show TAG:path` in apache/tvm.
    assert v.after_last(history.python("tvm.auto_scheduler")) == "v0.20.0"
    assert v.after_last(history.python("tvm.te.create_schedule")) == "v0.20.0"
    assert v.first(history.python("tvm.device")) == "v0.8.0"
    assert v.first(history.get("K", "tvm.relax.frontend.torch.exported_program_translator:"
                               "mm.default")[0]) == "v0.22.0"
    assert history.rename_of("tvm.dlight.gpu.Matmul").new == "tvm.s_tir.dlight.gpu.Matmul"
    with gzip.open(DATA / "api.txt.gz", "rt") as f:
        assert f.readline().startswith("V\tv0.6.0\t")


def test_api_drift_names_the_version_on_both_sides():
    newer = "apache-tvm==0.21.0\nAssertionError: Unsupported function types ['mm.default']\n"
    f = next(f for f in explain(newer) if f.origin == "API history")
    assert "v0.22.0" in f.cause and "newer than this TVM" in f.cause and "v0.21.0" in f.cause
    gone = ("  File \"/x/site-packages/tvm/s_tir/schedule/schedule.py\", line 3, in f\n"
            "AttributeError: module 'tvm.te' has no attribute 'create_schedule'\n")
    f = next(f for f in explain(gone) if f.origin == "API history")
    assert f.title == "tvm.te.create_schedule was removed in v0.20.0"
    assert "the TVM in this log is" in f.cause  # from the traceback's file
    moved = "ModuleNotFoundError: No module named 'tvm.dlight'\n"
    f = next(f for f in explain(moved) if f.origin == "API history")
    assert "tvm.s_tir.dlight" in f.fix and "v0.24.0" in f.title


def test_error_site_names_file_function_condition_and_versions():
    log = ('File "/s/tvm/src/relax/transform/static_plan_block_memory.cc", line 597\n'
           "InternalError: Check failed: (!block_stack_.empty()) is false:\n")
    f = next(f for f in explain(log) if f.origin == "error-site index")
    assert f.groups["file"] == "src/relax/transform/static_plan_block_memory.cc"
    assert "`!block_stack_.empty()` does not hold" in f.cause and "present v0." in f.cause
    # dmlc's older form: the message follows the condition without a separator.
    old = "[18:14:07] src/codegen/codegen.cc:27: Check failed: bf != nullptr Target cuda is not enabled\n"
    f = next(f for f in explain(old) if f.origin == "error-site index")
    assert f.groups["function"] == "Build" and "v0.6.0" in f.cause


def test_every_answer_says_its_source():
    for case in cases():
        if case.split == DEV:
            for f in explain(case.log.read_text()):
                assert f.origin in ("rule", "API history", "error-site index"), (case.log, f)


def test_corpus_is_cited_and_a_quarter_is_held_out():
    rows = cases()
    assert len(rows) >= 40
    assert {c.log.name for c in rows} == {p.name for p in CORPUS.glob("*.log")}
    held = [c for c in rows if c.split == HELD_OUT]
    assert len(held) * 4 >= len(rows) and all(c.thread.startswith("https://github.com/")
                                              for c in rows)


def test_corpus_development_set_names_the_established_cause():
    """At least 80% of the development logs get an answer holding every term SOURCES.md asks
    for (the held-out quarter is measured by benchmarks/explain_corpus.py, never here)."""
    dev = [c for c in cases() if c.split == DEV]
    misses = {c.log.name: named(c, answer_text(explain(c.log.read_text()))) for c in dev}
    misses = {k: v for k, v in misses.items() if v}
    assert len(misses) <= len(dev) * 0.2, misses


def test_environment_check_runs_the_probe_in_the_interpreter(tk, tmp_path: Path):
    log = tmp_path / "f.log"
    log.write_text("ValueError: Cannot find global function tk.absent.fn\n"
                   "AttributeError: module 'tvm' has no attribute 'nd'\n"
                   "ImportError: cannot import name 'tensor' from 'tvm.runtime'\n")
    r = tk("explain", str(log), "--env", "--json")
    data = json.loads(r.stdout)
    by_id = {f["id"]: f for f in data["findings"] if f["origin"] == "environment check"}
    assert "tk.absent.fn is not registered by the TVM here" == by_id["env-global-missing"]["title"]
    assert by_id["env-name-missing"]["title"].startswith("tvm.nd does not exist in the TVM here")
    assert by_id["env-name-present"]["title"].startswith("tvm.runtime.tensor exists in the TVM here")
    assert "libtvm" in by_id["env-summary"]["cause"]
    r = tk("explain", str(log), "--env")
    assert "[environment check]" in r.stdout and "[API history]" in r.stdout


def test_source_shows_the_raising_lines_and_refuses_a_missing_tree(tk, tmp_path: Path):
    tree = tmp_path / "tvm"
    source = tree / "src/relax/transform/static_plan_block_memory.cc"
    source.parent.mkdir(parents=True)
    source.write_text("void f() {\n  int x = 1;\n  ICHECK(!block_stack_.empty());\n}\n")
    log = tmp_path / "f.log"
    log.write_text("InternalError: Check failed: (!block_stack_.empty()) is false:\n")
    r = tk("explain", str(log), "--source", str(tree))
    assert r.returncode == 0, r.stderr
    assert f"source: {source}:3:   ICHECK(!block_stack_.empty());" in r.stdout
    r = tk("explain", str(log), "--source", str(tmp_path / "absent"))
    assert r.returncode == 2 and "--source" in r.stderr
