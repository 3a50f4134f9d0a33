"""A finalizer that ran while Python was shutting down: ``Exception ignored in: <function
X.__del__ ...>`` over an error that says a module was already torn down (``KeyError: 'psutil'``
from ``sys.modules``, ``sys.meta_path is None``, a module global that is None).

Python clears modules at exit in an order it does not promise, and runs the ``__del__`` of
objects still alive (a process pool, a session) after some of them are gone: a finalizer that
uses a module imported at the top of its file finds it half torn down. The function takes a
rule's groups and the text near the match (:mod:`toolkit.explain.rules`).
"""

from __future__ import annotations


def finalizer(groups: dict[str, str], _text: str) -> tuple[str, str]:
    where = groups["func"]
    gone = groups.get("key") or groups.get("name") or ""  # else sys.meta_path was None
    what = f"module {gone!r} was already removed" if groups.get("key") else \
        f"the global {gone!r} was already cleared" if gone else "the import system was torn down"
    return (f"{where} ran while Python was shutting down, after {what}: the finalizer uses a "
            "module imported at the top of its file (or a module global), and at interpreter "
            "exit Python clears modules in no promised order before it runs the __del__ of "
            "objects still alive. The program's own work finished; this is its exit.",
            f"import {gone or 'what it needs'} lazily inside the finalizer (or keep a reference "
            "to it on the object), and close or kill the object explicitly before exit (a "
            "context manager, atexit) rather than leaving it to __del__")
