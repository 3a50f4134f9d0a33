"""Which TVM releases read a name of a package TVM imports (toolkit/explain/dependency_reads.py,
table by scripts/dependency_reads.py): the generator on a real git repository with release tags,
and tk explain's answer for a package lacking such a name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from explain_tables import generate, git

from toolkit.explain import explain

REPO = Path(__file__).resolve().parent.parent



def test_table_records_reads_stops_and_hasattr_guards(tmp_path: Path) -> None:
    repo = tmp_path / "tvm"
    (repo / "python" / "tvm").mkdir(parents=True)
    code = repo / "python" / "tvm" / "front.py"
    git(repo, "init", "-q")
    steps = ["import numpy as np\nx = np.oldname(1) + np.keep(2)\n",
             "import numpy as np\nif hasattr(np, 'keep'):\n    x = np.keep(2)\n",
             "import numpy as np\n# np.oldname is gone\n"]
    for minor, body in zip((6, 7, 8), steps):
        code.write_text(body)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"v{minor}")
        git(repo, "tag", f"v0.{minor}.0")
    data = generate("dependency_reads.py", repo)
    assert data["releases"] == ["v0.6.0", "v0.7.0", "v0.8.0"]
    reads = data["reads"]["numpy"]
    assert reads["oldname"] == [0, 0, "python/tvm/front.py", -1]  # a comment is not a read
    assert reads["keep"] == [0, 1, "python/tvm/front.py", 1]


def _cause(text: str) -> str:
    found = [f for f in explain(text) if f.id == "python-dependency-attribute"]
    assert found
    return f"{found[0].cause} {found[0].fix}"


def test_live_a_name_tvm_stopped_reading(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text("import numpy\nnumpy.asscalar(numpy.float32(1))\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert "has no attribute 'asscalar'" in run.stderr
    said = _cause(run.stderr)
    assert "reads numpy.asscalar in v0.7.0" in said and "update TVM to v0.8.0" in said


def test_a_name_tvm_reads_only_where_the_package_has_it() -> None:
    log = ("  File \"/opt/tvm/python/tvm/runtime/ndarray.py\", line 40, in numpyasarray\n"
           "AttributeError: module 'numpy' has no attribute 'float_'\n")
    said = _cause(log)
    assert "from v0.16.0 it checks hasattr(numpy, 'float_')" in said
    assert "update TVM to v0.16.0" in said
