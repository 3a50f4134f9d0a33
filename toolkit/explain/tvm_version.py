"""Which TVM a log came from, from what the log itself shows.

Two kinds of evidence, both read in one pass over the log's lines:

- a version written out: a wheel or egg in a path (``tvm-0.7.dev1-py3.6.egg``), a pip pin
  (``apache-tvm==0.18.0``, ``apache-tvm 0.25.0.post1``), ``TVM version: v0.25.0``;
- the traceback's files: ``.../tvm/relay/build_module.py`` existed only in some versions, so
  did ``src/relay/op/tensor/transform.cc``. The versions that have every file the log names
  (files tk's index does not know are skipped: a fork's own) bound the log's TVM.

A written version wins over files; a range of files that no version has in common is dropped
(a fork or a patched tree): tk never states a version it did not find evidence for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.explain.history import Versions, api

_WRITTEN = [
    re.compile(r"\btvm-(?P<v>\d+\.\d+)(?:\.(?P<p>\d+))?(?P<dev>\.dev\d*)?[\w.+-]*?(?:-py\d|\.egg|\.dist-info)"),
    re.compile(r"\bapache[-_]tvm(?:==| )v?(?P<v>\d+\.\d+)(?:\.(?P<p>\d+))?(?P<dev>\.dev\d*)?"),
    re.compile(r"\b(?:TVM|tvm)(?:\.__version__| version)\s*[:=]?\s*v?(?P<v>\d+\.\d+)(?:\.(?P<p>\d+))?"
               r"(?P<dev>\.dev\d*)?"),
]
_WRITTEN_HINTS = ("tvm-", "apache", "version", "Version")  # a cheap test before the patterns
_CC_FILE = re.compile(r"(?:^|[/\s\"(])(?P<file>src/(?:[\w.-]+/)+[\w.-]+\.(?:cc|h))\b")
MAX_FILES = 64  # files of a traceback consulted; more say nothing new


@dataclass
class LogVersion:
    """The versions the log's TVM may be, as a mask over the index's versions, and why."""

    mask: int
    why: str  # "written in the log: apache-tvm==0.18.0", "its traceback's files"
    versions: Versions

    def describe(self) -> str:
        # Files of the oldest indexed version are in the versions before it too.
        older = " or older" if self.mask & 1 and not self.why.startswith("written") else ""
        return self.versions.span(self.mask) + older


def infer(text: str) -> LogVersion | None:
    """The log's TVM version(s), or None when the log says nothing tk can check."""
    history = api()
    versions = history.versions
    written = None
    files_mask, files_seen = versions.all, 0
    for m in _iter(text):
        kind, value = m
        if kind == "written" and written is None:
            written = value
        elif kind == "py" and files_seen < MAX_FILES:
            mask = history.python(value)
            if mask:
                files_mask &= mask
                files_seen += 1
        elif kind == "cc" and files_seen < MAX_FILES:
            hit = history.get("P", value)
            if hit:
                files_mask &= hit[0]
                files_seen += 1
    if written is not None and versions.index_of(written[0]) < 0:
        written = None  # older than the oldest version indexed: tk knows nothing of it
    if written is not None:
        major_minor, dev, label = written
        at = versions.index_of(major_minor)
        if dev:  # 0.N.dev: after 0.(N-1), before 0.N
            lo = int(at - 0.5) if at % 1 else int(at) - 1
            mask = sum(1 << v for v in (lo, lo + 1) if 0 <= v < len(versions.labels))
        elif at % 1:  # a release the index does not hold (0.27 before its tag): main's side
            mask = 1 << min(len(versions.labels) - 1, int(at + 0.5))
        else:
            mask = 1 << int(at)
        if mask:
            return LogVersion(mask, f"written in the log ({label})", versions)
    if files_seen and files_mask and files_mask != versions.all:
        files = "the TVM source file" if files_seen == 1 else f"the {files_seen} TVM source files"
        return LogVersion(files_mask, f"from {files} its traceback names", versions)
    return None


def _iter(text: str):
    """("written", ((major, minor), dev, label)), ("py", module) and ("cc", file) evidence."""
    for line in text.splitlines():
        if len(line) > 2000:
            line = line[:2000]
        if ("tvm" in line or "TVM" in line) and any(k in line for k in _WRITTEN_HINTS):
            for pattern in _WRITTEN:
                m = pattern.search(line)
                if m:
                    major, minor = (int(x) for x in m.group("v").split("."))
                    yield "written", ((major, minor), bool(m.group("dev")), m.group(0))
                    break
        if '.py", line ' in line:
            module = _module_of_frame(line)
            if module:
                yield "py", module
        if "src/" in line:
            m = _CC_FILE.search(line)
            if m:
                yield "cc", m.group("file")


def _module_of_frame(line: str) -> str | None:
    """``File ".../site-packages/tvm/relay/build_module.py", line 9`` -> tvm.relay.build_module
    (the last ``tvm`` directory of the path: a source tree's python/tvm counts once)."""
    end = line.find('.py", line ')
    if end < 0:
        return None
    path = line[:end].replace("\\", "/")
    start = path.rfind("/tvm/")
    if start < 0:
        return None
    parts = path[start + 1:].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if not all(p.isidentifier() for p in parts) or any(
            p.startswith("_") and p != "_ffi" for p in parts[1:]):
        return None
    return ".".join(parts)
