"""TVM's own history, as tk ships it: which versions have a name, and where TVM raises an error.

``toolkit/data/explain/`` holds two gzip'd text files that ``scripts/explain_index.py``
generates from the apache/tvm repository (every release tag from v0.2, and main); the NOTICE
beside them credits the source. They are read on first use only (``tk --help`` and most
commands never load them). The same two files for each project built on TVM that tk knows
(:data:`ECOSYSTEM`: apache-tvm-ffi's and TileLang's own releases) lie in a folder named for it,
and open with an ``@`` line: ``@<TAB>NAME<TAB>PACKAGE<TAB>ALIAS:MODULE`` (the project as users
name it, its Python package, and the name its users import a module as by convention).

``api.txt.gz``: a ``V`` line naming the versions, then one line per fact,
``KIND<TAB>NAME<TAB>RANGES[<TAB>EXTRA]`` where RANGES are version indexes (``3-11,14``):

- ``M`` a Python module, ``N`` a name a module offers (defined or re-exported), ``A`` a module
  offered under another name (EXTRA: the module it is, as ``tvm.nd`` was
  ``tvm.runtime.ndarray``), ``C`` a public class member (``module.Class.attr``);
- ``F`` a registered FFI global (EXTRA: the source file that registers it), ``T`` an object
  type key (EXTRA: the file declaring it), ``K`` a frontend converter (``module:op``),
  ``P`` a C++ source file;
- ``O`` a source directory compiled only with a CMake option (EXTRA: the option);
- ``R`` a rename, ``OLD<TAB>NEW<TAB>HOW<TAB>INDEX`` (the first version with NEW instead);
  ``D`` a deprecation warning and ``S`` a ``@deprecated(old, new)`` shim;
- ``U`` a name a TVM Python file reads but never binds (``FILE:NAME``; EXTRA: the function
  reading it): TVM's own ``NameError``;
- ``Y`` a local a function of TVM's Python may read before assigning it, assigned on some
  paths only (``FILE:FUNCTION:NAME``): TVM's own ``UnboundLocalError``;
- ``B`` a module that ``import tvm`` loads (its top-level imports, transitively): without it,
  ``tvm.a.b`` is an attribute only once something imports it;
- ``X`` a ``tvm.a.b`` chain a TVM Python file reads whose top-level name (``tvm.a``) no version
  has (``FILE:CHAIN``; EXTRA: the function reading it): TVM's own ``AttributeError``;
- ``G`` a function's parameters in the versions that have them, for functions whose
  parameters changed (``tvm.relax.vm_build.build(mod,target=,params=,*,exec_mode=)``: ``=``
  has a default, ``*`` starts keyword-only ones or takes extra positionals, ``**`` takes any
  keyword);
- ``H`` a name a public C++ header declares (an exported function, a class or struct, a type
  alias, a macro; EXTRA: the header), for code compiled against TVM's headers;
- ``E`` a ``TVM*`` C function marked for export (``TVM_DLL``) and ``W`` one defined
  ``extern "C"`` without the mark (a Windows DLL does not export it; EXTRA: the file);
- ``Q`` a Python package and the version a release asks for (``xgboost>=1.1.0,<1.6.0``;
  ``numpy`` for any; EXTRA: the requirements piece, ``core`` or an extra);
- ``L`` an LLVM major version TVM's LLVM codegen (``src/target/llvm``) tests for
  (``TVM_LLVM_VERSION >= 170`` is 17): the versions whose sources know that LLVM's API.

``sites.txt.gz``: ``KIND<TAB>FILE<TAB>FUNCTION<TAB>RANGES<TAB>LINES<TAB>CONDITION<TAB>TEMPLATE``
for every ``CHECK``/``ICHECK``/``LOG(FATAL)``/``TVM_FFI_THROW``/``throw``/``raise``/``assert``
(one in a ``#define``'s body under FUNCTION ``macro NAME(PARAMS)``, and again, expanded, in
each function of that file that uses the macro);
LINES is the line in every version (``820``) or per version, newest first
(``820@21;670@19-20``); the template's literal pieces are joined by ``\\x1f`` where a value is
formatted in.
"""

from __future__ import annotations

import gzip
import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from toolkit.explain.tables import DATA

WILD = "\x1f"
# Projects built on TVM whose history tk ships beside TVM's (data/explain/<key>/): public
# threads now report their failures more than TVM's, and their releases are their own.
ECOSYSTEM = ("tvm-ffi", "tilelang", "mlc-llm")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def parse_ranges(text: str) -> int:
    """``0-11,13`` -> a bitmask of version indexes."""
    mask = 0
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        for v in range(int(lo), int(hi or lo) + 1):
            mask |= 1 << v
    return mask


