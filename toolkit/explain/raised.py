"""Where TVM raises the error a log shows: its message matched against TVM's error sites.

The error-site index (:func:`toolkit.explain.history.sites`) holds every ``CHECK``,
``LOG(FATAL)``, ``TVM_FFI_THROW``, ``throw`` and Python ``raise``/``assert`` of every indexed
TVM version, with its message template. A log line is matched two ways, both in time linear
in the log:

- ``Check failed: (COND) is false: MSG`` (and ``Check failed: A == B (x vs. y) : MSG``, and
  the older ``Check failed: COND MSG``): COND is looked up as written in the source, else
  loosely (as users retype it: ``check failed a.size() == n``) or against the checks in a
  macro's body with its parameters as wildcards, named only when one function has it; a
  COND too short to look up (``v``) only among the sites of a file the log shows;
- any other error line: each word of it is looked up among the templates' rarest words, and
  the templates found are checked piece by piece (formatted parts are wildcards).

Only lines that look like errors are read (at most ``MAX_LINES``: the first ones and the last
ones), each up to ``MAX_LINE`` characters, and at most ``MAX_CHECKS`` templates per line are
checked, so a 1 MB log costs a bounded amount of matching on top of one pass over its lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.explain import frames
from toolkit.explain.history import (
    WILD,
    Site,
    SiteIndex,
    ecosystem_sites,
    loose,
    matches_template,
    sites,
    squeeze,
)
from toolkit.explain.tvm_version import LogVersion

MAX_LINES = 160
MAX_LINE = 2000
MAX_CHECKS = 400
MAX_COPIES = 3  # other sites with the same message named in the answer
BELOW = 3  # lines under the error line read for what it printed
UNNAMED_LINES = 40  # of those, the ones a project's sites are matched on when the log names
# no project (TVM's own sites are matched on all of them)
MIN_LITERAL = 16  # characters of a template a line must match to count (not "Unknown %s")
# ... and at least 1/SPREAD of the message from the template's first words on: "Cannot find
# %s in %s" (16 literal characters, mostly " in ") is not what a 170-character "Cannot find
# PackedFunc X in either Relax VM kernel library, or in ..." says.
SPREAD = 5
_ERRORISH = ("Check failed", "rror", "xception", "what():", "atal", "FATAL", "CHECK", "ailed",
             "not ", "Cannot", "cannot", "nvalid", "nsupported", "must ", "xpect")
# Users retype checks without the spaces ("Check failed:(a == b)is false: ..."), in lower
# case, without the colons ("check failed a == b (34 vs. 33)").
_IS_FALSE = re.compile(r"\((?P<cond>.*)\)\s*is false(?::\s?(?P<msg>.*))?$")
_BINARY = re.compile(r"(?P<cond>.+?) \((?:.*) vs\. (?:.*)\)(?:\s*:\s?(?P<msg>.*))?$")
_CHECK_FAILED = re.compile(r"check failed:?", re.I)
_PLAIN_WORD = re.compile(r"[\w:]*")
SHORT = 4  # characters a condition needs to be looked up on its own (not "v", "ok")


@dataclass
class Raised:
    """A site that raises what a log line says, and how well it matched."""

    site: Site
    line: int  # 1-based line of the log
    excerpt: str
    score: int
    by_condition: bool
    others: int  # further sites with the same message and score (copies in other files)
    places: list[Site]  # the same check in other files of other versions, newest first
    at_line: int = 0  # versions in which the site stands at the line the log shows, if any
    in_frames: bool = False  # the log's backtrace names the site's function
    shown_as: str = ""  # the file:line the log shows for it, when its tree had another path
    index: SiteIndex | None = None  # whose sites it is one of (TVM's or a project's on it)
    copies: list[Site] = field(default_factory=list)  # the first of the others, to name them
    one_file: bool = True  # the site and all the others are in files of one name
    below: str = ""  # the lines that go on with the message (a layout it printed)

    @property
    def copied(self) -> bool:
        """Several places in several files say the message: a wording many share, not a site."""
        return self.others >= 3 and not self.one_file


# What the log's own traceback adds to a site's text match: the line it shows in the site's
# file (in a version that has the site there), a frame of the site's function, the file.
AT_LINE, NEAR_LINE, IN_FRAMES, IN_FILE = 80, 30, 50, 40
NEAR = 3  # lines a patched tree may have moved a check by


def find(text: str, version: LogVersion | None) -> list[Raised]:
    """The best-matching site for the log's error lines: the earliest strong match first."""
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if any(w in line for w in _ERRORISH) or
                  _LOGGED.match(line) or i and _message_below(lines[i - 1], line)]
    if len(candidates) > MAX_LINES:
        candidates = candidates[:MAX_LINES // 2] + candidates[-MAX_LINES // 2:]
    seen = frames.read(lines)
    found: list[Raised] = []
    # TVM's sites, then those of the projects built on it (a check TileLang's own C++ makes);
    # the log's TVM version says nothing of those projects' releases. Where the log does not
    # name a project, its sites answer only a log that does not show which TVM it ran (else
    # the log is TVM's, and a project's copy of a check TVM has since changed must not answer
    # it), and never with a Python raise (in Python's own words, "got multiple values for
    # argument", it could be anyone's).
    for index in (sites(), *ecosystem_sites()):
        named = index.project.own or index.project.shown_in(text)
        if not named and version is not None:
            continue
        theirs = version if index.project.own else None
        at_place: dict[tuple[str, int], list[int]] = {}  # sites standing at a frame's line
        # a project the log does not name is asked about the first and last lines only
        read = candidates if named or len(candidates) <= UNNAMED_LINES else \
            candidates[:UNNAMED_LINES // 2] + candidates[-UNNAMED_LINES // 2:]
        for i in read:
            hit = _match_line(index, _unwrapped(lines, i)[:MAX_LINE], i, seen, theirs, at_place)
            if hit is not None and not named and hit.site.kind.startswith(("raise ", "assert")):
                continue
            if hit is not None:
                hit.line, hit.excerpt, hit.index = i + 1, lines[i].strip()[:300], index
                hit.below = "\n".join(lines[i + 1:i + 1 + BELOW])[:MAX_LINE]
                found.append(hit)
    if not found:
        return []
    # TVM's own site wins a tie: a project that copied TVM's code copied its checks too.
    best = max(found, key=lambda r: (r.by_condition, r.score, r.index.project.own, -r.line))
    return [best]


# A message in words of its own ("Inconsistent buffers a and b mapped to ..."): printed on the
# line below its exception's header (``InternalError: Traceback (most recent call last):``,
# a header ending in a colon), or by TVM's logger (``[12:01:02] src/x.cc:12: ...``, or with no
# time from a source tree: ``.../native/src/main/native/jni_helper_func.h:211: ...``; a
# compiler's ``x.cc:12:3: error:`` has a column, a linker's ``x.cc:12: undefined reference``
# is not a message of the file's).
_LOGGED = re.compile(r"(?:\[[\d:. ]+\] [^\s:]+|[^\s:]*\b(?:src|include)/[^\s:]+)"
                     r"\.(?:cc|h|cpp|cu|mm):\d+: (?!undefined reference|multiple definition)")
_HEADER = re.compile(r"\b[A-Z]\w*(?:Error|Exception):.*:\s*$")


def _span(template: str, line: str) -> int:
    """Characters of ``line`` from where the template's first words stand to its end."""
    first = next((p.strip() for p in template.split(WILD) if p.strip()), "")
    at = line.find(first) if first else -1
    return len(line.rstrip()) - max(at, 0)


def _message_below(above: str, line: str) -> bool:
    """Is ``line`` the message of the exception header ``above`` (not a frame below it)?"""
    return bool(line.strip()) and not line[:1].isspace() and \
        not line.startswith(("File ", "Traceback")) and bool(_HEADER.search(above))


def _unwrapped(lines: list[str], i: int) -> str:
    """Line ``i``, joined with up to two following lines when it is a ``Check failed: (...``
    whose parenthesis a pasted log wrapped (``(ana.CanPro`` / ``veEqual(a, b)) is false``)."""
    line = lines[i]
    pos = line.find("Check failed:")
    if pos < 0:
        return line
    for nxt in lines[i + 1:i + 3]:
        if line.count("(", pos) <= line.count(")", pos):
            break
        line += nxt[:MAX_LINE]
    return line


def _match_line(index: SiteIndex, line: str, at: int, seen: frames.Frames,
                version: LogVersion | None, at_place: dict[tuple[str, int], list[int]]
                ) -> Raised | None:
    scored: dict[int, tuple[int, bool]] = {}
    check = _CHECK_FAILED.search(line)
    pos = check.start() if check else -1
    if check:
        # "health check failed: conn" is not TVM's: a retyped check must show an expression
        retyped = not check.group(0).startswith("Check failed")
        for i, score in _by_condition(index, line[check.end():].strip(), seen, retyped):
            scored[i] = (score, True)
    checks = 0
    for word in dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", line)):
        for i in index.by_anchor.get(word, ()):
            if i in scored:
                continue
            checks += 1
            if checks > MAX_CHECKS:
                break
            got = matches_template(index.sites[i].template, line)
            if got >= MIN_LITERAL and got * SPREAD >= _span(index.sites[i].template, line):
                scored[i] = (got, False)
    # The innermost frame's file and line: a site standing there raised it, whatever its
    # message (an assert without one, a message made of formatted values only).
    frame = seen.innermost(at)
    exc = _EXCEPTION.search(line)
    # A Python exception is raised by the innermost Python frame: when that is the user's
    # (or another project's) file, no raise in TVM's Python made it, whatever its wording.
    py_frame = seen.innermost_python(at)
    if exc and exc.group(1) in _PYTHON_ONLY and py_frame and frames.foreign(py_frame[0]):
        scored = {i: v for i, v in scored.items()
                  if not index.sites[i].kind.startswith(("raise ", "assert"))}
    # ... and when that frame is TVM's own Python and its source line raises, a raise in
    # another of TVM's files did not make it: one wording can stand in many files
    # ("Compilation error:" is raised by contrib/nvcc.py, xcode.py, emcc.py, cc.py; the index
    # knows only the one whose message is a literal).
    elif exc and py_frame and py_frame[2] in seen.py_raising:
        tail = frames.tvm_python_tail(py_frame[0])
        if tail:
            scored = {i: v for i, v in scored.items()
                      if not index.sites[i].kind.startswith(("raise ", "assert"))
                      or index.sites[i].file.endswith("/" + tail)}
    # Only a raised error has a raising frame: a compiler's "x.cc:12:3: error:" names the line
    # it could not compile, which some version's check may happen to stand at.
    if frame is not None and (exc or pos >= 0) and not _DIAGNOSTIC.search(line):
        key = frame[:2]
        if key not in at_place:
            at_place[key] = [i for i in index.by_file.get(key[0], ())
                             if any(ln == key[1] for ln, _ in index.sites[i].lines_by_version())]
        for i in at_place[key]:
            if i not in scored and _raises(index.sites[i].kind, exc.group(1) if exc else ""):
                scored[i] = (MIN_LITERAL, False)
    if version is not None:  # a site the log's TVM does not have cannot have raised it
        scored = {i: v for i, v in scored.items()
                  if index.sites[i].mask & version.mask or index.sites[i].file in seen.files}
    if not scored:
        return None
    evidence = {i: _evidence(index.sites[i], at, seen, version) for i in scored}

    def rank(i: int) -> tuple:
        site = index.sites[i]
        score, by_cond = scored[i]
        at_line, near_line, near_frame = evidence[i]
        bonus = (AT_LINE if at_line else NEAR_LINE if near_line else 0) + \
            (IN_FRAMES if near_frame is not None else 0) + (IN_FILE if site.file in seen.files else 0)
        in_version = bool(version and version.mask & site.mask)
        return (by_cond, score + bonus, -(near_frame or 0), in_version, -_distance(site, seen),
                site.mask.bit_length())

    best = max(scored, key=rank)
    site = index.sites[best]
    # The same check moved between files over the versions (src/tir -> src/tirx): one check,
    # in a function of the same name (other functions checking `data != nullptr` are others).
    same = [index.sites[i] for i in scored if index.sites[i].kind == site.kind and
            index.sites[i].template == site.template and
            squeeze(index.sites[i].condition) == squeeze(site.condition) and
            _short(index.sites[i].function) == _short(site.function)]
    taken = 0
    places = []
    for other in sorted(same, key=lambda x: -x.mask.bit_length()):
        if not other.mask & taken:
            places.append(other)
            taken |= other.mask
    top = rank(best)[:2]
    copies = [index.sites[i] for i in scored if rank(i)[:2] == top and
              index.sites[i] not in places]
    score, by_cond = scored[best]
    at_line, _, near_frame = evidence[best]
    shown_as = ""
    if site.file not in seen.files:
        name = Path(site.file).name
        shown_as = next((f"{f}:{line}" for f, line, _, _ in seen.places
                         if f.rsplit("/", 1)[-1] == name), "")
    return Raised(site, 0, "", score, by_cond, len(copies), places, at_line,
                  near_frame is not None, shown_as, copies=copies[:MAX_COPIES],
                  one_file=len({Path(c.file).name for c in [site, *copies]}) == 1)


_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
_DIAGNOSTIC = re.compile(r":\d+(?::\d+)?: (?:fatal )?error: |\(\d+\): error: ")
# Python's own exceptions: raised by Python code (a raise or assert of that type), never by
# a C++ check.
_PYTHON_ONLY = {"AssertionError", "KeyError", "IndexError", "AttributeError", "TypeError",
                "NameError", "ZeroDivisionError", "ImportError", "ModuleNotFoundError",
                "RecursionError", "NotImplementedError", "StopIteration"}


def _raises(kind: str, exception: str) -> bool:
    """Can a site of ``kind`` raise the ``exception`` a log line names ("" if none)?"""
    if not exception:
        return True
    if kind.startswith(("raise ", "throw ")):
        return exception == kind[6:] or kind.startswith("throw ") and exception in (
            "TVMError", "RuntimeError", "InternalError")
    if kind == "assert":
        return exception == "AssertionError"
    return exception not in _PYTHON_ONLY


def _short(function: str) -> str:
    return function.replace(".", "::").rsplit("::", 1)[-1]


def _evidence(site: Site, at: int, seen: frames.Frames, version: LogVersion | None
              ) -> tuple[int, bool, int | None]:
    """(versions in which ``site`` stands at a line the log shows in its file, whether it
    stands within NEAR lines of one, how far from the error line a frame of its function is)."""
    shown = seen.lines_in(site.file)
    at_line, near_line = 0, False
    if shown:
        allowed = version.mask if version is not None else site.mask
        for line, mask in site.lines_by_version():
            if line in shown and mask & allowed:
                at_line |= mask & allowed
            elif any(abs(line - s) <= NEAR for s in shown):
                near_line = True
    return at_line, near_line, seen.function_near(site.function, site.file, at)


def _distance(site: Site, seen: frames.Frames) -> int:
    """Lines between the site and the nearest line the log shows in its file (or a file of
    the same name: the tree moved it); large when it shows none."""
    shown = seen.lines_in(site.file) or seen.lines_named(site.file.rsplit("/", 1)[-1])
    if not shown:
        return 10**6
    return min((abs(line - s) for line, _ in site.lines_by_version() for s in shown),
               default=10**6)


def _by_condition(index: SiteIndex, after: str, seen: frames.Frames, retyped: bool = False
                  ) -> list[tuple[int, int]]:
    """Sites whose condition is the one a ``Check failed:`` line prints, with a score; a
    ``retyped`` line (``check failed ...``) only by a condition that is an expression."""
    msg = ""
    m = _IS_FALSE.match(after) or _BINARY.match(after)
    conds = []
    if m:
        conds.append(m.group("cond"))
        msg = m.group("msg") or ""
    else:  # dmlc's "Check failed: COND MESSAGE" (or "COND: MESSAGE"): the longest prefix
        # that is a known condition
        words = after.split(" ")
        conds += [" ".join(words[:k]).rstrip(":") for k in range(min(len(words), 30), 0, -1)]
    out = []
    for cond in conds:
        key = squeeze(cond)
        if retyped and _PLAIN_WORD.fullmatch(key):
            continue
        found = index.by_condition.get(key, [])
        if len(key) < SHORT:
            # "Check failed: v": too short to tell the sites apart, unless the log shows
            # the file (perhaps by another path) and only that file's sites are left.
            names = seen.file_names()
            found = [i for i in found if Path(index.sites[i].file).name in names]
        elif not found:
            found = _retyped(index, cond)
        if not found:
            continue
        if not m:
            msg = after[len(cond):].strip(" :")
        for i in found:
            score = 2 * len(key)
            template = index.sites[i].template
            literal = matches_template(template, msg) if msg and template.strip() else 0
            if literal < 0:
                literal = _unspaced(template, msg)
            # A check with a message prints it; one without prints nothing after the colon.
            score += literal if literal > 0 else (-5 if bool(template.strip()) != bool(msg) or
                                                 template.strip() and literal < 0 else 0)
            out.append((i, score))
        break
    return out


def _unspaced(template: str, msg: str) -> int:
    """``matches_template`` on a message pasted with its spaces lost or added
    ("CodeGenOpenCL:expect" for the template's "CodeGenOpenCL: expect"): -1 when it still
    differs."""
    return matches_template("".join(template.split()), "".join(msg.split()))


def _retyped(index: SiteIndex, cond: str) -> list[int]:
    """Sites of a condition a user retyped (case, spaces, brackets, a member's trailing
    underscore), or of a macro's check whose parameters the log shows expanded; [] when they
    are in more than one function (a guess between them would state what tk has not
    checked)."""
    found = index.loose_sites(cond) if len(loose(cond)) >= SHORT else []
    if not found:
        key = squeeze(cond)
        found = [i for literal, pattern, i in index.by_macro
                 if literal in key and pattern.fullmatch(key)]
    places = {(Path(index.sites[i].file).name, _short(index.sites[i].function)) for i in found}
    return found if len(places) == 1 else []


# Checks that hold only for what the simplifier proves (tir::is_one, is_zero, is_const_int,
# Analyzer::CanProve*): a true fact TVM cannot prove fails them as a false one does.
_PROVED = re.compile(r"\b(?:is_one|is_zero|is_const_int|is_positive_const|is_negative_const|"
                     r"CanProve\w*)\s*\(")


# A binary check prints its two sides' values: "Check failed: arg_ty->ndim >= 0 (-1 vs. 0)"
_VALUES = re.compile(r"\((-?\d+) vs\. (-?\d+)\)")
_SIDES = re.compile(r"^(.*?)\s+(?:==|!=|>=|<=|>|<)\s+(.*)$")
_NEGATIVE_LANES = re.compile(r"lanes\w*\s*<\s*0\b")
# TIR's vector expressions as TVMScript prints them: T.Ramp(base, stride, lanes), T.Broadcast
_VECTOR = re.compile(r"\bT\.(Ramp|Broadcast)\((?:[^()\n]{0,200}?,\s*(?P<lanes>\d+)\))?")


# TVM's packed-function argument type codes (TVMArgTypeCode, include/tvm/runtime/
# c_runtime_api.h) until tvm-ffi replaced them in v0.21.0; 15 is kTVMArgBool from v0.18.0
TYPE_CODES = ("kDLInt", "kDLUInt", "kDLFloat", "kTVMOpaqueHandle", "kTVMNullptr",
              "kTVMDataType", "kDLDevice", "kTVMDLTensorHandle", "kTVMObjectHandle",
              "kTVMModuleHandle", "kTVMPackedFuncHandle", "kTVMStr", "kTVMBytes",
              "kTVMNDArrayHandle", "kTVMObjectRValueRefArg")
_TYPE_CODE = re.compile(r"\btype code (\d+)\b")


def _type_code_said(line: str) -> str:
    """What a packed-function type code a message prints is."""
    m = _TYPE_CODE.search(line)
    if m is None:
        return ""
    code = int(m.group(1))
    if code < len(TYPE_CODES):
        return (f" Type code {code} is {TYPE_CODES[code]} (TVM's argument type codes until "
                "v0.20.0).")
    if code == 15:
        return (" Type code 15 is kTVMArgBool, a boolean, from v0.18.0 (booleans got a code of "
                "their own then; before, 15 was kTVMExtBegin, no value's code): code built "
                "before v0.18.0 that reads values from a v0.18.0 or newer library, or that has "
                "no case for booleans, does not know it.")
    return ""


# TileLang prints a layout's threads: "Fragment(... thread_range: I.Range(128, 256))"
_THREAD_RANGE = re.compile(r"thread_range: I\.Range\((\d+), (\d+)\)")


def _threads_said(below: str) -> str:
    """A layout the message printed that covers a part of the block's threads only."""
    m = _THREAD_RANGE.search(below)
    if m is None or m.group(1) == "0":
        return ""
    return (f" The layout it printed covers threads {m.group(1)}-{int(m.group(2)) - 1} only: a "
            "warp-specialized kernel, whose producer and consumer thread groups each have "
            "their own range.")


def _values_said(site: Site, line: str) -> str:
    """What the value a condition tests says: a check's printed ``ndim`` (-1 is Relax's
    unknown rank, ``kUnknownNDim``; 0 a 0-d tensor), a data type's negative lane count, a
    packed function's type code."""
    code = _type_code_said(line)
    if code:
        return code
    vector = _VECTOR.search(line)
    if "Bool(1)" in site.condition and vector:
        lanes = f" of {vector.group('lanes')} lanes" if vector.group("lanes") else ""
        return (f" The condition the log prints is a vector{lanes} (T.{vector.group(1)}: a "
                "vectorized index, a Ramp over consecutive elements), where one boolean is "
                "needed: a vectorized access whose index an earlier pass left as a vector, "
                "reaching code that builds a scalar condition from it.")
    if _NEGATIVE_LANES.search(site.condition):
        return (" A data type keeps its lane count in 16 bits (int16), negative for a scalable "
                "vector (vscale x n): a fixed vector of 32768 lanes or more overflows it and "
                "reads as scalable. Vectorize (or tile) fewer elements: a smaller tile, or the "
                "work split over several tiles.")
    sides, values = _SIDES.match(site.condition), _VALUES.search(line)
    if site.kind != "check" or sides is None or values is None:
        return ""
    for side, value in zip(sides.groups(), values.groups()):
        if not re.search(r"\bndim\b", side):
            continue
        if value == "-1":
            return (f" `{side}` is -1: the tensor's rank is unknown (Relax's kUnknownNDim, a "
                    "TensorStructInfo without a known number of dimensions), and this code "
                    "needs a known rank; give the tensor a static rank (match_cast it to a "
                    "shape) or make the code skip a tensor of unknown rank.")
        if value == "0":
            return (f" `{side}` is 0: the tensor is 0-d (a scalar, rank 0), which this code "
                    "does not take.")
    return ""


def describe(raised: Raised, version: LogVersion | None) -> tuple[str, str, str]:
    """(title, cause, fix) of a matched site."""
    site, index = raised.site, raised.index or sites()
    project = index.project.name
    if not index.project.own:
        version = None  # the log's TVM version; the site is another project's
    v = index.versions
    where = f"{site.file}, {site.function}" if site.function else site.file
    newest = v.labels[site.mask.bit_length() - 1]
    named = "; ".join(f"{c.file}, {c.function or '?'} ({v.span(c.mask)})" for c in raised.copies)
    copies = f" (and {raised.others} other place{'s' if raised.others > 1 else ''} with the same " \
        f"message: {named}{'; ...' if raised.others > len(raised.copies) else ''})" \
        if raised.others else ""
    moves = [p for p in raised.places if p is not site]
    if moves:
        copies += "; the same check is in " + "; ".join(
            f"{p.file}, {p.function or '?'} ({v.span(p.mask)})" for p in moves[:4])
    if site.kind in ("check", "assert"):
        when = f"when `{site.condition}` does not hold" if site.condition else ""
    elif site.condition.startswith("not (") and site.condition.endswith(")"):
        when = f"when `{site.condition[5:-1]}` does not hold"
    elif site.condition:
        when = f"when `{site.condition}`"
    else:
        when = ""
    present = v.span(site.mask)
    gone = v.after_last(site.mask)
    history = f"present {'' if index.project.own else f'in {project} '}{present}" + (
        f", gone from {gone}" if gone else "")
    yours = f"; the TVM in this log is {version.describe()} ({version.why})" if version else ""
    placed = f"line {site.line} in {newest}"
    if version is not None and site.mask & version.mask and not raised.at_line:
        # the line in the newest of the log's versions, not in a newer TVM's
        theirs = (site.mask & version.mask).bit_length() - 1
        line = next(ln for ln, mask in site.lines_by_version() if mask >> theirs & 1)
        placed = f"line {line} in {v.labels[theirs]}"
    if raised.at_line:
        shown = next(line for line, mask in site.lines_by_version() if mask & raised.at_line)
        placed = f"line {shown} in {v.span(raised.at_line)}, the line the log shows"
        # the release right after the log's where the check stands elsewhere: its file changed
        later = [(line, mask) for line, mask in site.lines_by_version()
                 if mask >> raised.at_line.bit_length() & 1 and line != shown]
        if later:
            placed += (f"; from {v.labels[raised.at_line.bit_length()]} it is line "
                       f"{later[0][0]}: the file changed above it then")
        yours = f"; the TVM in this log is {v.span(raised.at_line)} (its line numbers)"
    elif raised.in_frames:
        placed += "; its backtrace names the function"
    if raised.shown_as:
        placed += f"; the log shows {raised.shown_as}, a file of that name at another path"
    cause = (f"raised in {where} ({placed}){copies}"
             f"{' ' + when if when else ''}; {history}{yours}.")
    if site.kind == "check" and _PROVED.search(site.condition):
        cause += (" The condition holds only when TVM's arithmetic analyzer can prove it: an "
                  "expression that equals the constant but that the simplifier does not reduce "
                  "to it (bounds of its variables unknown, a division or modulo it cannot "
                  "simplify) fails it too.")
    cause += _values_said(site, raised.excerpt) + _threads_said(raised.below)
    function = site.function.rsplit("::", 1)[-1] or Path(site.file).name
    if site.kind in ("check", "fatal") or site.kind.endswith("InternalError"):
        fix = (f"an invariant of {function} does not hold for what reached it: look at the pass "
               "or schedule step that called it in the traceback; if the input is valid this is "
               f"a {project} bug - report it with a script that reproduces it"
               + (" (tk bisect can find the commit that introduced it)" if index.project.own
                  else ""))
    elif site.kind.startswith("schedule"):
        fix = (f"the schedule primitive's precondition ({site.function}) does not hold for the "
               "block/loop given: change the schedule (another loop, block, or order of steps)")
    else:
        fix = (f"{function} rejects its input{' ' + when if when else ''}: change what is passed "
               "to it (arguments, IR, target) so that it does not")
    return f"Raised in {project}: {where}", cause, fix


def source_lines(file: str, line: int, condition: str, needle: str, root: Path,
                 around: int = 2) -> list[str]:
    """The lines of ``root`` (a TVM source tree) that raise it, numbered, nearest the indexed
    ``line``; [] when the file or the raise is not there (another version of the tree)."""
    path = root / file
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    cond = squeeze(condition)
    hit = None
    for i, text in enumerate(lines):
        if needle and needle[:60] in text or cond and cond[:40] in squeeze(text):
            if hit is None or abs(i + 1 - line) < abs(hit + 1 - line):
                hit = i
    if hit is None:
        return []
    lo, hi = max(0, hit - around), min(len(lines), hit + around + 1)
    return [f"{path}:{n + 1}: {lines[n]}" for n in range(lo, hi)]


# What an exception Python raised on its own (no message TVM wrote) says about the input.
_PYTHON_MEANS = {
    "KeyError": "a lookup of a key the input lacks (an operator's attribute, a target's "
                "attribute, a config entry, a name in a map)",
    "AttributeError": "an attribute the object it got lacks (often None where an object was "
                      "expected: an earlier step found nothing)",
    "IndexError": "an index past the end of a list or shape (a rank or count the code assumes)",
    "TypeError": "a value of another type than the code handles, or a call with other "
                 "arguments than its signature takes in this version",
    "ValueError": "a value the code does not handle",
    "AssertionError": "an assumption the code asserts does not hold for this input",
    "ZeroDivisionError": "a zero size, stride or factor",
    "RecursionError": "IR nested deeper than Python's recursion limit (raise it with "
                      "sys.setrecursionlimit)",
    "NotImplementedError": "a case TVM does not implement",
    "UnboundLocalError": "a path through the code that leaves a variable unset (a case the "
                         "code does not handle)",
}


# What an attribute lookup that failed says it looked for: "<class 'tvm.runtime.container.ADT'>
# has no attribute numpy" (TVM's Object.__getattr__), "'Foo' object has no attribute 'bar'".
_LACKS = re.compile(r"(?:<class '(?P<cls>[\w.]+)'>|'(?P<obj>[\w.]+)' object) has no "
                    r"attribute '?(?P<attr>\w+)")


def from_frames(frames_: list[str], exception: str | None, message: str,
                version: LogVersion | None, caller_in_tvm: bool = False
                ) -> tuple[str, str, str, str, str] | None:
    """:func:`from_frame` for the traceback's innermost TVM frame, or, when that frame is a
    ``__getattr__`` raising an AttributeError (TVM's Object, a container forwarding to its
    fields) and the frame right above it is TVM's too (``caller_in_tvm``), for that caller:
    the lookup failed, the caller asked for it."""
    if exception == "AttributeError" and caller_in_tvm and len(frames_) > 1 and \
            frames_[-1].endswith(" __getattr__"):
        getter = frames_[-1].partition(" ")[0].rpartition(":")[0]
        if getter.endswith(".py"):
            getter = "python/tvm/" + re.split(r"(?:^|/)tvm/", getter)[-1]
        m = _LACKS.search(message)
        asked = (f"a {m['cls'] or m['obj']} for `{m['attr']}`, which that type does not have"
                 if m else "an object for an attribute its type does not have")
        return from_frame(frames_[-2], exception, version, (f"{getter}'s __getattr__", asked))
    return from_frame(frames_[-1], exception, version)


def from_frame(frame: str, exception: str | None, version: LogVersion | None,
               lookup: tuple[str, str] | None = None) -> tuple[str, str, str, str, str] | None:
    """(title, cause, fix, file, function) for an error no site matched, from the traceback's
    innermost TVM frame (``file:line function``, as :func:`toolkit.cause.first_cause` keeps
    it) and the history of that file; None when the frame says too little. ``lookup``: the
    frame called a ``__getattr__`` that raised, (that getter, what the frame asked it)."""
    from toolkit.explain.history import api

    place, _, function = frame.partition(" ")
    file, _, line = place.rpartition(":")
    if not file or not line.isdigit():
        return None
    if file.endswith(".py"):  # .../tvm/python/tvm/_ffi/base.py: the last tvm package
        file = "python/tvm/" + re.split(r"(?:^|/)tvm/", file)[-1]
    m = frames.CPP.search(function)
    short = frames.TEMPLATE.sub("", m.group(1)).lstrip(":") if m else function.strip()
    history = api()
    v = history.versions
    if file.endswith(".py"):
        module = file.removeprefix("python/").removesuffix(".py").replace("/", ".")
        mask = history.python(module.removesuffix(".__init__"))
    else:
        hit = history.get("P", file)
        mask = hit[0] if hit else 0
    if mask:
        gone = v.after_last(mask)
        known = f"{file} is in TVM {v.span(mask)}" + (f" (gone from {gone})" if gone else "")
    else:
        known = f"{file} is in no Apache TVM release from {v.labels[0]} on: a fork's or a " \
                "project's own file"
    yours = f"; the TVM in this log is {version.describe()} ({version.why})" if version else ""
    means = _PYTHON_MEANS.get(exception or "", "")
    what = f"{exception} " if exception else ""
    where = f"{file}, {short}" if short else file
    if lookup is not None:  # a __getattr__ under this frame raised for what it asked
        cause = (f"{lookup[0]} only looks an attribute up among the object's own fields and "
                 f"raises for any other name, so the error is its caller's: {file}:{line}"
                 f"{' in ' + short if short else ''} asked {lookup[1]} (a value of another "
                 f"type than that code expects: a case it does not handle). {known}{yours}.")
    else:
        cause = (f"the traceback's innermost TVM frame raised it: {file}:{line}"
                 f"{' in ' + short if short else ''}; TVM's sources have no message of this "
                 f"form there, so the {what}came from the code itself"
                 f"{': ' + means if means else ''}. {known}{yours}.")
    fix = (f"read {file} line {line} ({short or 'that function'}) in the TVM in use to see what "
           "it expected; if the input is valid, it is a TVM bug: report it with the script "
           "(tk bisect finds the commit that introduced it)")
    return f"Raised in {where}", cause, fix, file, short


# A message that is only an IR object's repr: "IterSplit(IterMark(v1, extent=...), ...)".
_REPR = re.compile(r"(?P<type>[A-Z][A-Za-z0-9]{2,})\(")


def from_ir_key(exception: str | None, message: str, version: LogVersion | None
                ) -> tuple[str, str, str, str] | None:
    """(title, cause, fix, file) for a ``KeyError`` whose key is one of TVM's IR objects (its
    repr, as TVM prints it): a lookup keyed by IR nodes missed one. The object's type and the
    header declaring it come from the history's object type keys; the file implementing it is
    the source file of the same name."""
    from toolkit.explain.history import api

    if exception != "KeyError":
        return None
    body = message.split(":", 1)[-1].strip().strip("'\"")
    m = _REPR.match(body)
    if m is None:
        return None
    word = m.group("type")
    history = api()
    types = history.facts.get("T", {})
    # the repr drops the node class's suffix: IterSplit is arith.IterSplitExpr; a name several
    # IRs share (Call, Var: tir, relax, relay) does not say which type it is
    named = {word + suffix for suffix in ("", "Expr", "Stmt", "Node")}
    keys = [k for k in types if k.rsplit(".", 1)[-1] in named and types[k][1]]
    if version is not None and any(types[k][0] & version.mask for k in keys):
        keys = [k for k in keys if types[k][0] & version.mask]
    if len({k.rsplit(".", 1)[0] if "." in k else "" for k in keys}) != 1:
        return None
    key = max(keys, key=lambda k: types[k][0].bit_length())
    mask, header = types[key]
    cls = key.rsplit(".", 1)[-1]
    stem = header.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    area = header.removeprefix("include/tvm/").rsplit("/", 1)[0]
    sources = [p for p in history.facts.get("P", {}) if p.endswith(f"/{stem}.cc")]
    source = next((p for p in sources if p.startswith(f"src/{area}/")), None)
    if source is None and len(sources) == 1:
        source = sources[0]
    where = f"{header}" + (f", implemented in {source}" if source and source != header else "")
    v = history.versions
    yours = f"; the TVM in this log is {version.describe()} ({version.why})" if version else ""
    file = source or header
    cause = (f"the KeyError's key is an IR object of type {key} (TVM's object type in "
             f"{v.span(mask)}, declared in {where}): a lookup keyed by such objects missed "
             f"one, a case the code working on {cls} ({file}) does not handle for this "
             f"input{yours}.")
    fix = (f"update TVM to the newest release (fixes to {file.rsplit('/', 1)[-1]} are not in "
           "older ones) and rebuild; if it fails the same way there, report it with the "
           "script that builds the model (tk bisect finds the commit that introduced it).")
    return f"A lookup keyed by a TVM {cls} missed ({file})", cause, fix, file
