"""The one numbering of a compile's passes, shared by dump-ir and ``tk bisect passes``.

A pass's number is its position in the order the pass instrument saw things start:

- every pass the instrument sees gets the next number when it starts (``run_before_pass``),
  wrappers (``_pipeline``, ``sequential``, ``tirx.SplitHostDevice``...) and the passes nested
  in them included;
- a wrapper's own work - the change it makes itself before its first or after its last nested
  pass - gets the next number where it happens, when it changed a function (a new but
  structurally equal module is no work).

dump-ir's records are numbered so (``index.json``'s ``seq``, ``tk dump-ir show``, the page's
``#pass=N``); pass bisection numbers its culprit so from its full compile; codegen records
follow the last pass. Deciding own work needs the modules, so this runs inside the TVM under
test, on the compile's thread, at the instrument's hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Functions = dict[str, Any]  # name -> function object of one module snapshot


@dataclass
class _Open:
    funcs: Functions  # the module as the pass received it
    children: int = 0
    last_out: Functions | None = None  # its last nested pass's output


class PassNumbering:
    """Hand out numbers as the instrument's hooks fire; ``hash`` is TVM's structural hash."""

    def __init__(self, hash: Callable[[Any], int]) -> None:
        self._hash = hash
        self._open: list[_Open] = []
        self.count = 0  # numbers handed out so far

    def start(self, funcs: Functions) -> tuple[int | None, int]:
        """A pass starts on ``funcs``: (number of its wrapper's own work before it, if the
        wrapper changed the module before its first nested pass; the pass's number)."""
        own = None
        parent = self._open[-1] if self._open else None
        if parent is not None:
            if parent.children == 0 and self._changed(parent.funcs, funcs):
                own = self._next()
            parent.children += 1
        self._open.append(_Open(funcs))
        return own, self._next()

    def end(self, funcs: Functions) -> int | None:
        """The innermost pass ended with ``funcs``: the number of its own work after its last
        nested pass, if it changed the module then."""
        done = self._open.pop()
        if self._open:
            self._open[-1].last_out = funcs
        if done.children and done.last_out is not None and self._changed(done.last_out, funcs):
            return self._next()
        return None

    def abandon(self) -> None:
        """The compile raised: the passes still open never end."""
        self._open.clear()

    def _next(self) -> int:
        self.count += 1
        return self.count - 1

    def _changed(self, before: Functions, after: Functions) -> bool:
        # By function, not by module: passes such as SplitHostDevice update the IRModule in
        # place (IRModule's operator-> is not copy-on-write), so the module stays "the same".
        # Identity first; a hash only for a function handed back as a new object.
        if before.keys() != after.keys():
            return True
        return any(not f.same_as(after[n]) and self._hash(f) != self._hash(after[n])
                   for n, f in before.items())


def functions(mod: Any) -> Functions:
    """A module's functions by name: the snapshot numbering and recording compare."""
    return {gv.name_hint: f for gv, f in mod.functions.items()}
