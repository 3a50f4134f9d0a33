"""Regenerate the table of which wheels PyPI publishes for apache-tvm and apache-tvm-ffi.

    python scripts/pypi_wheels.py [--out toolkit/data/explain/wheels.json]

Reads PyPI's JSON API (https://pypi.org/pypi/NAME/json) once per package and writes, for each
release, its wheels as "PYTHON ABI PLATFORM" (Python tag, ABI tag, platform) with the platform reduced to the
families pip tells apart (linux-x86_64, linux-aarch64, macos-arm64, macos-x86_64, win-amd64,
win-arm64, any), plus the date the script ran: `tk explain` answers "no matching
distribution" from it, and says that date. Releases PyPI no longer lists (apache-tvm before
0.25.0 was removed from PyPI) are not in it. The network is needed here only; tk and its
tests read the checked-in file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import urllib.request
from pathlib import Path

PACKAGES = ("apache-tvm", "apache-tvm-ffi")
OUT = Path(__file__).resolve().parent.parent / "toolkit" / "data" / "explain" / "wheels.json"

_PLATFORMS = [(re.compile(r"manylinux.*x86_64|linux_x86_64"), "linux-x86_64"),
              (re.compile(r"linux.*aarch64"), "linux-aarch64"),
              (re.compile(r"macosx.*arm64"), "macos-arm64"),
              (re.compile(r"macosx.*(?:x86_64|intel|universal)"), "macos-x86_64"),
              (re.compile(r"win_amd64"), "win-amd64"), (re.compile(r"win_arm64"), "win-arm64"),
              (re.compile(r"^any$"), "any")]


def platform_family(tag: str) -> str:
    """The platform family a wheel's platform tag (possibly dotted, several tags) is for."""
    for pattern, family in _PLATFORMS:
        if pattern.search(tag):
            return family
    return tag


def wheel_tags(filename: str) -> tuple[str, str, str]:
    """(python, abi, platform family) of a wheel file name NAME-VER(-BUILD)-PY-ABI-PLAT.whl."""
    python, abi, plat = filename[: -len(".whl")].split("-")[-3:]
    return python, abi, platform_family(plat)


def fetch(package: str) -> dict[str, list[str]]:
    """Each release of ``package`` that has wheels: its wheels as "PYTHON ABI PLATFORM"."""
    with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as reply:
        releases = json.load(reply)["releases"]
    table = {}
    for version, files in releases.items():
        wheels = sorted({wheel_tags(f["filename"]) for f in files
                         if f["filename"].endswith(".whl") and not f.get("yanked")})
        if wheels:
            table[version] = [" ".join(w) for w in wheels]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    table = {"fetched": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
             "source": "https://pypi.org/pypi/NAME/json",
             "packages": {p: fetch(p) for p in PACKAGES}}
    args.out.write_text(json.dumps(table, indent=0, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{args.out}: {sum(len(v) for v in table['packages'].values())} releases")


if __name__ == "__main__":
    main()
