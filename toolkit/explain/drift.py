"""API drift: a name the log's TVM does not have, answered from TVM's history.

A log that says ``module 'tvm.te' has no attribute 'create_schedule'``, ``cannot import name
'auto_scheduler' from 'tvm'``, ``No module named 'tvm.relay'``, ``'Schedule' object has no
attribute 'get_block'``, ``Cannot find global function relay.backend.contrib.uma.X``,
``Cannot find type ObjectPath`` or ``Unsupported function types ['mm.default']`` names
something TVM added, removed, renamed or compiles only with an option. The history
(:mod:`toolkit.explain.history`) knows which versions have each name; the log's own TVM version
(:mod:`toolkit.explain.tvm_version`), when the log shows it, says which side of the change the
user is on.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from toolkit.explain.history import ApiHistory, api, ecosystem_apis, indexes
from toolkit.explain.scan import matches
from toolkit.explain.tvm_version import LogVersion

SOURCE = "tk's index of apache/tvm (scripts/explain_index.py)"
# Distinct names answered per log: each answer may scan a kind's names for similar ones, so
# a log of thousands of different missing names must not cost thousands of scans.
MAX_ANSWERS = 16


@dataclass
class Answer:
    """One API-drift answer: where in the log, what it names, and what history says."""

    kind: str  # python, member, global, type, converter
    name: str
    start: int  # offset in the log
    excerpt: str
    title: str
    cause: str
    fix: str
    origin: str = ""  # "" for TVM's history; "rule" for what a fixed reading of the log says


# (kind, needles, pattern): each needle is a literal the pattern's match holds.
PATTERNS: list[tuple[str, tuple[str, ...], re.Pattern[str]]] = [
    ("python", ("has no attribute",), re.compile(
        r"module '(?P<mod>[\w.]+)' has no attribute '(?P<attr>\w+)'")),
    ("member", ("has no attribute",), re.compile(
        r"(?:'(?P<cls>\w+)' object|type object '(?P<tcls>\w+)') has no attribute '(?P<attr>\w+)'")),
    ("python", ("cannot import name",), re.compile(
        r"cannot import name '?(?P<attr>\w+)'?(?: from '(?P<mod>[\w.]+)')?")),
    ("python", ("No module named",), re.compile(r"No module named '?(?P<mod>[\w.]+)'?")),
    ("global", ("Cannot find global function", "Function is not found", "Cannot find function ",
                "Cannot find ffi::Function"), re.compile(
        r"(?:Cannot find global function|Global Function is not found:|Cannot find function|"
        r"Cannot find ffi::Function)\s+`?(?P<name>[\w.$]+[\w$])`?")),
    ("type", ("Cannot find type ",), re.compile(r"Cannot find type (?:key )?`?(?P<name>[\w.]+[\w])")),
    ("unbound", ("is not defined",), re.compile(r"name '(?P<ident>\w+)' is not defined")),
    ("unset", ("local variable",), re.compile(
        r"(?:cannot access local variable '(?P<ident>\w+)' where it is not associated with a "
        r"value|local variable '(?P<old>\w+)' referenced before assignment)")),
    ("signature", ("unexpected keyword argument", "positional argument", "keyword-only argument"),
     re.compile(r"(?P<func>[\w.]+)\(\) (?:got an unexpected keyword argument '(?P<kw>\w+)'|"
                r"missing \d+ required (?:positional|keyword-only) arguments?: "
                r"(?P<missing>'\w+'(?:(?:,? and |, )'\w+')*)|takes (?:from \d+ to )?\d+ "
                r"positional arguments? but (?P<given>\d+) (?:were|was) given)")),
    # ctypes looking up a C function the loaded library does not export: Windows' words
    # ("function 'X' not found") and Linux' (an AttributeError "lib.so: undefined symbol: X")
    ("symbol", ("' not found", "undefined symbol"), re.compile(
        r"(?:function '(?P<sym>\w+)' not found|AttributeError: [^\n]*?\.(?:so|dylib|dll)[\w.]*: "
        r"undefined symbol: (?P<sym2>\w+))")),
    ("converter", ("Unsupported function types", "not supported for frontend",
                   "operators are not implemented", "perator"), re.compile(
        r"(?:Unsupported function types \[(?P<torch>[^\]\n]*)\]|not supported for frontend "
        r"(?P<fe>\w+) ?[:：] ?(?P<ops>[^\n]*)|operators are not implemented: [\[{](?P<pt>[^\]}\n]*)[\]}]|"
        # a frontend's own words for one operator: "Operator Greater not implemented.",
        # "Operator 'X' is not supported", "operator X is not converted"
        r"\b[Oo]perator:? [`'\"]?(?P<op>[\w:.]+)[`'\"]? (?:is )?not (?:yet )?"
        r"(?:implemented|supported|converted))")),
    # TFLite's and Caffe's check_unsupported_ops word it "in frontend X" and quote the set:
    # "not supported in frontend TFLite: 'A', 'B'", "... in frontend Caffe: {'Interp'}"
    ("converter", ("not supported in frontend",), re.compile(
        r"not supported in frontend (?P<fe>\w+) ?[:：] ?[\[{]?(?P<ops>[^\]}\n]*)")),
    # a TVM C function the linker finds in no library given: Apple ld's listing
    # ('"_TVMFuncCall", referenced from:') and GNU ld's ("undefined reference to `TVMFuncCall'")
    ("linked", ('", referenced from:', "undefined reference to `TVM"), re.compile(
        r"\"_(?P<sym>TVM\w+)\", referenced from:|undefined reference to `(?P<sym2>TVM\w+)'")),
]


def answers(text: str, version: LogVersion | None) -> Iterator[Answer]:
    """Every API-drift answer the history gives for ``text``, in the log's order."""
    history = api()
    seen: set[tuple[str, str]] = set()
    found = [(kind, m) for kind, needles, pattern in PATTERNS
             for m in matches(text, pattern, needles, one_line=True)]
    found.sort(key=lambda km: km[1].start())
    asked: set[str] = set()
    for kind, m in found:
        if m.group(0) in asked:
            continue
        asked.add(m.group(0))
        if len(asked) > MAX_ANSWERS:
            return
        answer = _answer(history, kind, m, version)
        if answer is not None and (answer.kind, answer.name) not in seen:
            seen.add((answer.kind, answer.name))
            yield answer


_BY_LAST: dict[int, dict[str, list[str]]] = {}


def _globals_by_last(history: ApiHistory) -> dict[str, list[str]]:
    """Registered global functions by their last dotted part, built once per history."""
    if id(history) not in _BY_LAST:
        table: dict[str, list[str]] = {}
        for name in history.facts.get("F", {}):
            table.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        _BY_LAST[id(history)] = table
    return _BY_LAST[id(history)]


