"""What tk bisect upstream costs against the same bisection by hand, and what it saves the
second time.

On the fork of real apache/tvm history that tests/test_fork.py uses (tests/fork_helpers.py:
main at the v0.26.0 branch point plus the fork's four commits; TK_TVM_GIT names the history),
with three planted upstream commits in main's next 35 (one where the fork's first patch
conflicts, its revert, and the rename that breaks the fork's API check), measured side by side
in one run, the check needing no build:

- ``tk bisect upstream`` from an empty cache: wall and CPU time (tk and everything it ran),
  probes, probes skipped because the patches do not apply;
- ``git bisect run`` in a clone, each step cherry-picking the fork's commits (exit 125 where
  they do not apply) before the same check, then resetting - the manual way: wall and CPU,
  the ratio tk / git;
- ``tk bisect upstream --restart``: every verdict known, wall and CPU against the first.

    python benchmarks/fork_upstream.py
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

CHECK = "python tests/fork/check_api.py"


def timed(argv: list[str], **kw: object) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``argv``; its result, wall seconds and CPU seconds of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc, wall, cpu


def main() -> None:
    import pytest  # tvm_git() skips through pytest when there is no history
    from fork_helpers import BRANCH_POINT, Edit, git, make_fork, plant

    if not os.environ.get("TK_TVM_GIT"):
        sys.exit("set TK_TVM_GIT to an apache/tvm git directory")
    tmp = Path(tempfile.mkdtemp(prefix="tk-fork-bench-"))
    try:
        shas = make_fork(tmp / "tvm", base=BRANCH_POINT)
    except pytest.skip.Exception as e:
        sys.exit(str(e))
    repo = tmp / "tvm"
    init = "python/tvm/relax/transform/__init__.py"
    last = "from . import legalize_ops\n"
    planted, tip = plant(repo, [
        Edit(15, init, last, last + "from .upstream_pass import UpstreamPass\n", "planted\n"),
        Edit(19, init, last + "from .upstream_pass import UpstreamPass\n", last, "revert\n"),
        Edit(24, "python/tvm/relax/expr_functor.py", "mutator = derived_object",
             "expr_mutator = derived_object", "rename\n"),
    ])
    git(repo, "update-ref", "refs/remotes/upstream/planted", tip)
    env = {**os.environ, "TK_CACHE": str(tmp / "cache"),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    tk = [sys.executable, "-m", "toolkit", "bisect", "upstream", "--onto", "upstream/planted",
          "--no-build", "--check", CHECK, "--json"]
    load = os.getloadavg()

    first, tk_wall, tk_cpu = timed(tk, cwd=repo, env=env)
    if first.returncode != 0:
        sys.exit(f"tk bisect upstream failed: {first.stderr[-2000:]}")
    data = json.loads(first.stdout)
    assert data["first_bad"]["hash"] == planted[2], data["first_bad"]

    by_hand = tmp / "by-hand"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(by_hand)], check=True)
    patches = [shas[n] for n in ("python_pass", "cpp_pass", "target", "ir_node")]
    # A pick that stops leaves git's sequencer behind: --quit, or every later pick refuses.
    step = (f"git -c user.name=b -c user.email=b@b cherry-pick --no-commit {' '.join(patches)} "
            ">/dev/null 2>&1 || { git cherry-pick --quit; git reset -q --hard; git clean -qfd; "
            f"exit 125; }}; {CHECK}; rc=$?; git reset -q --hard; git clean -qfd; exit $rc")
    git(by_hand, "bisect", "start", tip, BRANCH_POINT)
    manual, git_wall, git_cpu = timed(["git", "bisect", "run", "sh", "-c", step], cwd=by_hand)
    found = git(by_hand, "rev-parse", "refs/bisect/bad")
    assert found == planted[2], (found, manual.stdout[-2000:])
    git_steps = manual.stdout.count("running ")

    again, known_wall, known_cpu = timed([*tk, "--restart"], cwd=repo, env=env)
    known = json.loads(again.stdout)
    print(f"fork of apache/tvm at {BRANCH_POINT[:10]}, 4 commits of its own; 38 upstream "
          f"commits, 3 planted; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on "
          f"{os.cpu_count()} cores")
    print(f"tk bisect upstream:            {tk_wall:6.1f} s wall, {tk_cpu:6.1f} s CPU, "
          f"{data['probes']} probes, {sum(s['verdict'] == 'skip' for s in data['steps'])} "
          f"skipped (patches do not apply), culprit confirmed: {data['confirmed']}")
    print(f"git bisect run, patches by hand: {git_wall:6.1f} s wall, {git_cpu:6.1f} s CPU, "
          f"{git_steps} steps, no confirmation")
    print(f"  ratio tk / git: {tk_wall / git_wall:.2f} wall, {tk_cpu / git_cpu:.2f} CPU")
    print(f"tk bisect upstream again:      {known_wall:6.1f} s wall, {known_cpu:6.1f} s CPU, "
          f"{known['known']} of {known['probes']} verdicts known; ratio to the first "
          f"{known_wall / tk_wall:.2f} wall, {known_cpu / tk_cpu:.2f} CPU")
    print(f"(kept in {shlex.quote(str(tmp))})")


if __name__ == "__main__":
    main()