def indexes(mask: int) -> list[int]:
    return [v for v in range(mask.bit_length()) if mask >> v & 1]


@dataclass(frozen=True)
class Versions:
    """The versions the index covers, oldest first (``main`` last)."""

    labels: tuple[str, ...]

    def span(self, mask: int) -> str:
        """``v0.10.0–v0.19.0`` (several spans joined by ", "); ``main`` stays ``main``."""
        out, run = [], []
        for v in indexes(mask):
            if run and v != run[-1] + 1:
                out.append(self._run(run))
                run = []
            run.append(v)
        if run:
            out.append(self._run(run))
        return ", ".join(out)

    def _run(self, run: list[int]) -> str:
        first, last = self.labels[run[0]], self.labels[run[-1]]
        return first if first == last else f"{first}–{last}"

    def first(self, mask: int) -> str:
        return self.labels[indexes(mask)[0]]

    def after_last(self, mask: int) -> str | None:
        """The first version without it, after its last one; None if main has it."""
        last = mask.bit_length() - 1
        return self.labels[last + 1] if last + 1 < len(self.labels) else None

    def index_of(self, major_minor: tuple[int, int]) -> float:
        """Where ``0.N`` sits among the labels: an index, or a half step between two (a
        ``0.N.dev`` build, or a release the index does not hold)."""
        numbers = [_label_key(x) for x in self.labels]
        i = bisect_left(numbers, major_minor)
        if i < len(numbers) and numbers[i] == major_minor:
            return float(i)
        return i - 0.5

    @property
    def all(self) -> int:
        return (1 << len(self.labels)) - 1


def _label_key(label: str) -> tuple[int, int]:
    m = re.match(r"v(\d+)\.(\d+)", label)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


@dataclass(frozen=True)
class Project:
    """Whose history an index holds: TVM's, or a project's built on it."""

    name: str = "TVM"
    package: str = "tvm"
    alias: str = ""  # "T:tilelang.language": its users write T.gemm for tilelang.language.gemm

    @staticmethod
    def parse(line: str) -> Project:
        _, name, package, alias = (line.rstrip("\n").split("\t") + [""])[:4]
        return Project(name, package, alias)

    @property
    def own(self) -> bool:
        """TVM's own history (its versions are what a log's TVM version is told against)."""
        return self.package == "tvm"

    def shown_in(self, text: str) -> bool:
        """Whether a log names the project: its package, or its name (TileLang)."""
        return self.package in text or self.name in text

    def called_in(self, text: str, function: str) -> bool:
        """Whether a log shows ``function`` called through the conventional alias (T.gemm()."""
        short = self.alias.partition(":")[0]
        return bool(short) and f"{short}.{function}(" in text


@dataclass
class Rename:
    old: str
    new: str
    how: str
    at: int  # index of the first version with the new name


