"""A module missing inside pip's or uv's isolated build of a Python package (TVM's python/).

PEP 517 front ends build a source tree in a fresh environment holding only the requirements
its ``[build-system]`` declares (setuptools and wheel when there is no pyproject.toml), so a
module the build script imports that is not declared there is missing, whatever the user's
environment has. What TVM's python/setup.py imported and what its pyproject.toml files
declared at each release comes from TVM's history (toolkit/data/explain/build_requires.json,
by scripts/build_requires.py).
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

# What the build's own frames look like: setuptools' PEP 517 backend asked for requirements,
# or the temporary environment pip (pip-build-env-*) or uv (builds-v0/.tmp*) made for it.
_ISOLATED = re.compile(r"build_meta\.py\"?, line \d+, in (?:get_requires_for_build|build_)|"
                       r"pip-build-env-|/builds-v\d+/\.tmp|get_requires_for_build_\w+")


def _span(tags: list[str]) -> str:
    return tags[0] if len(tags) == 1 else f"{tags[0]}–{tags[-1]}"


def missing_in_isolation(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``No module named 'X'`` raised while an isolated build environment ran the build."""
    module = groups.get("mod", "").split(".")[0]
    if not module or not _ISOLATED.search(text):
        return NOT_THIS
    key = module.lower()
    releases = table("build_requires")["releases"]
    imports = [r["tag"] for r in releases if key in {m.lower() for m in r.get("setup_imports", [])}]
    declared = [(r["tag"], path) for r in releases for path, names in r["declared"].items()
                if key in names]
    cause = (f"pip/uv built the package in an isolated build environment (build isolation), "
             f"which holds only the requirements its pyproject.toml [build-system] declares, "
             f"and the build script imports {module}, which was not among them.")
    fix = (f"install {module} and build without isolation (pip install --no-build-isolation "
           f"..., uv pip install --no-build-isolation ...), or declare {module} in the "
           f"[build-system] requires of the tree's pyproject.toml")
    if imports:
        cause += (f" TVM's python/setup.py imports {module} in {_span(imports)}; ")
        if declared:
            first, path = declared[0]
            order = [r["tag"] for r in releases]  # oldest first
            before = [t for t in imports if order.index(t) < order.index(first)]
            cause += (f"a pyproject.toml declaring it ({path}) exists from {first} on"
                      + (f", none before ({_span(before)} declare no build requirements)."
                         if before else "."))
            fix += f"; TVM {first} and later declare it"
        else:
            cause += "no release declares it as a build requirement."
    return cause, fix