def _answer(history: ApiHistory, kind: str, m: re.Match[str],
            version: LogVersion | None) -> Answer | None:
    g = m.groupdict()
    if kind == "python":
        mod, attr = g.get("mod"), g.get("attr")
        if attr and not mod and m.group(0).startswith("cannot import name"):
            mod = _importing_module(attr, m)
            if not mod:
                # no module shown: a name only one registered global ends with is what
                # _init_api would have put there (micro._rpc_connect for '_rpc_connect')
                ends = _globals_by_last(history).get(attr, [])
                if len(ends) == 1:
                    return _global(history, ends[0], m, version)
        name = f"{mod}.{attr}" if mod and attr else (mod or attr or "")
        theirs = _project_of(name)
        if theirs is not None and "." in name:  # tilelang.x, tvm_ffi.x: from their own releases
            return _python(theirs, name, m, None)
        if not name.startswith(("tvm.", "tvm_ffi")) and name not in ("tvm", "tvm_ffi"):
            return None
        if mod and attr and any(p.startswith("_") and p != "_ffi" for p in mod.split(".")[1:]):
            # tvm.relay._make.Any, tvm.relax.transform._ffi_api.X: FFI globals the library
            # registers and _init_api put on a private module.
            base = re.sub(r"\.(?:_ffi_api|_api_internal)$", "", mod.removeprefix("tvm."))
            for candidate in dict.fromkeys([f"{base}.{attr}", f"{mod.removeprefix('tvm.')}.{attr}"]):
                if history.get("F", candidate):
                    return _global(history, candidate, m, version)
            return None
        answer = _python(history, name, m, version)
        return _gated(history, answer, version) if answer is not None else None
    if kind == "member":
        if "in __getattr__" in m.string[max(0, m.start() - 400):m.start()]:
            return None  # resolved at run time (a target's attributes): no static history
        return _member(history, g.get("cls") or g.get("tcls") or "", g["attr"], m, version)
    if kind == "global":
        return _global(history, g["name"], m, version)
    if kind == "type":
        return _type(history, g["name"], m, version)
    if kind == "unbound":
        return _unbound(history, g["ident"], m, version)
    if kind == "unset":
        return _unset(history, g.get("ident") or g.get("old") or "", m, version)
    if kind == "signature":
        # A project built on TVM that the log names is asked first (make_kwargs_wrapper is
        # apache-tvm-ffi's, with versions of its own); one the log shows only by its users'
        # alias for it (T.gemm( for TileLang) after TVM.
        func = (g["func"] or "").rpartition(".")[2]
        others = ecosystem_apis()
        named = [h for h in others if h.project.shown_in(m.string)]
        aliased = [h for h in others if h not in named and h.project.called_in(m.string, func)]
        # a project the log names answers for a function only it has (TileLang's autotune)
        # even where the log does not show the function's module: a script's bare call
        tvms = bool(history.signatures(".".join(func.split(".")[-2:])))
        for h in (*named, history, *aliased):
            answer = _signature(h, g, m, version if h.project.own else None,
                                alone=h in named and not tvms)
            if answer is not None:
                return answer
        return None
    if kind == "symbol":
        return _symbol(history, g["sym"] or g["sym2"], m, version)
    if kind == "linked":
        return _linked(history, g["sym"] or g["sym2"], m)
    return _converters(history, g, m, version)


def _project_of(name: str) -> ApiHistory | None:
    """The history of the project built on TVM whose package ``name`` is in, if tk ships it."""
    root = name.partition(".")[0]
    return next((h for h in ecosystem_apis() if h.project.package == root), None)


def _symbol(history: ApiHistory, sym: str, m: re.Match[str],
            version: LogVersion | None) -> Answer:
    """A C function TVM's Python looks up through ctypes that the loaded library does not
    export: from tk's table of TVM's C symbols per release (``E``: declared TVM_DLL, exported;
    ``W``: defined ``extern "C"`` without it, so a Windows DLL does not export it)."""
    v = history.versions
    exported = (history.get("E", sym) or (0, ""))
    plain = (history.get("W", sym) or (0, ""))
    windows = m.group(0).startswith("function ")  # ctypes' words for a DLL's missing export
    on = " (this message is ctypes' on Windows, for a DLL's exports)" if windows else ""
    if not exported[0] and not plain[0]:
        return Answer("symbol", sym, m.start(), m.group(0),
                      f"the library loaded does not export {sym}",
                      f"the Python calls the C function {sym} through ctypes and the loaded "
                      f"library does not export it{on}; no Apache TVM release from "
                      f"{v.labels[0]} on defines it (a fork's or another project's symbol, "
                      f"in a library of another version than its Python){_yours(version)}.",
                      "use the library built from the same sources as the Python that calls it "
                      "(rebuild it, or reinstall the matching wheel); on Windows a function "
                      "must be declared with its project's export macro (__declspec(dllexport))"
                      " to be exported")
    parts = []
    if exported[0]:
        parts.append(f"exported (declared TVM_DLL, {exported[1]}) in {v.span(exported[0])}")
    if plain[0]:
        parts.append(f"defined extern \"C\" without TVM_DLL ({plain[1]}) in {v.span(plain[0])}, "
                     "so MSVC does not export it from a Windows DLL (nor does a build with "
                     "hidden visibility, such as HIDE_PRIVATE_SYMBOLS=ON)")
    fixed = ""
    if exported[0] and plain[0] and indexes(exported[0])[0] > indexes(plain[0])[0]:
        fixed = f"; TVM marked it for export from {v.first(exported[0])}"
    good = v.span(exported[0]) if exported[0] else ""
    return Answer("symbol", sym, m.start(), m.group(0),
                  f"the library loaded does not export {sym}",
                  f"the Python calls {sym} through ctypes and the loaded library does not export "
                  f"it{on}: {sym} is {'; '.join(parts)}{fixed} (tk's table of TVM's C "
                  f"symbols per release){_yours(version)}.",
                  (f"use a library and Python of one TVM that exports it ({good}): rebuild "
                   "libtvm from the same tree as the Python, or install a wheel of that version"
                   if good else "use a TVM library and Python of the same version")
                  + ("; on Windows, a build of a tree where it lacks TVM_DLL cannot work: "
                     "update to one that has it, or add TVM_DLL to its declaration"
                     if plain[0] else ""))


def _on_side(mask: int, version: LogVersion | None, history: ApiHistory) -> str:
    """How the log's TVM relates to versions ``mask``: "", "older", "newer", "inside"."""
    if version is None or not mask:
        return ""
    if version.mask & mask:
        return "inside"
    return "older" if version.mask.bit_length() - 1 < indexes(mask)[0] else "newer"


def _yours(version: LogVersion | None) -> str:
    return f"; the TVM in this log is {version.describe()} ({version.why})" if version else ""


