#!/usr/bin/env python
"""Ready-made check: pytest node ids (tests/python/relax/test_x.py::test_y ...).

Runs in the step's worktree with the step's build in the environment. pytest's exit codes
become bisect verdicts: 0 good, 1 (a test failed) or 2 (collection failed: an import
broke) bad, 4/5 (no such test / nothing collected: the test does not exist at this commit)
skip, anything else (pytest itself broke) skip.
"""

import subprocess
import sys

VERDICT = {0: 0, 1: 1, 2: 1, 4: 125, 5: 125}

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: pytest NODEID [NODEID...] [pytest options]", file=sys.stderr)
        sys.exit(126)
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *sys.argv[1:]]
    rc = subprocess.call(argv)
    sys.exit(VERDICT.get(rc, 125))
