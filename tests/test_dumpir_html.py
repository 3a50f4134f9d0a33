"""The dump's index.html in real headless Chromium: the DOM after the page's scripts ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_tk


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "dump"
    r = run_tk("dump-ir", "builtin:mlp", "--target", "llvm", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert run_tk("dump-ir", "page", str(out)).returncode == 0  # the page is made on first ask
    return out


def with_hash(path: Path, fragment: str) -> Path:
    # Browser.dom takes a Path and uses as_uri(); a fragment rides along in the name.
    class Fragment(type(path)):
        def as_uri(self) -> str:
            return path.as_uri() + "#" + fragment
    return Fragment(path)


def test_page_lists_every_pass_and_marks_changed_ones(page: Path, browser):
    index = json.loads((page / "index.json").read_text())
    dom = browser.dom(page / "index.html")
    rows = re.findall(r'<li data-seq="(\d+)" class="([^"]*)"', dom)
    assert [int(seq) for seq, _ in rows] == [p["seq"] for p in index["passes"]]
    changed = {int(seq) for seq, cls in rows if "changed" in cls.split()}
    assert changed == {p["seq"] for p in index["passes"] if p["change"] == "changed"}
    assert 'class="bar"' in dom and 'data-ready="1"' in dom
    assert "https://" not in (page / "index.html").read_text()  # nothing fetched from the network


def test_selecting_a_pass_renders_its_diff(page: Path, browser):
    index = json.loads((page / "index.json").read_text())
    flatten = next(p for p in index["passes"] if p["name"] == "tirx.FlattenBuffer")
    dom = browser.dom(with_hash(page / "index.html", f"pass={flatten['seq']}&func=%3Dmatmul"))
    detail = dom[dom.index('<div id="detail"'):]
    assert f"#{flatten['seq']} tirx.FlattenBuffer" in detail
    assert '<h3 class="changed-func">matmul</h3>' in detail
    assert '<h3 class="changed-func">add</h3>' not in detail  # the function filter applies
    assert '<h3 class="changed-func">matmul1</h3>' not in detail  # "=matmul": exactly that one
    added = re.findall(r'<span class="add">\+(.*?)\n</span>', detail)
    removed = re.findall(r'<span class="del">-(.*?)\n</span>', detail)
    assert any("matmul.view(" in line for line in added)
    assert any("matmul[T.int64(0), i1]" in line for line in removed)
    # The filter hides passes that never touched matmul: its history is what is left.
    shown = [int(s) for s in re.findall(r'<li data-seq="(\d+)" class="(?![^"]*hidden)', dom)]
    history = [p["seq"] for p in index["passes"] if "matmul" in p["added"]
               or "matmul" in p["removed"] or any(c["name"] == "matmul" for c in p["changed"])]
    assert shown == history


def test_input_module_and_failed_pass_show_on_the_page(tmp_path: Path, browser):
    from test_dumpir import CUSTOM_PASS

    workload = tmp_path / "custom.py"
    workload.write_text(CUSTOM_PASS)
    out = tmp_path / "dump"
    assert run_tk("dump-ir", str(workload), "-o", str(out)).returncode == 1
    assert run_tk("dump-ir", "page", str(out)).returncode == 0
    dom = browser.dom(with_hash(out / "index.html", "pass=2"))
    assert re.search(r'<li data-seq="2" class="[^"]*failed', dom)
    assert "cannot fuse matmul yet" in dom
    dom = browser.dom(with_hash(out / "index.html", "pass=input"))
    assert "def forward(" in dom


@pytest.mark.slow
def test_page_shows_lanes_codegen_and_opens_on_the_first_change(tmp_path: Path, browser):
    out = tmp_path / "cuda"
    r = run_tk("dump-ir", "builtin:mlp", "--target", "cuda -arch=sm_80", "-o", str(out))
    assert run_tk("dump-ir", "page", str(out)).returncode == 0
    assert r.returncode == 0, r.stderr
    passes = json.loads((out / "index.json").read_text())["passes"]
    dom = browser.dom(out / "index.html")
    first = next(p for p in passes if p["kind"] != "wrapper" and p["change"] != "unchanged")
    assert re.search(rf'<li data-seq="{first["seq"]}" class="[^"]*selected', dom)
    lanes = dict(re.findall(r'<li data-seq="(\d+)"[^>]*><span class="seq">\d+</span>'
                            r'<span class="lane[^"]*"[^>]*>(\w*)</span>', dom))
    assert {lanes[str(p["seq"])] for p in passes if p["name"] == "tirx.Filter"} == {"host", "device"}
    codegen = next(p for p in passes if p["kind"] == "codegen" and p["lane"] == "device")
    dom = browser.dom(with_hash(out / "index.html", f"pass={codegen['seq']}"))
    detail = dom[dom.index('<div id="detail"'):]
    assert "codegen cuda -arch=sm_80" in detail and "<h3>cuda.cu</h3>" in detail
    assert "__global__" in detail and "device module (cuda -arch=sm_80)" in detail


def test_a_failed_pass_header_names_its_first_cause(tmp_path: Path, browser):
    from test_dumpir import CUSTOM_PASS

    workload = tmp_path / "custom.py"
    workload.write_text(CUSTOM_PASS)
    out = tmp_path / "dump"
    assert run_tk("dump-ir", str(workload), "-o", str(out)).returncode == 1
    assert run_tk("dump-ir", "page", str(out)).returncode == 0
    dom = browser.dom(out / "index.html")  # no #pass: opens on the failure
    detail = dom[dom.index('<div id="detail"'):]
    assert "#2 FuseMyOps" in detail and ", ," not in detail
    assert '<p class="error">FAILED: FuseMyOps: cannot fuse matmul yet</p>' in detail
