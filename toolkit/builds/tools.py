"""What a host tool says about itself (``cmake --version``), asked once per installed binary.

Pre-flight and the toolchain facts of a record run ``cmake``, ``ninja``, ``ccache`` and the
compiler with ``--version``: a quarter of a second each on a loaded machine, and most of a
no-op rebuild. The answer is kept in ``$TK_CACHE/tools.json`` under the binary's resolved path,
size and mtime, so an upgraded tool (a new file) is asked again.

The same cache knows which binary ``cmake`` really is (``cmake_binary``): a pyenv shim and
pip's console script in front of it cost 0.2-0.4 s per call, paid at every build step of a
bisection. Its version is asked of that binary too, so a machine's first build runs the
wrappers once, not once per question.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess


@functools.cache
def tool_output(argv: tuple[str, ...]) -> str | None:
    """stdout + stderr of ``argv`` (a tool's --version), or None when it does not run."""
    exe = shutil.which(argv[0])
    if not exe:
        return None
    real = os.path.realpath(exe)
    try:
        st = os.stat(real)
    except OSError:
        return None
    key = f"{real} {st.st_size} {st.st_mtime_ns} {' '.join(argv[1:])}"
    path, cached = _cache()
    if key in cached:
        return cached[key]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout + proc.stderr
    if proc.returncode == 0:
        _save(path, {**_cache()[1], key: out})
    return out


# Wrappers that add nothing to the CMake they start: a pyenv shim, pip's console script.
PLAIN_WRAPPERS = (b'/libexec/pyenv" exec "$program"', b"\nfrom cmake import cmake\n")


def cmake_binary() -> str:
    """The CMake executable that ``cmake`` on PATH ends up running, as CMake itself names it
    (``CMAKE_COMMAND``), when ``cmake`` is a wrapper that adds nothing (``PLAIN_WRAPPERS``), so
    that builds start it directly; otherwise, or when it cannot tell, ``cmake`` (a site's own
    wrapper may set what its CMake needs)."""
    from toolkit.paths import cache_root

    exe = shutil.which("cmake")
    try:
        with open(os.path.realpath(exe or ""), "rb") as f:
            head = f.read(4096)
    except OSError:
        return "cmake"
    if not head.startswith(b"#!") or not any(w in head for w in PLAIN_WRAPPERS):
        return "cmake"
    script = cache_root() / "cmake-command.cmake"
    if not script.exists():
        try:
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text('message("${CMAKE_COMMAND}")\n')
        except OSError:
            return "cmake"
    out = tool_output(("cmake", "-P", str(script)))
    real = out.strip().splitlines()[-1] if out and out.strip() else ""
    return real if os.path.isabs(real) and os.access(real, os.X_OK) else "cmake"


def _cache() -> tuple[str, dict[str, str]]:
    from toolkit.paths import cache_root

    path = str(cache_root() / "tools.json")
    try:
        with open(path) as f:
            data = json.load(f)
        return path, data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return path, {}


def _save(path: str, data: dict[str, str]) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache: without it the tool is asked again
