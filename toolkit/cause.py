"""The first cause of a failure, read from an exception or a whole log.

Every failure tk reports (compile, run, dump-ir, profile, build, doctor, bisect) names its
cause through :func:`first_cause`, so "the one line that says what went wrong" is decided in
one place. Logs come in a few shapes and each hides its cause differently:

- Python tracebacks (TVM's included: tvm-ffi adds C++ frames as ``File "src/...cc"`` lines):
  frames and the source lines they echo come first, the exception line last; with chained
  exceptions ("During handling of the above exception...") the first one is the cause.
- A ScheduleError prints the whole IRModule ("The IR with diagnostic is:") before its
  ``Error message:`` line; other TVM errors print IR after a colon (dlight's "expected to be
  the root block, but got:"). IR is never the cause.
- TVM's older report: ``TVMError:`` then a banner, then ``Check failed: ...``.
- CMake: ``CMake Error at FILE:LINE (CMD):`` with the message on the indented lines after.
- Ninja: ``FAILED: target``, the command line (an echo), then the compiler's ``error:`` line.
- nvcc / ptxas: ``nvcc fatal   : ...``, ``ptxas error   : ...``, ``FILE(LINE): error: ...``.

Every line is classified once with anchored patterns, so the work is linear in the log's size.
Host-side safe: stdlib only.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote_plus

# How telling each kind of line is. The first line at ANCHOR or above starts the failure; lines
# right after it that say more (a ScheduleError's message, a Check failed under a banner) win.
SCHEDULE_MESSAGE, CHECK, DIAGNOSTIC, EXCEPTION, GENERIC_ERROR = 95, 90, 90, 80, 75
ANCHOR = GENERIC_ERROR
REFINE_LINES = 40  # how far after the anchor a more specific line may complete it
MAX_TEXT = 400  # characters of a cause line kept (a repr of an Op can run to kilobytes)

_EXCEPTION = re.compile(
    r"(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure|Exit|Interrupt"
    r"|Warning|Fault))(?::[ \t]?(?P<msg>.*))?$")
# After a traceback any name can be the exception's (tvm.error.OpNotImplemented).
_RAISED = re.compile(r"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::[ \t]?(?P<msg>.*))?$")
_FRAME = re.compile(r"\s+File \"(?P<file>[^\"]+)\", line (?P<no>\d+)(?:, in (?P<func>.*))?$")
_CMAKE = re.compile(r"CMake Error(?: at (?P<loc>[^\n(]+?)(?: \((?P<cmd>\w+)\))?)?:\s*(?P<msg>.*)$")
_COMPILER = re.compile(
    r"(?P<loc>[^\s:(][^:(\n]*(?::\d+(?::\d+)?:|\(\d+\):)) (?:fatal )?error(?: #[\w-]+)?: "
    r"(?P<msg>.*)$")
_TOOL = re.compile(r"(?P<tool>nvcc|ptxas|nvlink|fatbinary|ld|ld\.lld|/usr/bin/ld|collect2|"
                   r"clang|gcc|g\+\+|c\+\+|cc1plus)\b[^:\n]{0,80}?\b(?P<sev>fatal|error)\s*:")
_QUOTED_WARNING = re.compile(r"(?:\(\d+\)|:\d+(?::\d+)?):? warning\b")
_LOGLINE = re.compile(r"\[\d\d:\d\d:\d\d\] (?P<loc>\S+?:\d+): (?P<msg>.*)$")
_GENERIC = re.compile(r".*?\b(?:error|ERROR|Error)\b\s*:\s*(?P<msg>\S.*)$")
_TVM_SOURCE = re.compile(r"(?:^|/)((?:src|include|python/tvm|3rdparty/tvm-ffi/src)/[^\s\"]+"
                         r"|tvm/[\w/]+\.py)$")

# Lines that are never a cause: IR and source echoes, banners, tracebacks' furniture. Matched
# on the line without its indent (``_ir_line``): a leading ``\s*`` here would backtrack through
# a long run of spaces once per space (a line of 160k spaces took 12 s).
_IR_LINE = re.compile(
    r"(?:#|@|[A-Za-z_][\w\[\], .]*=|with |for |class |def |return |T\.|R\.|I\.|\^|~|-->|"
    r"\d+ \||\|)")


def _ir_line(line: str) -> bool:
    return _IR_LINE.match(line.lstrip()) is not None
_BANNER = {"An error occurred during the execution of TVM.",
           "For more information, please see: https://tvm.apache.org/docs/errors.html",
           "Traceback (most recent call last):",
           "During handling of the above exception, another exception occurred:",
           "The above exception was the direct cause of the following exception:"}
_NEW_REPORT = ("Traceback (most recent call last)", "During handling of the above",
               "The above exception was")
# Exception messages that only announce what follows.
_ANNOUNCE = re.compile(r"(?:Traceback \(most recent call last\):|)$")


@dataclass
class Cause:
    """What went wrong first, and where: enough to act on or to search for."""

    text: str  # the most specific line (with the detail lines that complete it)
    line: int = 0  # 1-based line of the log it came from (0: none found)
    kind: str | None = None  # exception type, "CMake Error", "nvcc", "compiler", ...
    pass_name: str | None = None  # the TVM pass that raised, when the log shows it
    primitive: str | None = None  # the schedule primitive that raised
    source: str | None = None  # TVM source file (and line) the error was raised in
    frames: list[str] = field(default_factory=list)  # TVM frames, innermost last
    definite: bool = False  # an error line was found (not a fallback to the last line)

    def message(self) -> str:
        """The cause without its exception-type prefix."""
        if self.kind == "CMake Error":
            return re.sub(r"^CMake Error(?: at [^\n]*?\(\w+\))?:\s*", "", self.text)
        if self.kind == "tk":  # tk's own line: "tk: [internal ]error: [Type: ]message"
            return re.sub(r"^tk: (?:internal )?error: (?:[\w.]+: )?", "", self.text)
        if self.kind and self.text.startswith(self.kind + ":"):
            return self.text[len(self.kind) + 1:].strip()
        return self.text

    def search_terms(self) -> str:
        """Words to search TVM's issues and forum with: the message without its particulars."""
        msg = self.message()
        msg = re.sub(r"^Check failed: (?:\(.*?\) is false: |.*? : )?", "", msg)
        msg = re.sub(r"ErrorContext\(.*?\)\s*", "", msg)
        msg = re.sub(r"(?:/[\w.+-]+)+/?|0x[0-9a-fA-F]+|#\d+|\b\d[\d.]*\b|`[^`]*`|'[^']*'|"
                     r"\"[^\"]*\"|\([^()]*\)", " ", msg)
        words = re.findall(r"[A-Za-z_][\w.:-]*", msg)[:12]
        extra = [w for w in (self.primitive, self.pass_name) if w]
        return " ".join(words + extra)

    def search_urls(self) -> list[str]:
        terms = quote_plus(self.search_terms())
        return [f"https://github.com/apache/tvm/issues?q={terms}",
                f"https://discuss.tvm.apache.org/search?q={terms}"]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "search_terms": self.search_terms(),
                "search_urls": self.search_urls()}


