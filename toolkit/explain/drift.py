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

import re
from collections.abc import Iterator
from dataclasses import dataclass

from toolkit.explain.history import ApiHistory, api, indexes
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
    ("converter", ("Unsupported function types", "not supported for frontend",
                   "operators are not implemented"), re.compile(
        r"(?:Unsupported function types \[(?P<torch>[^\]\n]*)\]|not supported for frontend "
        r"(?P<fe>\w+): (?P<ops>[^\n]*)|operators are not implemented: \[(?P<pt>[^\]\n]*)\])")),
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


def _answer(history: ApiHistory, kind: str, m: re.Match[str],
            version: LogVersion | None) -> Answer | None:
    g = m.groupdict()
    if kind == "python":
        mod, attr = g.get("mod"), g.get("attr")
        name = f"{mod}.{attr}" if mod and attr else (mod or attr or "")
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
        return _python(history, name, m, version)
    if kind == "member":
        if "in __getattr__" in m.string[max(0, m.start() - 400):m.start()]:
            return None  # resolved at run time (a target's attributes): no static history
        return _member(history, g.get("cls") or g.get("tcls") or "", g["attr"], m, version)
    if kind == "global":
        return _global(history, g["name"], m, version)
    if kind == "type":
        return _type(history, g["name"], m, version)
    return _converters(history, g, m, version)


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
    if name == "tvm_ffi" or name.startswith("tvm_ffi."):
        ffi = history.python("tvm_ffi")
        if not ffi:
            return None
        return Answer("python", name, m.start(), excerpt,
                      f"{name} is a package of its own (TVM {v.first(ffi)} and newer import it)",
                      f"TVM split its FFI into the tvm_ffi package in {v.first(ffi)}; this Python "
                      f"cannot import {name}{_yours(version)}.",
                      "pip install apache-tvm-ffi (the version TVM was built with), or from a "
                      "source tree: pip install ./3rdparty/tvm-ffi")
    if not mask:
        near = history.near("N", name) or history.near("M", name)
        hint = f" Similar names: {', '.join(near)}." if near else ""
        if rename and rename.new:
            return _renamed(history, name, 0, rename, m, version)
        return Answer("python", name, m.start(), excerpt,
                      f"No Apache TVM release has {name}",
                      f"no release from {v.labels[0]} to main has {name} (a fork's, an extension's "
                      f"or a typo){_yours(version)}.{hint}",
                      "check the spelling, or the project (fork or extension) that provides it")
    if rename is not None and rename.new != name and not (mask >> rename.at & 1):
        return _renamed(history, name, mask, rename, m, version)
    side = _on_side(mask, version, history)
    when = f"{name} exists in {v.span(mask)}"
    gone = v.after_last(mask)
    note = history.deprecations.get(name)
    warned = f" It warned: {note.replace(chr(31), '…')}." if note else ""
    if side == "older":
        return Answer("python", name, m.start(), excerpt,
                      f"{name} is newer than this TVM (added in {v.first(mask)})",
                      f"{when}{_yours(version)}: older than the code that uses it.{warned}",
                      f"upgrade TVM to {v.first(mask)} or newer, or write the code for this "
                      "version's API (its tutorials and docs)")
    if side == "newer" or (side == "" and gone):
        removed = f"removed in {gone}" if gone else "not in main"
        return Answer("python", name, m.start(), excerpt,
                      f"{name} was {removed}",
                      f"{when} and was {removed}{_yours(version)}.{warned}",
                      f"use a TVM that has it ({v.span(mask)}), or port the code to the newer "
                      "API: no rename could be established from TVM's history")
    if side == "inside":
        return Answer("python", name, m.start(), excerpt,
                      f"{name} should exist in this TVM ({v.span(mask)})",
                      f"{when}, and so does the TVM in this log ({version.describe()}): the "
                      "installed package is incomplete or another tvm shadows it, or it was "
                      "built without the part that defines it.",
                      "check which tvm is imported (python -c 'import tvm; print(tvm.__file__)')"
                      " and run tk doctor")
    return Answer("python", name, m.start(), excerpt, f"{name} exists from {v.first(mask)}",
                  f"{when}; the log does not show which TVM it ran.",
                  f"use TVM {v.first(mask)} or newer")


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


def _converters(history: ApiHistory, g: dict[str, str | None], m: re.Match[str],
                version: LogVersion | None) -> Answer | None:
    v = history.versions
    raw = g.get("torch") or g.get("ops") or g.get("pt") or ""
    ops = [o.strip(" '\"") for o in raw.split(",") if o.strip(" '\"")]
    frontend = (g.get("fe") or ("torch" if g.get("torch") or g.get("pt") else "")).lower()
    if not ops or not frontend:
        return None
    facts = history.facts.get("K", {})
    parts = []
    for op in ops[:8]:
        masks = [(key, mask) for key, (mask, _) in facts.items()
                 if key.endswith(f":{op}") and f".frontend.{frontend}" in key.split(":")[0]]
        if not masks:
            parts.append(f"{op}: no TVM release converts it")
            continue
        mask = 0
        for _key, k_mask in masks:
            mask |= k_mask
        side = _on_side(mask, version, history)
        if side == "older":
            parts.append(f"{op}: converted from {v.first(mask)} on (newer than this TVM)")
        else:
            parts.append(f"{op}: converted in {v.span(mask)}")
    newer = any("newer than this TVM" in p for p in parts)
    return Answer("converter", ",".join(ops), m.start(), m.group(0),
                  f"the {frontend} frontend of this TVM has no converter for {', '.join(ops[:4])}",
                  f"{'; '.join(parts)}{_yours(version)}.",
                  "upgrade TVM to the version that converts them" if newer else
                  "rewrite the model without these operators (or decompose them before export), "
                  "or add converters for them to the frontend's convert map")
