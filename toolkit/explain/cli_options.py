"""A command-line program that rejects an option: the instructions were for another version.

argparse-style C++ parsers (MLC-LLM's CLI uses p-ranav/argparse) print ``Unknown argument:
--x`` and then the program's usage; the usage is what this version accepts.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

_OPTION = re.compile(r"\[(--[\w-]+)")


def unknown_option(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``Unknown argument: --opt`` followed by ``Usage: prog [...]``."""
    option, usage, prog = groups.get("opt", ""), groups.get("usage", ""), groups.get("prog", "")
    accepted = [o for o in _OPTION.findall(usage) if o not in ("--help", "--version")]
    if not accepted:
        return NOT_THIS
    return (f"{prog} does not accept {option}: the installed {prog} is another version than "
            "the one the command line was written for (its options were renamed or removed); "
            f"this one accepts {', '.join(accepted)}.",
            f"use this version's options (`{prog} --help`): the one that now takes what "
            f"{option} took is among {', '.join(accepted)}; or install the version the "
            "instructions were written for")