def exception_text(exc: BaseException) -> str:
    """An exception as Python prints it: chained causes first, frames (TVM's C++ ones too)."""
    try:
        return "".join(traceback.format_exception(exc))
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the failure itself
        return f"{type(exc).__name__}: <unprintable>"


def first_cause(text_or_exc: str | BaseException) -> Cause:
    """The most specific cause line of a failure, never an echo of IR or source code."""
    if isinstance(text_or_exc, BaseException):
        text = exception_text(text_or_exc)
        fallback = type(text_or_exc).__name__
    else:
        text, fallback = text_or_exc, ""
    # NVRTC's log is a C string buffer; TVM decodes it whole, so the line after its last
    # newline (ptxas' error, as on an H200) starts with a NUL that hides it from every pattern.
    lines = text.replace("\0", "").splitlines()
    scored = _score(lines)
    anchor = next((i for i, (s, _) in enumerate(scored) if s >= ANCHOR), None)
    if anchor is None:
        best = max(range(len(lines)), key=lambda i: (scored[i][0], i), default=None)
        if best is None or scored[best][0] == 0 and not lines[best].strip():
            return Cause(fallback or "no output", 0, fallback or None)
        chosen = best
    else:
        chosen = _refine(lines, scored, anchor)
    score, kind = scored[chosen]
    body = _complete(lines, scored, chosen)
    cause = Cause(_shorten(body), chosen + 1, kind, definite=score >= ANCHOR)
    _where(lines, chosen, cause)
    return cause


