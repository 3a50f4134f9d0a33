"""Regenerate tk's table of the checks TVM's CMake modules make, release by release.

    python scripts/cmake_checks.py REPO [--out toolkit/data/explain/cmake_checks.json]

REPO is an apache/tvm clone (bare is fine). At every release tag (v0.6.0 on) and main, each
``message(FATAL_ERROR ...)`` of cmake/**.cmake and CMakeLists.txt is recorded with its file,
its text (the quoted arguments joined as CMake joins them, ``${VAR}`` kept) and the first and
last release that has it. `tk explain` answers "CMake Error at cmake/modules/Hexagon.cmake:203
(message): Invalid use of USE_HEXAGON_EXTERNAL_LIBS=OFF ..." from it: which releases make that
check, and whether the value it rejects is the option's own default.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_MESSAGE = re.compile(r"message\s*\(\s*(?:FATAL_ERROR|SEND_ERROR)\s+((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\)",
                      re.IGNORECASE)
_QUOTED = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


def _refs(repo: Path) -> list[tuple[str, str]]:
    return [(f"refs/tags/{t}", t) for t in tvm_tags.releases(repo, 6)] + [("main", "main")]


def messages(text: str) -> list[str]:
    """The FATAL_ERROR texts of a CMake file, each as one line."""
    return [" ".join("".join(_QUOTED.findall(m.group(1))).split()) for m in _MESSAGE.finditer(text)]


def collect(repo: Path) -> list[dict[str, str]]:
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for ref, name in _refs(repo):
        files = [f for f in tvm_tags.git(repo, "ls-tree", "-r", "--name-only", ref, "cmake/").split()
                 if f.endswith(".cmake")] + ["CMakeLists.txt"]
        for path in files:
            for text in messages(tvm_tags.git(repo, "show", f"{ref}:{path}")):
                if len(text) < 20:  # too short to tell one check from another
                    continue
                entry = seen.setdefault((path, text), {"file": path, "text": text,
                                                       "first": name})
                entry["last"] = name
    return sorted(seen.values(), key=lambda e: (e["file"], e["text"]))


def main() -> None:
    tvm_tags.write_table(
        __doc__, "cmake_checks.json",
        "apache/tvm cmake/**.cmake and CMakeLists.txt message(FATAL_ERROR) at each "
        "release tag v0.6.0.. and main (scripts/cmake_checks.py)",
        lambda repo: {"checks": collect(repo)})


if __name__ == "__main__":
    main()