def _python(history: ApiHistory, name: str, m: re.Match[str],
            version: LogVersion | None) -> Answer | None:
    v = history.versions
    mask = history.python(name)
    rename = history.rename_of(name)
    excerpt = m.group(0)
    own = history.project.own
    p = history.project.name  # "TVM", or the project built on it whose history this is
    if own and (name == "tvm_ffi" or name.startswith("tvm_ffi.")):
        ffi = history.python("tvm_ffi")
        if not ffi:
            return None
        return Answer("python", name, m.start(), excerpt,
                      f"{name} is a package of its own (TVM {v.first(ffi)} and newer import it)",
                      f"TVM split its FFI into the tvm_ffi package in {v.first(ffi)}; this Python "
                      f"cannot import {name}{_yours(version)}.",
                      "pip install apache-tvm-ffi (the version TVM was built with), or from a "
                      "source tree: pip install ./3rdparty/tvm-ffi")
    if name == "tvm" and excerpt.startswith("No module named"):
        return _not_on_path(m, version)
    if not mask:
        near = _near(history, name)
        # with the releases that have each: "load_module (v0.7.0–main)" says when it came
        hint = " Similar names: " + ", ".join(
            f"{n} ({v.span(has)})" if (has := history.python(n)) else n for n in near
        ) + "." if near else ""
        if rename and rename.new:
            return _renamed(history, name, 0, rename, m, version)
        misread = history.reads_of(name) if own else []
        if misread:
            return _misread(history, name, misread, near, m, version)
        return Answer("python", name, m.start(), excerpt,
                      f"No {'Apache TVM' if own else p} release has {name}",
                      f"no release from {v.labels[0]} to main has {name} (a fork's, an extension's "
                      f"or a typo){_yours(version)}.{hint}",
                      "check the spelling, or the project (fork or extension) that provides it")
    if rename is not None and rename.new != name and not (mask >> rename.at & 1):
        return _renamed(history, name, mask, rename, m, version)
    if own and excerpt.startswith("module '") and history.get("M", name):
        answer = _not_loaded(history, name, m, version)
        if answer is not None:
            return answer
    side = _on_side(mask, version, history)
    when = f"{name} exists in {'' if own else p + ' '}{v.span(mask)}"
    gone = v.after_last(mask)
    note = history.deprecations.get(name)
    warned = f" It warned: {note.replace(chr(31), '…')}." if note else ""
    if side == "older":
        return Answer("python", name, m.start(), excerpt,
                      f"{name} is newer than this {p} (added in {v.first(mask)})",
                      f"{when}{_yours(version)}: older than the code that uses it.{warned}",
                      f"upgrade {p} to {v.first(mask)} or newer, or write the code for this "
                      "version's API (its tutorials and docs)")
    if side == "newer" or (side == "" and gone):
        removed = f"removed in {gone}" if gone else "not in main"
        dist = DISTRIBUTIONS.get(history.project.package)
        pin = f" (pin {dist}<{gone.lstrip('v')})" if dist and gone and gone[1:2].isdigit() else ""
        return Answer("python", name, m.start(), excerpt,
                      f"{name} was {removed}" + ("" if own else f" ({p} {v.span(mask)})"),
                      f"{when} and was {removed}{_yours(version)}.{warned}",
                      f"use a {p} that has it ({v.span(mask)}){pin}, or port the code to the "
                      f"newer API: no rename could be established from {p}'s history")
    # The log's TVM known only as a range that starts inside the name's versions and reaches
    # past its removal (a file many releases have): the removal may be the cause.
    after = version.mask & ~mask if version is not None and side == "inside" else 0
    if gone and after.bit_length() > mask.bit_length():
        return Answer("python", name, m.start(), excerpt,
                      f"{name} was removed in {gone}",
                      f"{when} and was removed in {gone}; the TVM in this log is "
                      f"{version.describe()} ({version.why}), which reaches past it: on {gone} "
                      f"or newer the name is gone.{warned}",
                      f"use a TVM that has it ({v.span(mask)}; the code was written for it), or "
                      "port the code to the newer API: no rename could be established from "
                      "TVM's history")
    if side == "inside":
        return Answer("python", name, m.start(), excerpt,
                      f"{name} should exist in this TVM ({v.span(mask)})",
                      f"{when}, and so does the TVM in this log ({version.describe()}): the "
                      "installed package is incomplete or another tvm shadows it, or it was "
                      "built without the part that defines it.",
                      "check which tvm is imported (python -c 'import tvm; print(tvm.__file__)')"
                      " and run tk doctor")
    script = "" if own else _users_script(history.project.package, m)
    return Answer("python", name, m.start(), excerpt, f"{name} exists from {v.first(mask)}",
                  f"{when}; the log does not show which {p} it ran.{script}",
                  f"use {p} {v.first(mask)} or newer" + (
                      "" if own else f" ({NEWER_BUILD.get(history.project.package, '')})"))


# What pip installs each project built on TVM as
DISTRIBUTIONS = {"tilelang": "tilelang", "mlc_llm": "mlc-llm", "tvm_ffi": "apache-tvm-ffi"}
# How a newer build of a project built on TVM is installed: its examples and tutorials follow
# its main branch, ahead of the last release on PyPI.
NEWER_BUILD = {
    "tilelang": "pip install -U tilelang, its nightly wheels, or pip install -e . in a clone of "
                "its main branch",
    "mlc_llm": "the nightly MLC wheels MLC-LLM's docs name for your platform, or a build of its "
               "main branch",
    "tvm_ffi": "pip install -U apache-tvm-ffi",
}
_FRAME = re.compile(r"File \"(?P<file>[^\"]+)\", line \d+")


def _users_script(package: str, m: re.Match[str]) -> str:
    """Where the user's own script (not the package) used the name: what that says."""
    frames = _FRAME.findall(m.string[max(0, m.start() - 2000):m.start()])
    if not frames or f"/{package}/" in frames[-1].replace("\\", "/"):
        return ""
    return (f" The script that uses it ({frames[-1]}) was written for a release that has it "
            "(examples and tutorials follow the project's main branch, ahead of its last "
            "release on PyPI).")


