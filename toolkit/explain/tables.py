"""The data explain ships (toolkit/data/explain/): the index of TVM's history that
:mod:`toolkit.explain.history` reads, and the small JSON tables the generators in scripts/
write (``NAME.json`` by ``scripts/NAME.py``), each read once, on first use."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "explain"


@cache
def table(name: str) -> dict[str, Any]:
    """The shipped table ``NAME.json``."""
    return json.loads((DATA / f"{name}.json").read_text())
