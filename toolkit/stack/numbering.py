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

from toolkit.stack.compat import same_children

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
        # Identity first, then the new object's fields; a hash only when those differ.
        if before is after:
            return False
        if before.keys() != after.keys():
            return True
        return any(not f.same_as(g) and not same_children(f, g) and self._hash(f) != self._hash(g)
                   for n, f in before.items() for g in (after[n],))


def functions(mod: Any) -> Functions:
    """A module's functions by name: the snapshot numbering and recording compare."""
    return _by_name(mod.functions)


def _by_name(function_map: Any) -> Functions:
    return {gv.name_hint: f for gv, f in function_map.items()}


class Snapshots:
    """:func:`functions` of each module the hooks see, read again only when the module's
    function map is another object than last time.

    Most passes leave a module's map alone, and reading 200 functions through the FFI costs
    about 1 ms. The map held here cannot change under it: a pass that adds or replaces a
    function copies a map someone else references before changing it (copy on write). The
    dict handed back is shared between calls: callers must not change it.
    """

    def __init__(self) -> None:
        self._map: Any = None
        self._funcs: Functions = {}

    def __call__(self, mod: Any) -> Functions:
        current = mod.functions
        if self._map is None or not current.same_as(self._map):
            self._map, self._funcs = current, _by_name(current)
        return self._funcs