def one_line(text_or_exc: str | BaseException) -> str:
    """``first_cause(...).text``: the line tk prints after "failed:"."""
    return first_cause(text_or_exc).text


def _score(lines: list[str]) -> list[tuple[int, str | None]]:
    """(how telling, kind) per line; 0 for echoes and noise."""
    out: list[tuple[int, str | None]] = []
    in_ir = in_traceback = False
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        result: tuple[int, str | None] = (0, None)
        if stripped.startswith("Error message:") and len(stripped) > 15:
            in_ir = False
            result = (SCHEDULE_MESSAGE, "ScheduleError")
        elif in_ir and not stripped.startswith(_NEW_REPORT) and (
                line[:1].isspace() or not _EXCEPTION.match(stripped) or _ir_line(line)):
            pass  # IR the error printed: never the cause
        elif not stripped or stripped in _BANNER or stripped.startswith("---"):
            in_ir = False
            if stripped.startswith(_NEW_REPORT):
                in_traceback = stripped.startswith("Traceback")
        elif stripped == "The IR with diagnostic is:":
            in_ir = True
        else:
            in_ir = False
            if in_traceback and not line[:1].isspace():
                in_traceback = False
                result = _classify(line, True)
            elif not in_traceback:
                result = _classify(line, False)
            if stripped.endswith("Traceback (most recent call last):"):
                # "TVMError: Traceback ...": older TVM put its C++ frames in the message.
                in_traceback, result = True, (30, result[1])
            # else: a frame of the traceback, or the source line it echoes
            if result[0] and stripped.endswith("but got:"):
                in_ir = True  # dlight and others print the offending IR after this
        out.append(result)
    return out


def _classify(line: str, after_traceback: bool) -> tuple[int, str | None]:
    s = line.strip()
    if "Check failed:" in s:
        m = _EXCEPTION.match(s)
        return CHECK, (m.group("type") if m else "Check failed")
    if s.startswith("CMake Error"):
        return DIAGNOSTIC, "CMake Error"
    if _FRAME.match(line) or _ir_line(line) and not _EXCEPTION.match(s):
        return 0, None
    m = _EXCEPTION.match(s) or (_RAISED.match(s) if after_traceback else None)
    if m and not s.startswith(("warning", "Warning")):
        if m.group("type").endswith("Warning"):
            return 40, m.group("type")
        msg = (m.group("msg") or "").strip()
        if _ANNOUNCE.match(msg) and not after_traceback:
            return 30, m.group("type")  # "TVMError:" whose message is on a later line
        return EXCEPTION, m.group("type")
    m = _COMPILER.match(s)
    if m:
        return DIAGNOSTIC, "compiler"
    m = _TOOL.match(s)
    if m:
        return DIAGNOSTIC, m.group("tool").rsplit("/", 1)[-1]
    if "undefined reference to" in s or ": cannot find -l" in s:
        return DIAGNOSTIC - 5, "linker"
    if s.startswith("what():"):
        return DIAGNOSTIC - 5, "C++ exception"
    m = _LOGLINE.match(s)
    if m:
        msg = m.group("msg")
        if msg.startswith(("Warning", "warning")):
            return 40, "TVM log"
        if msg.startswith(("Error", "Fatal", "Check failed")):
            return 85, "TVM log"
        return 20, "TVM log"
    if s.startswith(("tk: error:", "tk: internal error:")):
        return 70, "tk"
    if "Segfault encountered" in s or "Segmentation fault" in s or "core dumped" in s:
        return 60, "crash"
    if s.startswith("FAILED: "):
        return 50, "ninja"
    if _GENERIC.match(s) and not s.lower().startswith("warning"):
        return GENERIC_ERROR, "error"
    if re.search(r"(?i)\bwarning\b", s):
        return 30, None
    return 10, None


