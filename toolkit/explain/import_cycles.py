"""``cannot import name X from partially initialized module M`` inside TVM's own package.

Python says "partially initialized" when M is still running its own imports. Two shapes:
M's file is an outer frame of the same traceback (M imports something that imports M back:
a cycle among TVM's modules, a bug of that TVM tree), or M appears only innermost and X is
a subpackage of M (``from . import X``) the installation does not have: setuptools leaves
out a package directory without ``__init__.py``, so a wheel can ship without it.
"""

from __future__ import annotations

from toolkit.explain.frames import frames_with_code
from toolkit.explain.refine import NOT_THIS


def _module_path(module: str) -> str:
    return module.replace(".", "/")


def partially_initialized(groups: dict[str, str], text: str) -> tuple[str, str]:
    """Name the cycle from the traceback's frames, or the subpackage a package lacks."""
    name, module = groups.get("name", ""), groups.get("module", "")
    if not module.startswith("tvm."):
        return NOT_THIS
    frames = frames_with_code(text)
    mod = _module_path(module)
    own = [i for i, (path, _) in enumerate(frames)
           if path.endswith((f"{mod}.py", f"{mod}/__init__.py"))]
    if own and own[0] < len(frames) - 1:
        chain = [path.rsplit("/python/", 1)[-1] for path, _ in frames[own[0]:]]
        return (f"a circular import among TVM's own modules: {module} was still importing "
                f"(through {' -> '.join(chain)}) when a module of that chain imported "
                f"{name} from it. The cycle is in this TVM tree's python/ code, not in the "
                "script: apache/tvm has fixed such regressions by moving the import into the "
                "function that needs it.",
                "update TVM to a newer commit or release (check out the fix of this cycle, "
                "or a release after the commit that introduced it; tk bisect finds that "
                "commit), or move that module-level import into the function that uses it")
    if own and f"from . import {name}" in frames[own[-1]][1]:
        return (f"{module} imports its subpackage {name} ({module}.{name}) and Python could "
                "not: when the installed package has no "
                f"{mod}/{name}/__init__.py, the wheel or install left that package out "
                "(setuptools skips a package directory without __init__.py) and Python "
                "reports it as a circular import; look for that folder in the site-packages "
                "path the traceback shows.",
                f"install a newer wheel (or nightly) of this TVM whose packaging includes "
                f"{module}.{name}, or install from the source tree (pip install -e python/ "
                "after building)")
    return NOT_THIS
