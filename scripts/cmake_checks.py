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

import argparse
import json
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "toolkit" / "data" / "explain" / "cmake_checks.json"
_MESSAGE = re.compile(r"message\s*\(\s*(?:FATAL_ERROR|SEND_ERROR)\s+((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\)",
                      re.IGNORECASE)
_QUOTED = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


def _git(repo: Path, *args: str) -> str:
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"git {' '.join(args)}: {run.stderr.strip()}")
    return run.stdout


def _refs(repo: Path) -> list[tuple[str, str]]:
    tags = [t for t in _git(repo, "tag").split() if re.fullmatch(r"v0\.\d+\.0", t)]
    tags.sort(key=lambda t: int(t.split(".")[1]))
    return [(f"refs/tags/{t}", t) for t in tags if int(t.split(".")[1]) >= 6] + [("main", "main")]


def messages(text: str) -> list[str]:
    """The FATAL_ERROR texts of a CMake file, each as one line."""
    return [" ".join("".join(_QUOTED.findall(m.group(1))).split()) for m in _MESSAGE.finditer(text)]


def collect(repo: Path) -> list[dict[str, str]]:
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for ref, name in _refs(repo):
        files = [f for f in _git(repo, "ls-tree", "-r", "--name-only", ref, "cmake/").split()
                 if f.endswith(".cmake")] + ["CMakeLists.txt"]
        for path in files:
            for text in messages(_git(repo, "show", f"{ref}:{path}")):
                if len(text) < 20:  # too short to tell one check from another
                    continue
                entry = seen.setdefault((path, text), {"file": path, "text": text,
                                                       "first": name})
                entry["last"] = name
    return sorted(seen.values(), key=lambda e: (e["file"], e["text"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    table = {"source": "apache/tvm cmake/**.cmake and CMakeLists.txt message(FATAL_ERROR) at "
                       "each release tag v0.6.0.. and main (scripts/cmake_checks.py)",
             "checks": collect(args.repo)}
    args.out.write_text(json.dumps(table, indent=0) + "\n")
    print(f"{len(table['checks'])} checks -> {args.out}")


if __name__ == "__main__":
    main()