def _not_on_path(m: re.Match[str], version: LogVersion | None) -> Answer:
    """``No module named 'tvm'``: this Python finds no tvm package - not installed into it,
    and no tree's python/ on PYTHONPATH; what the log sets (TVM_LIBRARY_PATH, PYTHONPATH)
    says which tree was meant."""
    from toolkit.explain.toolchain import log_paths, tree_of

    paths = log_paths(m.string)
    lib, py = paths.get("TVM_LIBRARY_PATH") or paths.get("TVM_HOME"), paths.get("PYTHONPATH")
    shown = ""
    tree = "<tvm tree>"
    if lib:
        tree = tree_of(lib)
        shown = (f"; the log sets {'TVM_LIBRARY_PATH' if 'TVM_LIBRARY_PATH' in paths else 'TVM_HOME'}"
                 f"={lib} (the libraries of {tree}), which says where libtvm is, not where the "
                 "Python package is")
        if py and tree_of(py) != tree:
            shown += f", and PYTHONPATH={py}, another tree's"
    elif py:
        tree = tree_of(py)
        shown = f"; the log sets PYTHONPATH={py}, which holds no tvm package this Python found"
    return Answer("python", "tvm", m.start(), m.group(0),
                  "this Python finds no tvm package (not installed, not on PYTHONPATH)",
                  "the tvm package is neither installed into this interpreter (pip) nor on "
                  "PYTHONPATH: a TVM built from source is found through "
                  f"PYTHONPATH=<tree>/python or pip install -e <tree>/python{shown}"
                  f"{_yours(version)}.",
                  f"export PYTHONPATH={tree}/python:$PYTHONPATH (the tree whose build "
                  f"TVM_LIBRARY_PATH names), or pip install -e {tree}/python with this "
                  "interpreter's pip (python -m pip), or pip install apache-tvm", origin="rule")


def _near(history: ApiHistory, name: str) -> list[str]:
    """Existing names and modules under the same parent that look like ``name``, closest
    first (``tvm.errors``: the module ``tvm.error`` before any name)."""
    import difflib

    last = name.rpartition(".")[2]
    pool = dict.fromkeys(history.near("M", name) + history.near("N", name))
    return sorted(pool, key=lambda n: -difflib.SequenceMatcher(
        None, last, n.rpartition(".")[2]).ratio())[:3]


def _misread(history: ApiHistory, name: str, own: list[tuple[str, str, int, str]],
             near: list[str], m: re.Match[str], version: LogVersion | None) -> Answer:
    """``name`` is in no release, yet TVM's own Python reads it: a mistake in TVM's sources,
    fixed in the first release after the last one that reads it."""
    v = history.versions
    path, chain, mask, func = max(own, key=lambda r: r[2].bit_length())
    where = f"{path}" + (f" ({func})" if func else "")
    fixed = v.after_last(mask)
    meant = f" (the module that exists is {near[0]}: {chain.replace(name, near[0], 1)})" \
        if near else ""
    return Answer("python", name, m.start(), m.group(0),
                  f"A mistake in TVM's own sources: {where} reads {chain}",
                  f"no release from {v.labels[0]} to main has {name}, yet TVM's {where} reads "
                  f"{chain} in {v.span(mask)}{meant}; the code path that reaches it raises this "
                  f"AttributeError{_yours(version)}.",
                  (f"update TVM to {fixed} or newer (newer TVM), the first release whose {path} "
                   "no longer reads it, or correct the line in your tree" if fixed else
                   f"correct {chain} in {path} (a TVM bug: report it)"))


def _gated(history: ApiHistory, answer: Answer, version: LogVersion | None) -> Answer:
    """``answer`` about a module that ``import tvm`` loads only in a build with an option
    (``toolchain.BUILD_GATED``): where the log's TVM may be such a build, the option comes
    first; a build without it lacks the module as if its version did."""
    from toolkit.explain.toolchain import BUILD_GATED

    gate = BUILD_GATED.get(answer.name)
    if gate is None:
        return answer
    option, first, last = gate
    labels = history.versions.labels
    if first not in labels or last not in labels:
        return answer
    mask = sum(1 << i for i in range(labels.index(first), labels.index(last) + 1))
    if version is not None and not version.mask & mask:
        return answer
    return Answer(answer.kind, answer.name, answer.start, answer.excerpt,
                  f"{answer.name} is there only in a build with {option} ON ({first}–{last})",
                  f"in TVM {first}–{last} `import tvm` loads {answer.name} only when the library "
                  f"was built with {option} ON (python/tvm/__init__.py reads it from "
                  f"tvm.support.libinfo()): a build without it has no {answer.name}. Beside "
                  f"that, {answer.cause[0].lower()}{answer.cause[1:]}",
                  f"set({option} ON) in config.cmake and rebuild TVM (check with python -c "
                  f"\"import tvm; print(tvm.support.libinfo()['{option}'])\"); on a newer TVM: "
                  f"{answer.fix}")


def _renamed(history: ApiHistory, name: str, mask: int, rename, m: re.Match[str],
             version: LogVersion | None) -> Answer:
    v = history.versions
    was = f"{name} exists in {v.span(mask)}; " if mask else ""
    new_mask = history.python(rename.new)
    side = _on_side(new_mask, version, history)
    if side == "older":  # the code was written for the new name, the TVM is older
        return Answer("python", name, m.start(), m.group(0),
                      f"{name} only exists as {rename.new} in newer TVM",
                      f"{was}in {v.labels[rename.at]} it moved to {rename.new} ({rename.how})"
                      f"{_yours(version)}.",
                      f"use {name} in this TVM, or upgrade")
    return Answer("python", name, m.start(), m.group(0),
                  f"{name} moved to {rename.new} in {v.labels[rename.at]}",
                  f"{was}from {v.labels[rename.at]} on it is {rename.new} ({rename.how})"
                  f"{_yours(version)}.",
                  f"use {rename.new}" + (f" (in {v.span(new_mask)})" if new_mask else ""))


