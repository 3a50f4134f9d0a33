"""Where tk keeps what outlives one command: the cache (``$TK_CACHE``, else ``~/.cache/tk``).

Everything tk stores lives under it, each chore in a folder of its own: ``builds/``,
``objects/``, ``packs/`` and ``wheels/`` (the build store), ``trees/`` and ``tools.json``
(what a tree and the toolchain were found to be), ``bisect/`` and ``bisect-verdicts/``
(bisections and their verdicts), ``bisect-stacks/`` (the commit a patch stack made on each
base), ``fork/`` (tk's own repository and worktrees for each fork), ``images/`` (container
image logs), ``last-failure.log``.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("TK_CACHE") or Path.home() / ".cache" / "tk")
