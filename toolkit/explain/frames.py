"""What a log's own tracebacks say about where an error was raised.

A failure inside TVM usually prints more than its message: the C++ backtrace (dmlc's
``[bt] (1) libtvm.so(tvm::relay::LayoutTransformRel(...)+0x118)``, libbacktrace's
``1: tvm::relax::StorageAllocatorInit::CreateToken(...)`` with ``at src/...cc:597``, tvm-ffi's
``File "src/relax/...cc", line 597, in tvm::relax::...``), the file and line of a failed check
(``src/relay/op/tensor/transform.cc:2382: Check failed``) and Python frames (``File
".../tvm/s_tir/dlight/gpu/gemv.py", line 291, in apply``). :mod:`toolkit.explain.raised` uses
them to tell apart checks that print the same message: the one at the line the log shows, in
a function its backtrace names, nearest the error line.

One pass over the log's lines; only lines holding a cheap literal (``tvm``, ``src/``,
``.py"``, ``include/``) are searched, each up to ``MAX_LINE`` characters, and at most
``MAX_FRAMES`` frames are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_LINE = 2000
MAX_FRAMES = 400
# tvm::relay::LayoutTransformRel(  tvm::tir::TryConstFold<tvm::tir::Div>(
CPP = re.compile(r"\btvm((?:::~?[A-Za-z_]\w*(?:<[^()<>]*(?:<[^()<>]*>[^()<>]*)*>)?)+)\s*\(")
TEMPLATE = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
_MANGLED = re.compile(r"_ZNK?(3tvm\w+)")
# src/relay/op/tensor/transform.cc:2382   "src/x.cc", line 597   at /a/src/x.cc:597
# (also TVM's JNI and web runtime sources: jvm/native/src/main/native/x.h, web/emcc/x.cc)
_PLACE = re.compile(r"(?:^|[/\s\"(])((?:jvm/native/src/main/native/|web/emcc/|(?:src|include)/"
                    r"(?:[\w.-]+/)+)[\w.-]+\.(?:cc|h|cpp|cu|mm))(?::(\d+)|\", line (\d+))?")
# A place printed without its tree's top directory ('tir/transforms/x.cc", line 157'): the
# path from src/ (or include/, for tvm/...) with its first part cut off; a line is required.
_CUT_PLACE = re.compile(r"(?:^|[\s\"(])((?:[A-Za-z_][\w.-]*/)+[\w.-]+\.(?:cc|h|cpp|cu|mm))"
                        r"(?::(\d+)|\", line (\d+))")
_CUT_EXTS = (".cc:", ".cc\"", ".h:", ".h\"", ".cpp", ".cu:", ".cu\"", ".mm:", ".mm\"")
_PY = re.compile(r"File \"[^\"]*/(tvm/(?:\w+/)*\w+\.py)\", line (\d+)(?:, in (\w+))?")
# Any Python frame, also one a user cut short ('prepare_model_lib.py", line 39, in main'), and
# pytest's and editors' FILE.py:LINE form ('tvm/python/tvm/script/parser.py:364').
PY_ANY = re.compile(r"(?:File \")?(?P<path>[^\"\s]*?[\w.-]+\.py)\", line (?P<line>\d+)"
                    r"(?:, in (?P<func>[\w<>.]+))?|(?P<path2>[\w./\\-]+\.py):(?P<line2>\d+)\b")


def python_frames(text: str) -> list[tuple[str, int, str]]:
    """The Python frames ``text`` shows, in order: (path as printed, line, function or "")."""
    return [(m.group("path") or m.group("path2"), int(m.group("line") or m.group("line2")),
             m.group("func") or "") for m in PY_ANY.finditer(text)]


# A traceback's frame and the source line Python prints under it.
_PY_CODE = re.compile(r"File \"(?P<path>[^\"\n]+)\", line \d+, in [^\n]*\n\s*(?P<code>[^\n]*)")


def frames_with_code(text: str, start: int = 0, end: int | None = None
                     ) -> list[tuple[str, str]]:
    """The Python frames of ``text[start:end]`` in order: (path as printed, with forward
    slashes; the source line under it, stripped)."""
    return [(m.group("path").replace("\\", "/"), m.group("code").strip())
            for m in _PY_CODE.finditer(text, start, len(text) if end is None else end)]


def foreign(path: str) -> bool:
    """Is the Python file ``path`` (as a traceback prints it) outside TVM and tvm_ffi: the
    user's own code or another project's?"""
    parts = re.split(r"[/\\]", path)
    return not any(p in ("tvm", "tvm_ffi") for p in parts[:-1])


def tvm_python_tail(path: str) -> str:
    """The part of a traceback's Python path from its last ``tvm``/``tvm_ffi`` package
    directory on (``tvm/contrib/nvcc.py``), as TVM's own tree names it; "" for a foreign
    file."""
    parts = re.split(r"[/\\]", path)
    at = max((i for i, p in enumerate(parts[:-1]) if p in ("tvm", "tvm_ffi")), default=-1)
    return "/".join(parts[at:]) if at >= 0 else ""


@dataclass
class Frames:
    """The functions, source files and lines a log's tracebacks name, each with the log lines
    (0-based) where it appears."""

    functions: dict[str, list[int]] = field(default_factory=dict)  # "relay::LayoutTransformRel"
    places: list[tuple[str, int, int, str]] = field(default_factory=list)  # file, line, log
    # line, the frame's function ("" when the frame does not say)
    files: set[str] = field(default_factory=set)  # src/..., include/..., python/tvm/...
    py_functions: dict[str, list[int]] = field(default_factory=dict)  # "FILE:function"
    # every Python frame, TVM's or not: (path as printed, line, log line, function)
    py_places: list[tuple[str, int, int, str]] = field(default_factory=list)
    _by_file: tuple[dict[str, set[int]], dict[str, set[int]]] | None = field(default=None,
                                                                             repr=False)
    # log lines of Python frames whose source line (printed under them) is a raise or an
    # assert: the frame that raised, even where the traceback was cut above the error
    py_raising: set[int] = field(default_factory=set)

    def innermost(self, at: int) -> tuple[str, int, int, str] | None:
        """The frame nearest the error on log line ``at``: the last one before it (Python's
        and tvm-ffi's tracebacks end with the innermost frame), else the first after it
        (dmlc's and libbacktrace's ``0:`` frame follows the message)."""
        before = [p for p in self.places if at - 80 <= p[2] <= at]
        if before:
            return max(before, key=lambda p: p[2])
        after = [p for p in self.places if at < p[2] <= at + 40]
        return min(after, key=lambda p: p[2]) if after else None

    def innermost_python(self, at: int) -> tuple[str, int, int, str] | None:
        """The last Python frame at or before log line ``at`` (within 80 lines): the frame
        that raised a Python exception printed there."""
        before = [p for p in self.py_places if at - 80 <= p[2] <= at]
        return max(before, key=lambda p: p[2]) if before else None

    def function_near(self, function: str, file: str, at: int) -> int | None:
        """How many log lines from ``at`` the nearest frame of ``function`` (a site's
        enclosing function, ``Class::method`` or ``Class.method``) is; None if none is."""
        if not function:
            return None
        if file.endswith(".py"):
            seen = self.py_functions.get(f"{file}:{function.rsplit('.', 1)[-1]}", [])
        else:
            parts = function.split("::")
            tail = "::".join(parts[-2:])
            seen = [n for name, lines in self.functions.items()
                    if name == tail or name.endswith("::" + tail) for n in lines]
        return min((abs(n - at) for n in seen), default=None)

    def lines_in(self, file: str) -> set[int]:
        """The lines of ``file`` the log shows."""
        return self._lines()[0].get(file, set())

    def lines_named(self, name: str) -> set[int]:
        """The lines the log shows in files named ``name`` (``x.cc``), whatever their
        directory: a file the tree has since moved."""
        return self._lines()[1].get(name, set())

    def _lines(self) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
        # Asked once per candidate site: grouped once, after reading.
        if self._by_file is None:
            by_file: dict[str, set[int]] = {}
            by_name: dict[str, set[int]] = {}
            for file, line, _at, _function in self.places:
                by_file.setdefault(file, set()).add(line)
                by_name.setdefault(file.rsplit("/", 1)[-1], set()).add(line)
            self._by_file = (by_file, by_name)
        return self._by_file

    def file_names(self) -> set[str]:
        """The names (no directory) of the source files the log shows."""
        return {f.rsplit("/", 1)[-1] for f in self.files}


def read(lines: list[str]) -> Frames:
    """The frames of ``lines`` (a log split into lines)."""
    out = Frames()
    count = 0
    named: dict[int, str] = {}  # log line -> the first C++ function it names
    for i, line in enumerate(lines):
        if count >= MAX_FRAMES:
            break
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE]
        if "tvm" in line:
            for m in CPP.finditer(line):
                name = TEMPLATE.sub("", m.group(1)).lstrip(":")
                out.functions.setdefault(name, []).append(i)
                named.setdefault(i, name)
                count += 1
            if "_ZN" in line:
                for m in _MANGLED.finditer(line):
                    name = _demangle(m.group(1))
                    if name:
                        out.functions.setdefault(name, []).append(i)
                        count += 1
        if "src/" not in line and "include/" not in line and any(
                ext in line for ext in _CUT_EXTS):
            for m in _CUT_PLACE.finditer(line):
                path = m.group(1)
                if path.startswith(("/", ".")) or path.endswith(".h") and "tvm/" not in path:
                    continue
                file = ("include/" if path.startswith("tvm/") else "src/") + path
                out.files.add(file)
                out.places.append((file, int(m.group(2) or m.group(3)), i, named.get(i, "")))
                count += 1
        if "src/" in line or "include/" in line or "web/emcc/" in line:
            for m in _PLACE.finditer(line):
                out.files.add(m.group(1))
                number = m.group(2) or m.group(3)
                if number:
                    # libbacktrace prints the function on the line above "at FILE:LINE"
                    function = named.get(i) or (named.get(i - 1, "") if "at " in line else "")
                    out.places.append((m.group(1), int(number), i, function))
                    count += 1
        if '.py' in line:
            for path, number, function in python_frames(line):
                out.py_places.append((path, number, i, function))
                if i + 1 < len(lines) and lines[i + 1].lstrip().startswith(("raise ", "assert ")):
                    out.py_raising.add(i)
            m = _PY.search(line)
            if m:
                file = f"python/{m.group(1)}"
                out.files.add(file)
                out.places.append((file, int(m.group(2)), i, m.group(3) or ""))
                if m.group(3):
                    out.py_functions.setdefault(f"{file}:{m.group(3)}", []).append(i)
                count += 1
    return out


def _demangle(nested: str) -> str:
    """``3tvm5relay18LayoutTransformRel`` -> ``relay::LayoutTransformRel`` (an Itanium nested
    name's plain parts; anything else it holds ends the name)."""
    parts, pos = [], 0
    while pos < len(nested):
        m = re.match(r"\d+", nested[pos:])
        if not m:
            break
        size = int(m.group(0))
        start = pos + len(m.group(0))
        parts.append(nested[start:start + size])
        pos = start + size
    return "::".join(parts[1:]) if len(parts) > 1 else ""
