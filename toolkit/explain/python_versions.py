"""The Python version each TVM release requires, for its own check and pip's.

TVM's package refuses an interpreter older than it supports at import ("The minimal Python
requirement is Python 3.6") and, from pyproject.toml on, pip refuses to install it ("requires
a different Python"). Which releases ask for which Python comes from TVM's history
(toolkit/data/explain/python_versions.json, by scripts/python_versions.py).
"""

from __future__ import annotations

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

# The distributions that install TVM's own Python package (and so carry its requires-python).
TVM_DISTRIBUTIONS = {"tvm", "apache-tvm", "tlcpack", "tlcpack-nightly", "tlcpack-cu"}


def _releases() -> list[dict[str, str]]:
    return table("python_versions")["releases"]


def _asking(key: str, version: str) -> tuple[str, str]:
    """('v0.7.0 to v0.20.0 (python/tvm/_ffi/_pyversion.py); v0.6.0 asked for Python 3.5',
    'v0.7.0') for the releases whose ``key`` (check or metadata) is ``version``."""
    releases = _releases()
    hits = [i for i, r in enumerate(releases) if r.get(key) == version]
    if not hits:
        return "", ""
    first, last = releases[hits[0]], releases[hits[-1]]
    span = first["tag"] if first is last else f"{first['tag']} to {last['tag']}"
    before = next((r for r in reversed(releases[:hits[0]]) if r.get(key)), None)
    earlier = (f"; {before['tag']} asked for Python {before[key]}" if before else
               f"; releases before {first['tag']} have no such requirement")
    return f"{span} ({first[f'{key}_file']}){earlier}", first["tag"]


def python_check(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """TVM's own import-time check: ``The minimal Python requirement is Python 3.6``."""
    version = groups.get("ver", "")
    which, since = _asking("check", version)
    if not which:
        return NOT_THIS
    return (f"the interpreter is older than Python {version}, which TVM's import-time check "
            f"requires in the releases {which} (TVM's history). It is TVM refusing this "
            "Python on purpose, not a bug.",
            f"run TVM with Python {version} or newer (a virtualenv or conda environment of it); "
            f"if this Python must stay, use a TVM release older than {since}")


def pip_python(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """pip's ``Package 'apache-tvm' requires a different Python: 3.8.10 not in '>=3.9'``."""
    dist, have, version = groups.get("dist", ""), groups.get("have", ""), groups.get("need", "")
    which, since = _asking("metadata", version)
    if dist.lower().replace("_", "-") not in TVM_DISTRIBUTIONS or not which:
        return NOT_THIS
    return (f"pip will not install {dist} for Python {have}: TVM's packaging (requires-python) "
            f"asks for Python {version} or newer in the releases {which} (TVM's history).",
            f"install it into a Python {version} or newer environment, or pick a TVM release "
            f"older than {since} whose requires-python admits Python {have}")