def _refine(lines: list[str], scored: list[tuple[int, str | None]], anchor: int) -> int:
    """A line after the anchor that says more about the same failure, else the anchor."""
    line = lines[anchor]
    if "ScheduleError" in line or "schedule primitive" in line:
        # Its message comes after the whole IRModule, however long that is.
        for i in range(anchor + 1, len(lines)):
            if scored[i][0] == SCHEDULE_MESSAGE:
                return i
            if lines[i].startswith("Traceback (most recent call last)"):
                break
    chosen = anchor
    # An exception that quotes a compiler's log from its start ("NVRTC compilation failed:" and
    # then "cuda_fp8.hpp(1461): warning #1444-D: ...") may put pages of a header's warnings
    # before the error: then the error is looked for to the end of that exception.
    quoted = _QUOTED_WARNING.search(line) or (
        anchor + 1 < len(lines) and _QUOTED_WARNING.search(lines[anchor + 1]))
    end = len(lines) if quoted else anchor + REFINE_LINES
    for i in range(anchor + 1, min(len(lines), end)):
        if lines[i].startswith(("Traceback (most recent call last)", "During handling")):
            break
        if scored[i][0] > scored[chosen][0]:
            chosen = i
    return chosen


def _complete(lines: list[str], scored: list[tuple[int, str | None]], i: int) -> str:
    """The cause line, with the lines after it when it only announces them (ends in ':')."""
    text = lines[i].strip()
    if scored[i][0] == SCHEDULE_MESSAGE:
        return text[len("Error message:"):].strip()
    if text.endswith("but got:"):
        return text[:-len("but got:")].rstrip(" ,")  # what it got is IR, printed after
    cmake = scored[i][1] == "CMake Error"
    if not (cmake or text.endswith(":")):
        return text
    more: list[str] = []
    for nxt in lines[i + 1:i + 16]:
        s = nxt.strip()
        if not s:
            if more and not cmake:
                break
            continue
        if cmake and not nxt[:1].isspace():
            break  # CMake indents its message; "Call Stack" or "-- " ends it
        if s.startswith(("Call Stack", "Traceback", "File ")) or _ir_line(nxt):
            break
        more.append(s)
        if len(more) == 4:
            break
    return f"{text} {' '.join(more)}" if more else text


def _shorten(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    # The particulars of a long line sit at its end ("... which are not broadcastable").
    return f"{text[:120]} ... {text[-(MAX_TEXT - 125):]}"


_PASS = [
    re.compile(r"transform::(?P<name>[A-Z]\w+)\("),
    re.compile(r"pass (?P<name>[\w.]+) \(#\d+\) raised"),
    re.compile(r"\b(?:relax|tirx|s_tir|tir)\.transform\.(?P<name>[A-Z]\w+)"),
]
_PRIMITIVE = re.compile(r"schedule primitive '(?P<name>[\w-]+)'")


def _where(lines: list[str], chosen: int, cause: Cause) -> None:
    """Fill in the pass, schedule primitive and TVM source file the cause came from."""
    start = chosen
    while start > 0 and chosen - start < 400 and not lines[start - 1].startswith(
            "Traceback (most recent call last)"):
        start -= 1
    region = lines[start:min(len(lines), chosen + 2)]
    for line in region:
        m = _FRAME.match(line)
        if m:
            path, no, func = m.group("file"), m.group("no"), m.group("func") or ""
            tvm_file = _TVM_SOURCE.search(path[-300:])
            if tvm_file:
                short = tvm_file.group(1)
                cause.frames.append(f"{short}:{no} {func[:120]}".rstrip())
                cause.source = f"{short}:{no}"
                if short.endswith("schedule/schedule.py") and func:
                    cause.primitive = func.strip()
                if "/dlight/" in short and not cause.pass_name:
                    cause.pass_name = "dlight"
            continue
        m = _LOGLINE.match(line.strip())
        if m and (t := _TVM_SOURCE.search(m.group("loc").rsplit(":", 1)[0])):
            cause.source = f"{t.group(1)}:{m.group('loc').rsplit(':', 1)[1]}"
    joined = "\n".join(region)
    m = _PRIMITIVE.search(joined)
    if m:
        cause.primitive = m.group("name")
    for pattern in _PASS:
        found = list(pattern.finditer(joined))
        if found:
            cause.pass_name = found[-1].group("name")
            break
