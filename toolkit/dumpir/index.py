"""``DIR/index.json``: one record per pass in the order the passes started, plus a summary.

Leaf passes carry what they did to each function (store keys before and after); wrapper
passes (``sequential``, ``_pipeline``, ...) carry only their nesting and time. A leaf's
``received`` map is present when the module it received is not the previous leaf's output
(the pipeline moved on to another module: Relax -> TIR, host/device split).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.dumpir.store import write_atomic
from toolkit.errors import UserError

FORMAT = "tk-dump-ir/1"
INDEX = "index.json"

# Record kinds. A wrapper's "own" record is the change it made itself, before its first or
# after its last nested pass (SplitHostDevice adds the kernels, then runs ConvertSSA); it
# replays like a leaf. "codegen" records hold the generated source of one module.
PASS = "pass"
WRAPPER = "wrapper"
OWN = "own"
CODEGEN = "codegen"
LEAF_KINDS = (PASS, OWN)

# Which module a record ran on: "main" until the host/device split, then "host" or "device".
MAIN, HOST, DEVICE = "main", "host", "device"

# How a pass changed the module, from least to most.
UNCHANGED = "unchanged"
RENAMED = "renamed-only"
PRINTS_IDENTICALLY = "prints-identically"
CHANGED = "changed"


@dataclass
class FuncChange:
    name: str
    before: str | None  # store keys; None when the function is not stored (--funcs/--passes)
    after: str | None
    prints_identically: bool = False


@dataclass
class Rename:
    old: str
    new: str
    key: str | None


@dataclass
class PassRecord:
    seq: int
    name: str
    depth: int
    parent: int | None
    kind: str = PASS  # or WRAPPER, OWN, CODEGEN
    seconds: float = 0.0
    status: str = "ok"  # "failed" for the pass that raised and the wrappers around it
    change: str | None = None
    stored: bool = True
    functions: int = 0
    received: dict[str, str | None] | None = None
    added: dict[str, str | None] = field(default_factory=dict)
    removed: dict[str, str | None] = field(default_factory=dict)
    changed: list[FuncChange] = field(default_factory=list)
    renamed: list[Rename] = field(default_factory=list)
    error: str | None = None
    module: str | None = None  # full-module file under --all, or the failed pass's input
    lane: str | None = None  # MAIN, HOST or DEVICE: the module the record produced
    lane_target: str | None = None  # that module's target ("cuda -arch=sm_80", "llvm")
    sources: dict[str, str] | None = None  # codegen: file name -> store key
    verify: dict[str, Any] | None = None  # codegen under --verify: tool, ok, first error
    repro: str | None = None  # the pass that raised: whether repro.py was run and reproduces
    schedule_rules: dict[str, str] | None = None  # ApplyDefaultSchedule: function -> dlight rule


def classify(record: PassRecord) -> str:
    """How a leaf pass changed the module, from what it added, removed, changed and renamed."""
    if record.added or record.removed or any(not c.prints_identically for c in record.changed):
        return CHANGED
    if record.changed:
        return PRINTS_IDENTICALLY
    return RENAMED if record.renamed else UNCHANGED


@dataclass
class Recompile:
    """What compiles a dump's workload again exactly, to render its texts on first ask.

    A dump written by ``tk dump-ir`` holds version keys and no function texts
    (``toolkit/dumpir/store.py``); the first ``show``/``find``/``diff``/``compare``/``page``
    compiles again with this and sets ``rendered``. Dumps without one (older tk) hold texts.
    """

    workload: str  # as tk loads it: builtin:NAME, or the file's absolute path
    workload_sha256: str | None  # of the file, so that a changed file is refused
    target: str
    extensions: list[str]  # --ext, resolved paths, loaded before the second compile
    passes: str | None
    funcs: str | None
    pass_config: dict[str, Any] | None
    tvm_version: str
    tvm_build: str | None  # TVM's git commit (libinfo), where the build says
    stop_before: tuple[int, str] | None = None  # (seq, name): a crashed run's second dump
    rendered: bool = False
    not_reproduced: list[str] = field(default_factory=list)  # keys the second compile missed

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["stop_before"] = list(self.stop_before) if self.stop_before else None
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Recompile:
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        stop = d.get("stop_before")
        d["stop_before"] = (int(stop[0]), str(stop[1])) if stop else None
        return cls(**d)


def _record_dict(record: PassRecord) -> dict[str, Any]:
    # dataclasses.asdict deep-copies every value; on a 40-layer model that is most of the
    # time spent writing the index.
    d = dict(record.__dict__)
    d["changed"] = [dict(c.__dict__) for c in record.changed]
    d["renamed"] = [dict(r.__dict__) for r in record.renamed]
    return d


def record_from_dict(d: dict[str, Any]) -> PassRecord:
    d = {k: v for k, v in d.items() if k in _FIELDS}  # fields of a newer tk are ignored
    d["changed"] = [FuncChange(**c) for c in d.get("changed", [])]
    d["renamed"] = [Rename(**r) for r in d.get("renamed", [])]
    return PassRecord(**d)


_FIELDS = set(PassRecord.__dataclass_fields__)


@dataclass
class DumpIndex:
    summary: dict[str, Any]
    input: dict[str, str | None]
    passes: list[PassRecord]
    recompile: Recompile | None = None  # None: the texts were stored as the dump was made

    def to_json(self) -> dict[str, Any]:
        data = {
            "format": FORMAT, "summary": self.summary, "input": self.input,
            "passes": [_record_dict(p) for p in self.passes],
        }
        if self.recompile is not None:
            data["recompile"] = self.recompile.to_json()
        return data

    def keys(self) -> set[str]:
        """Every function key the index names (codegen sources' too)."""
        found = {k for k in self.input.values() if k is not None}
        for r in self.passes:
            for keys in (r.received or {}, r.added, r.removed, r.sources or {}):
                found.update(k for k in keys.values() if k is not None)
            found.update(k for c in r.changed for k in (c.before, c.after) if k is not None)
            found.update(x.key for x in r.renamed if x.key is not None)
        return found

    def first_seen(self) -> dict[str, tuple[int, str]]:
        """Where each function key first appears: (pass number, function name); the input
        module is pass -1. Two compiles that made a version at the same place made the same
        version (rendering checks its keys by this)."""
        return first_seen(self.input, self.passes)

    def rekey(self, keys: dict[str, str]) -> None:
        """Replace keys (version keys by text keys, once rendered; others stay), then settle
        what needed the texts: whether a change prints identically, and so each leaf's kind
        of change."""
        def new(mapping: dict[str, str | None]) -> dict[str, str | None]:
            return {n: keys.get(k, k) if k is not None else None for n, k in mapping.items()}

        self.input = new(self.input)
        for r in self.passes:
            if r.received is not None:
                r.received = new(r.received)
            r.added, r.removed = new(r.added), new(r.removed)
            for x in r.renamed:
                x.key = keys.get(x.key, x.key) if x.key is not None else None
            for c in r.changed:
                c.before = keys.get(c.before, c.before) if c.before is not None else None
                c.after = keys.get(c.after, c.after) if c.after is not None else None
                c.prints_identically = c.before is not None and c.before == c.after
            if r.kind in LEAF_KINDS and r.status == "ok":
                r.change = classify(r)

    @property
    def texts_pending(self) -> bool:
        """Whether the texts are still to be rendered by a second compile."""
        return self.recompile is not None and not self.recompile.rendered

    @property
    def leaves(self) -> list[PassRecord]:
        return [p for p in self.passes if p.kind in LEAF_KINDS]


def encode(index: DumpIndex) -> bytes:
    # Compact: json's C encoder only runs without indent (pretty printing costs ~1 s on mlp40).
    return json.dumps(index.to_json(), separators=(",", ":")).encode()


def write(directory: Path, index: DumpIndex) -> Path:
    path = directory / INDEX
    write_atomic(path, encode(index))
    return path


def read(directory: Path) -> DumpIndex:
    path = directory / INDEX
    if not path.is_file():
        raise UserError(f"{directory} is not a tk dump-ir directory (no {INDEX})")
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise UserError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise UserError(f"{path} is not a {FORMAT} index (format {got!r})")
    try:
        if not (isinstance(data["summary"], dict) and isinstance(data["input"], dict)
                and isinstance(data["passes"], list)):
            raise TypeError("summary, input or passes of the wrong kind")
        recompile = data.get("recompile")
        return DumpIndex(data["summary"], data["input"],
                         [record_from_dict(p) for p in data["passes"]],
                         None if recompile is None else Recompile.from_json(recompile))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UserError(f"{path} is not a well-formed {FORMAT} index "
                        f"({type(e).__name__}: {e})") from None


# Pass-name prefixes per generation: ``tir.X`` until v0.23, ``tirx.X`` / ``s_tir.X`` after.
_TIR_PREFIXES = ("tir.", "tirx.", "s_tir.")


def canonical_pass_name(name: str) -> str:
    """A pass name comparable across TVM generations (``s_tir.LoopPartition`` -> ``tir.LoopPartition``).

    Pure string work: no tvm import, so dumps from other TVMs can be compared anywhere.
    """
    for prefix in _TIR_PREFIXES:
        if name.startswith(prefix):
            return "tir." + name[len(prefix):]
    return name


def first_seen(input: dict[str, str | None], passes: list[PassRecord]) -> dict[str, tuple[int, str]]:
    """``DumpIndex.first_seen`` of a module's input keys and pass records (a recorder's too)."""
    seen: dict[str, tuple[int, str]] = {}

    def note(seq: int, mapping: dict[str, str | None]) -> None:
        for name, key in mapping.items():
            if key is not None:
                seen.setdefault(key, (seq, name))

    note(-1, input)
    for r in passes:
        note(r.seq, r.received or {})
        note(r.seq, r.added)
        note(r.seq, {c.name: c.after for c in r.changed})
        note(r.seq, {x.new: x.key for x in r.renamed})
    return seen