@dataclass
class ApiHistory:
    versions: Versions
    facts: dict[str, dict[str, tuple[int, str]]]  # kind -> name -> (mask, extra)
    renames: dict[str, list[Rename]]
    deprecations: dict[str, str]  # name -> warning text
    members: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # "Class.attr"
    classes: dict[str, list[str]] = field(default_factory=dict)  # short class -> module.Class
    by_parent: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # see _children
    unbound: dict[str, list[tuple[str, int, str]]] | None = None  # see undefined
    unset: dict[tuple[str, str], list[tuple[str, int]]] | None = None  # see unset_reads
    by_callable: dict[str, list[tuple[str, list[str], int]]] | None = None  # see signatures
    misread: dict[str, list[tuple[str, str, int, str]]] | None = None  # see reads_of
    project: Project = field(default_factory=Project)

    def get(self, kind: str, name: str) -> tuple[int, str] | None:
        return self.facts.get(kind, {}).get(name)

    def python(self, dotted: str) -> int:
        """Versions in which ``dotted`` (a module, a name in one, or a module alias) exists."""
        mask = 0
        for kind in ("M", "N", "A"):
            hit = self.get(kind, dotted)
            if hit:
                mask |= hit[0]
        parent, _, attr = dotted.rpartition(".")
        alias = self.get("A", parent)
        if alias and attr:  # tvm.nd.array -> tvm.runtime.ndarray.array, where tvm.nd was it
            mask |= self.python(f"{alias[1]}.{attr}") & alias[0]
        return mask

    def rename_of(self, dotted: str) -> Rename | None:
        """What ``dotted`` became: its own rename, else its package's (tvm.dlight.gpu.X ->
        tvm.s_tir.dlight.gpu.X when tvm.dlight became tvm.s_tir.dlight)."""
        best = None
        for r in self.renames.get(dotted, []):
            best = r if best is None or r.at > best.at else best
        if best is not None:
            return best
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
            for r in self.renames.get(prefix, []):
                if "module" in r.how or "package" in r.how:
                    candidate = f"{r.new}.{rest}"
                    if self.python(candidate) >> r.at & 1:
                        return Rename(dotted, candidate, f"{prefix} became {r.new}", r.at)
        return None

    def near(self, kind: str, name: str, limit: int = 3) -> list[str]:
        """Names of ``kind`` under the same parent that look like ``name``: those the newest
        version still has first (the current API), then those sharing its last word."""
        import difflib

        parent, _, last = name.rpartition(".")
        facts = self.facts.get(kind, {})
        pool = self._children(kind).get(parent, [])
        newest = len(self.versions.labels) - 1

        def score(n: str) -> tuple[bool, bool, float]:
            other = n.rpartition(".")[2]
            return (bool(facts[n][0] >> newest & 1), other.split("_")[-1] == last.split("_")[-1],
                    difflib.SequenceMatcher(None, last, other).ratio())

        close = [n for n in pool if n != name and score(n)[2] >= 0.4]
        return sorted(close, key=score, reverse=True)[:limit]

    def _children(self, kind: str) -> dict[str, list[str]]:
        """Names of ``kind`` by their parent (built once per kind, on first use)."""
        if kind not in self.by_parent:
            grouped: dict[str, list[str]] = defaultdict(list)
            for n in self.facts.get(kind, {}):
                grouped[n.rpartition(".")[0]].append(n)
            self.by_parent[kind] = dict(grouped)
        return self.by_parent[kind]

    def undefined(self, name: str) -> list[tuple[str, int, str]]:
        """(file, versions, function) of each TVM Python file that reads ``name`` unbound."""
        if self.unbound is None:  # grouped by name on first use
            grouped: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
            for key, (mask, func) in self.facts.get("U", {}).items():
                path, _, ident = key.rpartition(":")
                grouped[ident].append((path, mask, func))
            self.unbound = dict(grouped)
        return self.unbound.get(name, [])

    def unset_reads(self, file: str, name: str) -> list[tuple[str, int]]:
        """(function, versions) of each function of TVM's Python ``file`` that may read the
        local ``name`` before assigning it."""
        if self.unset is None:  # grouped by file and name on first use
            grouped: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
            for key, (mask, _) in self.facts.get("Y", {}).items():
                path, func, local = key.split(":")
                grouped[(path, local)].append((func, mask))
            self.unset = dict(grouped)
        return self.unset.get((file, name), [])

    def reads_of(self, name: str) -> list[tuple[str, str, int, str]]:
        """(file, chain, versions, function) of each TVM Python file that reads ``name`` (a
        ``tvm.a`` no version has) or a chain under it."""
        if self.misread is None:  # grouped by top-level name on first use
            grouped: dict[str, list[tuple[str, str, int, str]]] = defaultdict(list)
            for key, (mask, func) in self.facts.get("X", {}).items():
                path, _, chain = key.rpartition(":")
                grouped[".".join(chain.split(".")[:2])].append((path, chain, mask, func))
            self.misread = dict(grouped)
        return [r for r in self.misread.get(".".join(name.split(".")[:2]), [])
                if r[1] == name or r[1].startswith(name + ".")]

    def signatures(self, name: str) -> list[tuple[str, list[str], int]]:
        """(function, parameters, versions) of every function whose parameters changed
        across versions and whose name ends with ``name`` (``build``, ``Schedule.split``)."""
        if self.by_callable is None:  # grouped by their last one and two parts, on first use
            grouped: dict[str, list[tuple[str, list[str], int]]] = defaultdict(list)
            for key, (mask, _) in self.facts.get("G", {}).items():
                function, _, params = key.partition("(")
                entry = (function, params.rstrip(")").split(","), mask)
                parts = function.split(".")
                grouped[parts[-1]].append(entry)
                grouped[".".join(parts[-2:])].append(entry)
            self.by_callable = dict(grouped)
        return self.by_callable.get(name, [])

    def llvm_known(self) -> dict[int, int]:
        """LLVM major -> the versions whose LLVM codegen tests for it."""
        return {int(k): mask for k, (mask, _) in self.facts.get("L", {}).items()}

    def option_for(self, source: str) -> tuple[str, int] | None:
        """The CMake option (and versions) without which ``source`` is not compiled."""
        best = None
        for directory, (mask, option) in self.facts.get("O", {}).items():
            if directory.count("/") < 1:
                continue  # "3rdparty" alone: a path the index could not read in full
            if source.startswith(directory + "/") and (best is None or len(directory) > best[0]):
                best = (len(directory), option, mask)
        return (best[1], best[2]) if best else None


