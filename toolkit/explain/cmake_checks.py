"""The checks TVM's own CMake modules make: which releases make one, and what it rejects.

"CMake Error at cmake/modules/Hexagon.cmake:203 (message): Invalid use of ..." is a check TVM
wrote, not CMake's. Which releases have it comes from TVM's history
(toolkit/data/explain/cmake_checks.json, by scripts/cmake_checks.py); when the value it
rejects is the option's own default (toolkit/data/explain/optional_libs.json), the check
rejects a configuration that set nothing: a bug of the TVM tree in use, not of the
configuration.
"""

from __future__ import annotations

import functools
import re

from toolkit.explain import optional_libs
from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

_VAR = re.compile(r"\\\$\\\{(\w+)\\\}")


@functools.cache
def _checks() -> list[tuple[dict[str, str], re.Pattern[str], list[str]]]:
    out = []
    for check in table("cmake_checks")["checks"]:
        names = _VAR.findall(re.escape(check["text"]))
        pattern = _VAR.sub(lambda _m: r"(.*?)", re.escape(check["text"]))
        out.append((check, re.compile(pattern), names))
    return out


def _find(where: str, message: str) -> tuple[dict[str, str], dict[str, str]] | None:
    path = where.split(":", 1)[0].replace("\\", "/")
    for check, pattern, names in _checks():
        if not (path == check["file"] or path.endswith("/" + check["file"])):
            continue
        found = pattern.fullmatch(message)
        if found:
            return check, dict(zip(names, found.groups(), strict=True))
    return None


def tvm_check(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``CMake Error at cmake/modules/X.cmake:N (message):`` with a message TVM's module has,
    when its history says more than the message: the value rejected is the option's default,
    or newer releases dropped the check."""
    lines = [groups.get("head", "")] + groups.get("message", "").splitlines()
    message = " ".join(" ".join(lines).split())
    hit = _find(groups.get("where", ""), message)
    if hit is None:
        return NOT_THIS
    check, values = hit
    span = (f"{check['first']} on (to main)" if check["last"] == "main"
            else f"{check['first']} to {check['last']}, gone after {check['last']}")
    if check["first"] == "v0.6.0":
        span = span.replace("v0.6.0", "v0.6.0 or earlier", 1)
    cause = (f"TVM's own check in {check['file']} stopped the configure: \"{message}\". The "
             f"check is in TVM's releases {span} (TVM's history).")
    for name, value in values.items():
        entry = optional_libs.option_for(name[4:]) if name.startswith("USE_") else None
        default = str(entry[1]["default"]) if entry else ""
        if entry and value.strip().upper() == default.upper():
            return (f"{cause} The value it rejects, {name}={value}, is {name}'s own default "
                    f"(TVM's CMake defaults, by release): this TVM tree's check rejects a configuration "
                    "that does not set the option, a bug of the tree in use, not of the "
                    "configuration.",
                    f"update TVM to a release whose {check['file']} accepts the default (a "
                    f"release from {check['first']} on; check its module), or set {name} to a "
                    "value the check accepts")
    if check["last"] == "main":
        return NOT_THIS  # a check TVM still makes: the message itself says it all (cmake-error)
    return (f"{cause} Newer TVM does not make it.",
            f"give the option a value the message accepts, or update TVM past {check['last']}, "
            "then configure again.")