def _member(history: ApiHistory, cls: str, attr: str, m: re.Match[str],
            version: LogVersion | None) -> Answer | None:
    v = history.versions
    owners = history.members.get(f"{cls}.{attr}")
    if not owners and cls != "NoneType":
        raised = _raised_in_tvm(cls, attr, m, version)
        if raised is not None:
            return raised
    if cls not in history.classes:
        return None  # not a TVM class tk knows: the history has nothing to say
    if not owners:
        members = {n.rpartition(".")[2] for owner in history.classes[cls]
                   for n in history.facts.get("C", {}) if n.rpartition(".")[0] == owner}
        import difflib

        near = difflib.get_close_matches(attr, sorted(members), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        return Answer("member", f"{cls}.{attr}", m.start(), m.group(0),
                      f"No TVM {cls} has {attr}",
                      f"no Apache TVM release's {cls} class ({', '.join(history.classes[cls][:2])})"
                      f" defines {attr}{hint}",
                      f"check the attribute name against this version's {cls}")
    mask = 0
    for _owner, owner_mask in owners:
        mask |= owner_mask
    side = _on_side(mask, version, history)
    owner = owners[-1][0]
    gone = v.after_last(mask)
    if side == "older":
        title, fix = (f"{cls}.{attr} is newer than this TVM (added in {v.first(mask)})",
                      f"upgrade TVM to {v.first(mask)} or newer")
    elif side == "inside":
        return None  # present in that version: an object of another class, not drift
    elif gone:
        title, fix = (f"{cls}.{attr} was removed in {gone}",
                      f"use a TVM that has it ({v.span(mask)}), or the newer API")
    else:
        title, fix = (f"{cls}.{attr} exists from {v.first(mask)}", f"use TVM {v.first(mask)} or newer")
    return Answer("member", f"{cls}.{attr}", m.start(), m.group(0), title,
                  f"{owner}.{attr} exists in {v.span(mask)}{_yours(version)}.", fix)


def _raised_in_tvm(cls: str, attr: str, m: re.Match[str],
                   version: LogVersion | None) -> Answer | None:
    """``'X' object has no attribute 'y'`` raised by TVM's own Python (its innermost frame is a
    file of TVM) when no TVM class X ever had y: TVM's code reads an attribute the object it
    holds never has - a bug in that file, or an object of another type than it expects."""
    from toolkit.explain.frames import foreign

    frame = _raising_frame(m)
    if frame is None or foreign(frame[0]):
        return None
    path, line, func = frame
    file = "python/tvm/" + re.split(r"(?:^|[/\\])tvm[/\\]", path)[-1].replace("\\", "/")
    name = file.rsplit("/", 1)[-1]
    where = _frame_place(file, line, func)
    like = f", such as Python's ast.{cls}" if hasattr(ast, cls) else ""
    return Answer("member", f"{file}:{cls}.{attr}", m.start(), m.group(0),
                  f"TVM's {name} reads {attr} of a {cls} object, which has none",
                  f"{where}, TVM's own code, reads .{attr} of a {cls} object, and no Apache TVM "
                  f"release's {cls} class defines {attr} (tk's index of apache/tvm): the object "
                  f"is not what {name} expects (another library's {cls}{like}), a bug in "
                  f"{name} at this version{_yours(version)}.",
                  f"read {file} line {line} in the TVM in use; if the input is valid, update TVM "
                  "(a newer release may have fixed the line) or report it")


def _global(history: ApiHistory, name: str, m: re.Match[str],
            version: LogVersion | None) -> Answer | None:
    v = history.versions
    hit = history.get("F", name)
    rename = history.renames.get(f"ffi:{name}")
    if not hit:
        near = history.near("F", name)
        similar = ", ".join(f"{n} ({v.span(history.get('F', n)[0])})" for n in near)
        hint = f" Similar TVM globals: {similar}." if near else ""
        prefix = name.split(".")[0]
        return Answer("global", name, m.start(), m.group(0),
                      f"{name} is not a TVM global: a library that registers it is not loaded",
                      f"no Apache TVM release ({v.labels[0]} to main) registers {name}; it comes "
                      f"from another library (an extension, a fork, a project on top of TVM such "
                      f"as the one that owns '{prefix}.*'), which this process did not load."
                      f"{hint}",
                      f"load the library that registers {prefix}.* before calling it (import its "
                      "Python package, or tvm.runtime.load_module / ctypes.CDLL the .so); "
                      "`tk ext check LIB.so` lists what a library registers")
    mask, where = hit
    side = _on_side(mask, version, history)
    option = history.option_for(where) if where else None
    if rename and not (mask >> (v.all.bit_length() - 1) & 1):
        new = rename[-1].new.removeprefix("ffi:")
        if side != "older":
            return Answer("global", name, m.start(), m.group(0),
                          f"{name} was renamed {new} in {v.labels[rename[-1].at]}",
                          f"{name} is registered in {v.span(mask)} ({where}); from "
                          f"{v.labels[rename[-1].at]} it is {new}{_yours(version)}.",
                          f"call {new}, or use the Python API that wraps it in your TVM version")
    successors = _registered_after(history, mask, where)
    if successors and side != "older":
        after = v.after_last(mask)
        listed = ", ".join(successors)
        return Answer("global", name, m.start(), m.group(0),
                      f"{name} is gone from {after}; {where} registers {listed} from then",
                      f"{name} is registered in {v.span(mask)} ({where}); from {after} that file "
                      f"registers {listed} instead, none of them before: likely the new "
                      f"names of what it registered{_yours(version)}. Code written for the old "
                      "name (the traceback's caller: a project made for an older TVM, or TVM's "
                      f"own Python not yet updated in {after}) calls a global the library no "
                      "longer has.",
                      f"call the new name ({successors[0]}{', ...' if len(successors) > 1 else ''}"
                      f") or a release whose Python calls it; with a TVM older than {after}, "
                      f"the library loaded is not the one its Python expects")
    if side == "older":
        return Answer("global", name, m.start(), m.group(0),
                      f"{name} is newer than this TVM (registered from {v.first(mask)})",
                      f"{name} is registered in {v.span(mask)} ({where}){_yours(version)}.",
                      f"upgrade TVM to {v.first(mask)} or newer")
    if side == "newer":
        return Answer("global", name, m.start(), m.group(0),
                      f"{name} was removed in {v.after_last(mask)}",
                      f"{name} is registered in {v.span(mask)} ({where}){_yours(version)}.",
                      f"use a TVM that has it ({v.span(mask)}), or the API that replaced it")
    if option is not None:
        opt, _ = option
        return Answer("global", name, m.start(), m.group(0),
                      f"{name} is compiled only with {opt}",
                      f"{name} is registered in {where} ({v.span(mask)}), which CMake compiles "
                      f"only with {opt} ON: the library loaded was built without it"
                      f"{_yours(version)}.",
                      f"rebuild TVM with set({opt} ON) in config.cmake (tk build: the matching "
                      "flag), or load a build that has it")
    return Answer("global", name, m.start(), m.group(0),
                  f"{name} is registered by TVM {v.span(mask)}, but not by the library loaded",
                  f"{name} is registered in {where} ({v.span(mask)}){_yours(version)}: the "
                  "libtvm this process loaded is not the one its Python sources expect (built "
                  "from other sources, or older than a git pull of them).",
                  "rebuild libtvm from the same sources as the Python package, or point "
                  "TVM_LIBRARY_PATH at the matching build; `tk doctor` compares the two")


_BY_FILE: dict[int, dict[str, list[tuple[str, int]]]] = {}
MAX_SUCCESSORS = 6  # a file that gains more new globals than this was rewritten, not renamed


def _registered_after(history: ApiHistory, mask: int, where: str) -> list[str]:
    """The globals ``where`` registers from the version after ``mask``'s last and in none
    before: what an FFI refactor renamed them to (``runtime._datatype_register`` gone in
    v0.21.0, ``dtype.register_custom_type`` from then in the same file); [] when the global
    is still registered, or the file gained none or too many."""
    after = mask.bit_length()
    if not where or after >= len(history.versions.labels):
        return []
    if id(history) not in _BY_FILE:
        table: dict[str, list[tuple[str, int]]] = {}
        for name, (m, file) in history.facts.get("F", {}).items():
            table.setdefault(file, []).append((name, m))
        _BY_FILE[id(history)] = table
    new = sorted(n for n, m in _BY_FILE[id(history)].get(where, [])
                 if m >> after & 1 and not m & ((1 << after) - 1))
    return new if len(new) <= MAX_SUCCESSORS else []


def _type(history: ApiHistory, name: str, m: re.Match[str],
          version: LogVersion | None) -> Answer | None:
    v = history.versions
    hit = history.get("T", name)
    if not hit:
        return None
    mask = hit[0]
    return Answer("type", name, m.start(), m.group(0),
                  f"the loaded libtvm lacks object type {name} ({v.span(mask)})",
                  f"the Python package registers object type {name}, which libtvm has in "
                  f"{v.span(mask)}; the library this process loaded does not define it, so it "
                  f"is older (or from other sources) than the Python package{_yours(version)}.",
                  "rebuild libtvm from the same sources as the Python package (or reinstall one "
                  "wheel that has both); `tk doctor` shows which library was loaded from where")


def _unbound(history: ApiHistory, ident: str, m: re.Match[str],
             version: LogVersion | None) -> Answer | None:
    """``NameError: name 'TX' is not defined`` raised by TVM's own code: the files of TVM that
    read the name without binding it, and the versions with that bug."""
    v = history.versions
    places = history.undefined(ident)
    if not places:  # no TVM file reads it unbound: the user's code (or a fork's)
        return _unbound_elsewhere(ident, m, version)
    # The file the traceback shows first, then those the log's version has, newest first.
    log = m.string

    def order(place: tuple[str, int, str]) -> tuple[bool, bool, int]:
        path, mask, _func = place
        shown = path.removeprefix("python/") in log
        return (shown, bool(version and version.mask & mask), mask.bit_length())

    places = sorted(places, key=order, reverse=True)
    path, mask, func = places[0]
    where = f"{path} ({func})" if func else path
    others = "; ".join(f"{p} ({v.span(k)})" for p, k, _ in places[1:4])
    fixed = v.after_last(mask)
    return Answer("unbound", f"{path}:{ident}", m.start(), m.group(0),
                  f"TVM's {path.rsplit('/', 1)[-1]} reads {ident}, which it never defines",
                  f"{where} uses {ident} without defining or importing it in {v.span(mask)}"
                  + (f" (no longer from {fixed})" if fixed else " (still in main)")
                  + (f"; the same in {others}" if others else "") + f"{_yours(version)}: a bug "
                  "in TVM, not in the code that called it.",
                  (f"upgrade TVM to {fixed} or newer" if fixed else
                   f"define or import {ident} in {path} (and report it to TVM)")
                  + "; until then avoid the code path (another rule or schedule)")


def _not_loaded(history: ApiHistory, name: str, m: re.Match[str],
                version: LogVersion | None) -> Answer | None:
    """``module 'tvm' has no attribute 'testing'`` where ``tvm.testing`` is a module that
    ``import tvm`` does not load (the history's ``B`` facts): it must be imported itself."""
    v = history.versions
    module = history.get("M", name)[0]
    loaded = (history.get("B", name) or (0, ""))[0] & module
    alone = module & ~loaded
    if not alone or (version is not None and not version.mask & alone):
        return None  # ``import tvm`` loads it in the log's TVM: another cause
    if version is None and not module >> (len(v.labels) - 1) & 1:
        return None  # a module main no longer has: its removal is the likelier answer
    # the first version that no longer loads it, after one that did
    stopped = next((i for i in indexes(alone) if i and loaded >> (i - 1) & 1), None)
    before = (f" (it did in {v.span(loaded)}"
              + (f"; `import tvm` stopped loading it in {v.labels[stopped]}" if stopped else "")
              + ")") if loaded else ""
    return Answer("python", name, m.start(), m.group(0),
                  f"{name} is a module that `import tvm` does not load: import it itself",
                  f"{name} is a module of TVM {v.span(module)}, but `import tvm` does not load "
                  f"it in {v.span(alone)}{before}, so there it is an attribute only once "
                  f"something imports it: code that uses {name} after a plain `import tvm` "
                  f"fails this way{_yours(version)}.",
                  f"add `import {name}` to the code (before its first use)")


def _unset(history: ApiHistory, ident: str, m: re.Match[str],
           version: LogVersion | None) -> Answer | None:
    """``UnboundLocalError: cannot access local variable 'x'`` raised in TVM's Python: the
    functions of the traceback's innermost TVM file that may read ``x`` before assigning it
    (the history's ``Y`` facts), and the versions with that path."""
    from toolkit.explain.frames import foreign, python_frames

    v = history.versions
    printed = python_frames(m.string[max(0, m.start() - 4000):m.start()])
    if not printed or foreign(printed[-1][0]) or not ident:
        return None  # raised in the user's (or a project's) own code, not TVM's
    shown = [f for f in printed if not foreign(f[0])]
    path, line, func = shown[-1]
    file = "python/tvm/" + re.split(r"(?:^|[/\\])tvm[/\\]", path)[-1].replace("\\", "/")
    places = history.unset_reads(file, ident)
    if not places:
        return None
    if version is not None and any(mask & version.mask for _, mask in places):
        places = [(f, mask) for f, mask in places if mask & version.mask]
    raising = [(f, mask) for f, mask in places if f.rsplit(".", 1)[-1] == func]
    short = file.rsplit("/", 1)[-1]
    listed = "; ".join(f"{f} ({v.span(mask)})" for f, mask in (raising or places)[:4])
    if raising:
        where = (f"{short} line {line} is in {func}, which assigns {ident} on some paths only "
                 f"and reads it after them: {listed}")
    else:  # the frame shown last calls the one that raised (a converter through a table)
        where = (f"the traceback stops at {func} ({short} line {line}), which calls the "
                 f"function that raised; in {file} the functions that assign {ident} on some "
                 f"paths only and read it after them are: {listed}")
    union = 0
    for _, mask in raising or places:
        union |= mask
    fixed = v.after_last(union)
    names = ", ".join(dict.fromkeys(f for f, _ in (raising or places)[:4]))
    return Answer("unset", f"{file}:{ident}", m.start(), m.group(0),
                  f"TVM's {short} reads {ident} before assigning it ({names})",
                  f"{where}. The input took a path that leaves {ident} unset (a case the code "
                  f"does not handle): a bug in TVM"
                  + (f", gone from {fixed} (the code no longer reads it unset)" if fixed else
                     ", still in main") + f"{_yours(version)}.",
                  (f"upgrade TVM to {fixed} or newer" if fixed else
                   f"report it to TVM with the input (the path through {names} that skips "
                   f"{ident})") + "; until then change the input so that path is not taken")


_FROM_IMPORT = re.compile(r"^\s*from (?P<dots>\.*)(?P<mod>[\w.]*) import (?P<names>[^\n#]+)$", re.M)
_TVM_MODULE = re.compile(r"(?:^|[/\\])(?P<path>tvm[/\\][\w/\\]+)\.py$")


def _importing_module(attr: str, m: re.Match[str]) -> str | None:
    """The module an ImportError without "from 'MOD'" (Python before 3.8 did not print it)
    imported ``attr`` from: the ``from ... import`` line the traceback shows above it, made
    absolute against the TVM file of the raising frame."""
    before = m.string[max(0, m.start() - 2000):m.start()]
    lines = [f for f in _FROM_IMPORT.finditer(before)
             if attr in re.split(r"[\s,()]+", f.group("names").replace(" as ", " "))]
    frame = _raising_frame(m)
    if not lines:
        return None
    line = lines[-1]
    if not line.group("dots"):
        return line.group("mod")
    found = _TVM_MODULE.search(frame[0]) if frame else None
    if not found:
        return None
    parts = re.split(r"[/\\]", found.group("path"))
    package = parts if parts[-1] == "__init__" else parts[:-1]
    up = len(line.group("dots")) - 1
    if up >= len(package):
        return None
    return ".".join([*package[:len(package) - up], *filter(None, [line.group("mod")])])


def _raising_frame(m: re.Match[str]) -> tuple[str, int, str] | None:
    """The innermost Python frame printed before the error ``m`` (within a bounded window):
    where a Python exception was raised."""
    from toolkit.explain.frames import python_frames

    shown = python_frames(m.string[max(0, m.start() - 2000):m.start()])
    return shown[-1] if shown else None


def _frame_place(path: str, line: int, func: str) -> str:
    """``FILE line N (in FUNC)``: where a frame stands, for a cause."""
    return f"{path} line {line}" + (f" (in {func})" if func and func != "<module>" else "")


def _unbound_elsewhere(ident: str, m: re.Match[str], version: LogVersion | None
                       ) -> Answer | None:
    """A NameError no TVM file explains, raised in the file of the traceback's innermost
    frame when that is not TVM's: a bug in that file."""
    from toolkit.explain.frames import foreign

    frame = _raising_frame(m)
    if frame is None or not foreign(frame[0]):
        return None
    path, line, func = frame
    name = re.split(r"[/\\]", path)[-1]
    where = _frame_place(path, line, func)
    return Answer("unbound", f"{path}:{ident}", m.start(), m.group(0),
                  f"{name} reads {ident}, which it never defines",
                  f"{where} reads {ident}, which nothing binds there; no Apache TVM release's "
                  f"file reads {ident} unbound (tk's index of apache/tvm), and the innermost "
                  f"frame is {name}, not TVM's: a bug in {name} (a typo or a missing "
                  f"import){_yours(version)}.",
                  f"fix {name} line {line} (define or import {ident}, or correct the name); if "
                  f"{name} belongs to an installed package (MLC-LLM, TileLang, ...), update that "
                  "package: a newer release may have fixed it")


def _signature(history: ApiHistory, g: dict[str, str | None], m: re.Match[str],
               version: LogVersion | None, alone: bool = False) -> Answer | None:
    """``build() got an unexpected keyword argument 'params'`` (or a missing argument, or too
    many positional ones): a call written for another version's parameters. ``alone``: the
    log names this project and TVM has no function of that name whose parameters changed, so
    one function of the project by that name answers without the log showing its module."""
    v = history.versions
    parts = (g["func"] or "").split(".")
    if parts[-1] == "__init__" and len(parts) < 2:
        return None  # which class's constructor: the message does not say
    candidates = history.signatures(".".join(parts[-2:]))
    if not candidates:
        return None
    kw, given = g.get("kw"), g.get("given")
    missing = re.findall(r"'(\w+)'", g.get("missing") or "")

    def fits(params: list[str]) -> bool:
        """Would the failed call have been accepted by these parameters?"""
        names = [p.rstrip("=").lstrip("*") for p in params]
        if kw:
            return kw in names or "**" in params
        if missing:
            required = {p for p in params if not p.endswith("=") and not p.startswith("*")}
            return not required & set(missing)
        star = next((i for i, p in enumerate(params) if p.startswith("*")), len(params))
        return star < len(params) and params[star] not in ("*", "**") or star >= int(given or 0)

    by_function: dict[str, list[tuple[list[str], int]]] = {}
    for function, params, mask in candidates:
        # one function under its newest name, across a move between modules (TileLang's
        # language.gemm -> language.gemm_op): a parameter it had before the move counts
        moved = history.rename_of(function)
        name = moved.new if moved is not None and moved.new else function
        by_function.setdefault(name, []).append((params, mask))
    log = m.string
    best = None
    for function, shapes in by_function.items():
        ok = sum(mask for params, mask in shapes if fits(params))
        bad = sum(mask for params, mask in shapes if not fits(params))
        if not ok or not bad:
            continue  # its parameters changed, but not in a way that explains this call
        module = function.rsplit(".", 1)[0] if len(parts) < 2 else function.rsplit(".", 2)[0]
        shown = module.replace(".", "/") in log or module in log
        if not (history.project.own or shown or history.project.called_in(log, parts[-1]) or
                alone and len(by_function) == 1):
            continue  # another project's function of that name: only where the log shows it
        key = (shown, bool(version and version.mask & bad), bad.bit_length())
        if best is None or key > best[0]:
            best = (key, function, shapes, ok, bad)
    if best is None:
        return None
    _, function, shapes, ok, bad = best
    newest_ok = max(((p, k) for p, k in shapes if fits(p)), key=lambda pk: pk[1].bit_length())[0]
    newest_bad = max(((p, k) for p, k in shapes if not fits(p)),
                     key=lambda pk: pk[1].bit_length())[0]
    what = (f"the keyword {kw}" if kw else f"without {', '.join(missing)}" if missing else
            f"{given} positional arguments")
    whose = "" if history.project.own else f"{history.project.name} "
    title = f"{function}() takes {what} only in {whose}{v.span(ok)}"
    # the keyword's story in one word: gone since a release, or new in one
    story = ""
    if kw and indexes(ok)[-1] < indexes(bad)[-1]:
        story = f" ({kw} was removed in {v.labels[indexes(ok)[-1] + 1]})"
    elif kw and indexes(ok)[0] > indexes(bad)[0]:
        story = f" ({kw} was added in {v.first(ok)})"
    cause = (f"the call was written for another version of {function}{story}: in {v.span(bad)} "
             f"it takes ({', '.join(newest_bad)}), in {v.span(ok)} ({', '.join(newest_ok)})"
             f"{_yours(version)}.")
    p = history.project.name
    if indexes(ok)[0] > indexes(bad)[-1] if indexes(bad) else False:
        fix = (f"upgrade {p} to {v.first(ok)} or newer, or call it the way this version's "
               f"signature takes: ({', '.join(newest_bad)})")
    else:
        fix = (f"call it with the parameters of the {p} in use ({', '.join(newest_bad)}), or use "
               f"{p} {v.span(ok)}")
    return Answer("signature", function, m.start(), m.group(0), title, cause, fix)


def _version_key(label: str) -> tuple[int, ...]:
    """``v0.24.0`` -> (0, 24, 0); ``main`` after every release."""
    return tuple(int(x) for x in label[1:].split(".")) if label.startswith("v") else (10**6,)


def _converters(history: ApiHistory, g: dict[str, str | None], m: re.Match[str],
                version: LogVersion | None) -> Answer | None:
    v = history.versions
    raw = g.get("torch") or g.get("ops") or g.get("pt") or g.get("op") or ""
    ops = [o.strip(" '\"") for o in raw.split(",") if o.strip(" '\"")]
    frontend = (g.get("fe") or ("torch" if g.get("torch") else "")).lower()
    if not frontend:  # the frontend's file in the log's traceback, when it shows one
        shown = _FRONTEND_FILE.search(m.string, max(0, m.start() - FRONTEND_BEHIND), m.end())
        frontend = shown.group(1).lower() if shown else _listed_by(g, m) or _frontend_raising(m)
    if not ops:
        return None
    facts = history.facts.get("K", {})
    parts, firsts, known = [], [], False
    for op in ops[:8]:
        by_frontend: dict[str, int] = {}
        for key, (mask, _) in facts.items():
            module, _, name = key.partition(":")
            # "torch" is relax's frontend.torch and relay's frontend.pytorch
            if name == op and ".frontend." in module and (
                    not frontend or f".frontend.{frontend}" in module
                    or f".frontend.py{frontend}" in module):
                # relax's torch frontend has two importers with maps of their own
                # (exported_program_translator, fx_translator): the one that converts it
                base, _, rest = module.partition(".frontend.")
                name, _, tail = rest.partition(".")
                fe = f"{base.removeprefix('tvm.')} {name}" + (
                    f" ({tail})" if tail and tail not in (name, f"{name}_frontend") else "")
                by_frontend[fe] = by_frontend.get(fe, 0) | mask
        if not by_frontend:
            where = f"the {frontend} frontend" if frontend else "any frontend"
            parts.append(f"{op}: no TVM release converts it in {where}")
            continue
        known = True
        for fe, mask in sorted(by_frontend.items(), key=lambda kv: kv[1] & -kv[1]):
            side = _on_side(mask, version, history)
            firsts.append(v.first(mask))
            if side == "older":
                parts.append(f"{op}: converted by the {fe} frontend from {v.first(mask)} on "
                             "(newer than this TVM)")
            else:
                parts.append(f"{op}: converted by the {fe} frontend in {v.span(mask)}")
    if not known and not frontend and g.get("op"):
        return None  # "Operator X is not supported" of no frontend tk knows: not a converter
    newer = any("newer than this TVM" in p for p in parts)
    if newer:
        fix = "upgrade TVM to the version that converts them"
    elif firsts and version is None:  # which side the log's TVM is on, the log does not say
        fix = (f"use TVM {min(firsts, key=_version_key)} or newer, which converts them, or "
               "rewrite the model without them")
    elif not known:
        fix = ("no release converts it: add a converter to the frontend's convert map, or "
               "change the model (decompose the operator before export)")
    else:
        fix = ("rewrite the model without these operators (or decompose them before export), "
               "or add converters for them to the frontend's convert map")
    of = f"the {frontend} frontend" if frontend else "the frontend"
    return Answer("converter", ",".join(ops), m.start(), m.group(0),
                  f"{of} of this TVM has no converter for {', '.join(ops[:4])}",
                  f"{'; '.join(parts)} (tk's table of each frontend's convert map per "
                  f"release){_yours(version)}.", fix)


def _listed_by(g: dict[str, str | None], m: re.Match[str]) -> str:
    """The frontend whose "The following operators are not implemented: ..." this is, by how
    it prints the names: Relay's PyTorch frontend a list (``['aten::erfinv']``), its
    TensorFlow frontend a set (``{'StatelessWhile'}``); "" for other messages."""
    if not g.get("pt"):
        return ""
    return "torch" if "[" in m.group(0) else "tensorflow"


def _frontend_raising(m: re.Match[str]) -> str:
    """The frontend whose own raise prints the message's line (from the error-site index:
    "Operator X not implemented." is the ONNX frontends'), or ""."""
    from toolkit.explain import raised

    start = m.string.rfind("\n", 0, m.start()) + 1
    end = m.string.find("\n", m.end())
    hits = raised.find(m.string[start:end if end >= 0 else None], None)
    shown = _FRONTEND_FILE.search(hits[0].site.file) if hits else None
    return shown.group(1).lower() if shown else ""


# A frontend's file in a traceback: relay/frontend/onnx.py, relax/frontend/torch/fx_translator.py
_FRONTEND_FILE = re.compile(r"frontend[/\\.](onnx|torch|pytorch|tflite|tensorflow|keras|mxnet|"
                            r"caffe2?|coreml|darknet|paddlepaddle|oneflow|stablehlo|nnef)")
FRONTEND_BEHIND = 4000  # characters of traceback above the message searched for its file


_REFERENCED_IN = re.compile(r"[ \t]*\n[^\n]*? in (?P<obj>[\w.+-]+\.(?:a|o|obj|so|dylib))\b")


def _linked(history: ApiHistory, sym: str, m: re.Match[str]) -> Answer | None:
    """A TVM C function an object calls and the link finds nowhere: the object was compiled
    by (or against) the TVM generation that exports it, the runtime linked in is of another.
    One answer per generation: the name is the span of releases that export it."""
    v = history.versions
    exported = history.get("E", sym) or history.get("W", sym)
    if not exported:
        return None
    mask, header = exported
    after = _REFERENCED_IN.match(m.string, m.end())  # Apple ld: the referencing object follows
    caller = after.group("obj") if after else "the code being linked"
    return Answer("linked", v.span(mask), m.start(), m.group(0),
                  f"{caller} calls {sym}, a TVM runtime function of {v.span(mask)} only, and "
                  "the runtime linked in has none",
                  f"{sym} is exported by TVM's runtime in {v.span(mask)} ({header}; tk's table "
                  f"of TVM's C symbols per release): {caller} was compiled by (or against) a "
                  "TVM of those releases, and the TVM runtime the link is given is of another "
                  "generation, or is missing from it (a model library compiled by one TVM, "
                  "linked into an app built with another).",
                  f"link the runtime of the TVM that compiled {caller} (for an MLC-LLM app: "
                  "the mlc-llm and TVM of one release, then mlc_llm package again), or "
                  "compile it again with the TVM whose runtime the app links")