@cache
def api(data: Path = DATA) -> ApiHistory:
    """The API history in ``data``, loaded once per process (about 0.1 s)."""
    facts: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
    renames: dict[str, list[Rename]] = defaultdict(list)
    deprecations: dict[str, str] = {}
    labels: tuple[str, ...] = ()
    project = Project()
    with gzip.open(data / "api.txt.gz", "rt", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            kind = parts[0]
            if kind == "@":
                project = Project.parse(line)
            elif kind == "V":
                labels = tuple(parts[1:])
            elif kind == "R":
                renames[parts[1]].append(Rename(parts[1], parts[2], parts[3], int(parts[4])))
            elif kind == "D":
                deprecations[parts[1]] = parts[3]
            elif kind == "O":
                facts["O"][parts[1]] = (parse_ranges(parts[2]), parts[3])
            elif kind != "S":
                facts[kind][parts[1]] = (parse_ranges(parts[2]), parts[3] if len(parts) > 3 else "")
    history = ApiHistory(Versions(labels), dict(facts), dict(renames), deprecations,
                         project=project)
    members: dict[str, list[tuple[str, int]]] = defaultdict(list)
    classes: dict[str, list[str]] = defaultdict(list)
    for name, (mask, _) in facts.get("C", {}).items():
        owner, _, attr = name.rpartition(".")
        short = owner.rpartition(".")[2]
        members[f"{short}.{attr}"].append((owner, mask))
        if not classes[short] or classes[short][-1] != owner:
            classes[short].append(owner)
    history.members, history.classes = dict(members), dict(classes)
    return history


# --- error sites -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Where TVM raises an error: its message template, condition and the versions with it."""

    kind: str  # check, fatal, throw ValueError, raise ValueError, assert, diagnostic, schedule
    file: str
    function: str
    mask: int
    line: int  # in the newest version that has it
    condition: str
    template: str  # literal pieces joined by WILD
    lines: str = ""  # "820@21;670@19-20" where the line changed between versions, else ""

    def lines_by_version(self) -> list[tuple[int, int]]:
        """(line, versions) of every place the site has stood."""
        if not self.lines:
            return [(self.line, self.mask)]
        out = []
        for part in self.lines.split(";"):
            line, _, ranges = part.partition("@")
            out.append((int(line), parse_ranges(ranges)))
        return out

    def pieces(self) -> list[str]:
        return self.template.split(WILD)

    def literal(self) -> str:
        return "".join(self.pieces())


@dataclass
class SiteIndex:
    versions: Versions
    sites: list[Site]
    by_condition: dict[str, list[int]]  # condition without whitespace -> sites
    by_anchor: dict[str, list[int]]  # a template's rarest word -> sites
    by_file: dict[str, list[int]]  # source file -> sites
    # A condition as users retype it (see :func:`loose`) -> sites; built on first use.
    by_loose: dict[str, list[int]] = field(default_factory=dict)
    # Checks in a macro's body whose condition names its parameters (``__e == VK_SUCCESS`` in
    # VULKAN_CHECK_ERROR(__e)): (a literal part the log must show, the condition with the
    # parameters as wildcards, site).
    by_macro: list[tuple[str, re.Pattern[str], int]] = field(default_factory=list)
    project: Project = field(default_factory=Project)

    def loose_sites(self, condition: str) -> list[int]:
        if not self.by_loose:
            for i, site in enumerate(self.sites):
                if site.condition and site.kind in ("check", "assert"):
                    self.by_loose.setdefault(loose(site.condition), []).append(i)
        return self.by_loose.get(loose(condition), [])


def squeeze(text: str) -> str:
    return "".join(text.split())


_TRAILING_UNDERSCORE = re.compile(r"(?<=[A-Za-z0-9])_+(?![A-Za-z0-9_])")
_NOT_KEPT = re.compile(r"[\s()\[\]{}`'\";]+")


def loose(condition: str) -> str:
    """A condition as a user may retype it: case, whitespace, brackets, quotes and a member's
    trailing underscore (``additional_info_``) dropped; one pass over it."""
    return _NOT_KEPT.sub("", _TRAILING_UNDERSCORE.sub("", condition)).lower()


_MACRO = re.compile(r"macro \w+\((?P<params>[^)]*)\)")
MACRO_LITERAL = 6  # word characters a macro's condition must hold besides its parameters


def _macro_pattern(site: Site) -> tuple[str, re.Pattern[str]] | None:
    """A check in a ``macro NAME(P, Q)`` body whose condition uses P or Q: the condition,
    squeezed, with each parameter a wildcard, and its longest literal part; None when the
    rest says too little (``CODE == T`` matches any comparison)."""
    m = _MACRO.fullmatch(site.function)
    if m is None:
        return None
    params = [p.strip() for p in m.group("params").split(",") if p.strip()]
    cond = squeeze(site.condition)
    parts = re.split(r"\b(" + "|".join(map(re.escape, params)) + r")\b", cond) if params else [cond]
    literals = parts[::2]
    if len(parts) == 1 or sum(len(re.sub(r"\W", "", x)) for x in literals) < MACRO_LITERAL:
        return None
    pattern = "".join(re.escape(x) if k % 2 == 0 else r".+?" for k, x in enumerate(parts))
    return max(literals, key=len), re.compile(pattern)


@cache
def sites(data: Path = DATA) -> SiteIndex:
    """The error-site index in ``data``, loaded once per process (about 0.2 s)."""
    out: list[Site] = []
    labels: tuple[str, ...] = ()
    project = Project()
    with gzip.open(data / "sites.txt.gz", "rt", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "@":
                project = Project.parse(line)
                continue
            if parts[0] == "V":
                labels = tuple(parts[1:])
                continue
            kind, file, func, ranges, no, cond, template = parts
            newest, at, _ = no.partition("@")
            out.append(Site(kind, file, func, parse_ranges(ranges), int(newest), cond, template,
                            no if at else ""))
    frequency: dict[str, int] = defaultdict(int)
    words_of: list[set[str]] = []
    for site in out:
        words = set(_WORD.findall(site.literal()))
        words_of.append(words)
        for w in words:
            frequency[w] += 1
    by_anchor: dict[str, list[int]] = defaultdict(list)
    by_condition: dict[str, list[int]] = defaultdict(list)
    by_file: dict[str, list[int]] = defaultdict(list)
    for i, site in enumerate(out):
        by_file[site.file].append(i)
        if words_of[i]:
            by_anchor[min(words_of[i], key=lambda w: (frequency[w], w))].append(i)
        if site.condition and site.kind in ("check", "assert"):
            by_condition[squeeze(site.condition)].append(i)
    by_macro = []
    for i, site in enumerate(out):
        if site.function.startswith("macro ") and site.kind == "check":
            found = _macro_pattern(site)
            if found:
                by_macro.append((*found, i))
    return SiteIndex(Versions(labels), out, dict(by_condition), dict(by_anchor), dict(by_file),
                     by_macro=by_macro, project=project)


def ecosystem_apis() -> list[ApiHistory]:
    """The API histories of the projects built on TVM that tk ships."""
    return [api(DATA / key) for key in ECOSYSTEM]


def ecosystem_sites() -> list[SiteIndex]:
    """Their error-site indexes, where tk ships one (TVM's own index holds apache-tvm-ffi's
    sites, through the tvm-ffi each TVM release vendors, and knows which TVM a log is)."""
    return [sites(DATA / key) for key in ECOSYSTEM if (DATA / key / "sites.txt.gz").exists()]


def matches_template(template: str, text: str) -> int:
    """Literal characters of ``template`` found in ``text`` in order (formatted parts may be
    anything), or -1 when a piece is missing. Greedy leftmost search is exact for
    wildcard-only patterns and linear in the text."""
    pos, total = 0, 0
    pieces = template.split(WILD)
    last = max((i for i, p in enumerate(pieces) if p.strip()), default=-1)
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        # A message's edges are where logs differ in spacing ("(-10 vs. 0) : index=" against
        # the template's " index="), not its text.
        piece = piece.strip() if i == len(pieces) - 1 else piece.lstrip() if i == 0 else piece
        if not piece:
            continue
        at = text.find(piece, pos)
        if at < 0 and i == last:
            # A log that drops the formatted tail ("... the same relax var" for the template's
            # "... the same relax var: %s"): the piece less its punctuation ends the text.
            core = piece.rstrip(" :=,;")
            end = len(text.rstrip())
            at = end - len(core) if len(core) >= 4 and text.endswith(core, pos, end) else -1
            piece = core
        if at < 0:
            return -1
        pos, total = at + len(piece), total + len(piece)
    return total
