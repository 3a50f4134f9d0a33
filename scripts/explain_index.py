"""Regenerate the index of TVM's history that ``tk explain`` answers from.

    python scripts/explain_index.py GIT_DIR [--project tvm|tvm-ffi|tilelang]
                                    [--ffi-git-dir TVM_FFI_GIT_DIR]
                                    [--since v0.2] [--out toolkit/data/explain]

Reads a clone of apache/tvm (a bare git directory is enough: nothing is checked out; blobs
are read with ``git ls-tree`` and ``git cat-file --batch``) at every release tag ``vX.Y.0``
(``vX.Y`` before v0.6) from ``--since`` on, and at ``main``. Where a version vendors tvm-ffi as the submodule
``3rdparty/tvm-ffi`` and ``--ffi-git-dir`` holds that commit (a clone of apache/tvm-ffi),
the submodule's sources are read too. It writes two gzip'd text files into ``--out``:

- ``api.txt.gz``, the API history: every public Python name under ``tvm.*`` (modules, the
  names a module defines or re-exports, public class members) and ``tvm_ffi.*``, every
  registered FFI global (C++ ``TVM_REGISTER_GLOBAL`` / ``GlobalDef().def``, Python
  ``register_func``), and every C++ source file, each with the versions that have it; then
  the renames that can be established: a definition that left one module for another at the
  same version with the same body or signature (and the public names re-exporting it), a
  module whose definitions moved together, an FFI global whose name changed its prefix
  only, and deprecation shims (``@deprecated(old, new)``, ``warnings.warn("... deprecated")``);
  also each frontend's convert-map keys, TVM's ``TVM*`` C functions (exported with
  ``TVM_DLL`` or not), and the Python packages and versions each release asks for (read
  from python/setup.py, python/gen_requirements.py and pyproject.toml).
- ``sites.txt.gz``, the error sites: every ``CHECK``/``ICHECK``(``_EQ``, ...),
  ``TVM_FFI_CHECK``/``ICHECK``, ``LOG(FATAL)``, ``TVM_FFI_THROW``, ``TVM_FFI_VISIT_THROW``, ``throw``,
  ``Diagnostic::Error``, a ScheduleError's message, and Python ``raise``/``assert``, with
  its message template (formatted parts as wildcards), file, enclosing function, condition
  and the versions that have it. A ``#define`` whose body checks or raises is indexed at its
  definition (function ``macro NAME(PARAMS)``) and, expanded with the arguments, where its
  own file uses it (the condition a log prints is the expanded one).

With ``--project tvm-ffi`` or ``--project tilelang`` it indexes a project built on TVM (a
clone of apache/tvm-ffi or tile-ai/tilelang) at that project's own release tags into
``toolkit/data/explain/<project>/``; each file then opens with an ``@`` line naming the project.

Each unique blob is parsed once, however many versions share it. With two processes on a
2-core machine the whole apache/tvm history (v0.2 to main, 26 versions, about 20,000 unique
source blobs) takes six to eight minutes (436 s wall at a load of 9 on 2 shared cores). The
format is described in ``toolkit/explain/history.py``, which reads it; only names and
templates are kept, no source code.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import gzip
import hashlib
import multiprocessing
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

WILD = "\x1f"  # separates a template's literal pieces: a formatted part was there
SUBMODULE = "3rdparty/tvm-ffi"
CPP_EXT = (".cc", ".h", ".cu", ".cpp", ".mm", ".cuh")


@dataclass(frozen=True)
class Project:
    """A repository the index reads: the package it ships, where the package's folder lies,
    which tags are its releases, and how its users name it."""

    key: str  # --project and the data folder: toolkit/data/explain/<key>/ (TVM's at the top)
    name: str  # in tk's answers: what a user installs or reports ("apache-tvm-ffi")
    package: str  # the top-level Python package
    python: str  # the folder holding the package ("python/", or "" at the root)
    release: str  # a regular expression a release tag matches in full
    since: str  # the oldest release indexed by default
    alias: str = ""  # ALIAS:MODULE its users import a module as, by convention
    sites: bool = True  # whether to write its error sites (TVM's index holds tvm-ffi's already)
    native: tuple[str, ...] = ("src/", "include/")  # the folders of its C++ sources
    # Dates of main read as versions before its first release ("main@2023-06"): a project
    # whose users ran its main for a year before it tagged one (MLC-LLM)
    snapshots: tuple[str, ...] = ()

    @property
    def own(self) -> bool:
        """TVM itself (its CMake files, requirements and vendored tvm-ffi are read too)."""
        return self.key == "tvm"

    @property
    def package_dir(self) -> str:
        """The package's folder in the repository: ``python/tvm/``, ``tilelang/``."""
        return f"{self.python}{self.package}/"

    def header(self) -> str:
        """The line that opens each file of a project built on TVM (none for TVM's own)."""
        return "" if self.own else f"@\t{self.name}\t{self.package}\t{self.alias}\n"


POST = r"v\d+\.\d+\.\d+(?:[.-]post\d+)?"  # a release, or a post release standing for it
# Projects built on TVM whose own failures public threads now report most: their releases
# are versions of their own, which TVM's tags do not tell.
PROJECTS = {p.key: p for p in (
    Project("tvm", "TVM", "tvm", "python/", r"v\d+\.\d+(?:\.0)?", "v0.2",
            native=("src/", "include/", "jvm/native/src/main/native/", "web/emcc/")),
    Project("tvm-ffi", "apache-tvm-ffi", "tvm_ffi", "python/", POST, "v0.1.0", sites=False),
    Project("tilelang", "TileLang", "tilelang", "", POST, "v0.1.0",
            "T:tilelang.language"),
    Project("mlc-llm", "MLC-LLM", "mlc_llm", "python/", r"v\d+\.\d+\.\d+", "v0.17.1",
            native=("cpp/",), snapshots=("2023-07-01", "2023-11-01", "2024-03-01", "2024-07-01")),
)}



# --- reading git --------------------------------------------------------------------------


class Git:
    """A git directory read through plumbing commands; blobs come from one cat-file process."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def run(self, *args: str) -> str:
        return subprocess.run(["git", f"--git-dir={self.git_dir}", *args], check=True,
                              capture_output=True, text=True).stdout

    def tags(self) -> list[str]:
        return self.run("tag", "--list").split()

    def has(self, rev: str) -> bool:
        return subprocess.run(["git", f"--git-dir={self.git_dir}", "cat-file", "-e",
                               f"{rev}^{{commit}}"], capture_output=True).returncode == 0

    def tree(self, rev: str) -> list[tuple[str, str, str]]:
        """(type, sha, path) of every entry of ``rev``'s tree, recursively."""
        out = subprocess.run(["git", f"--git-dir={self.git_dir}", "ls-tree", "-r", "-z", rev],
                             check=True, capture_output=True).stdout.decode(errors="replace")
        rows = []
        for entry in filter(None, out.split("\0")):
            meta, path = entry.split("\t", 1)
            _mode, kind, sha = meta.split()
            rows.append((kind, sha, path))
        return rows

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        proc = subprocess.Popen(["git", f"--git-dir={self.git_dir}", "cat-file", "--batch"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        out: dict[str, bytes] = {}
        try:
            for sha in shas:
                proc.stdin.write(f"{sha}\n".encode())
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) < 3:
                    continue
                size = int(header[2])
                out[sha] = proc.stdout.read(size)
                proc.stdout.read(1)
        finally:
            proc.stdin.close()
            proc.wait()
        return out


def release_versions(git: Git, since: str, release: str, snapshots: tuple[str, ...] = ()
                     ) -> list[tuple[str, str]]:
    """(label, rev): main as it was at each of ``snapshots`` (dates before the first release),
    then every release tag (TVM's ``vX.Y.0``, ``vX.Y`` before v0.6) from ``since`` on, oldest
    first, then main."""
    def key(tag: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", tag.partition("post")[0]))

    floor = key(since)
    # One tag per release: a release tagged only as a post release (TileLang's v0.1.6.post1)
    # counts under its first one.
    first: dict[tuple[int, ...], str] = {}
    for t in sorted(git.tags(), key=lambda t: (key(t), t)):
        if re.fullmatch(release, t) and key(t) >= floor:
            first.setdefault(key(t), t)
    versions = [(f"main@{date[:7]}", git.run("rev-list", "-1", "--first-parent",
                                              f"--before={date}", "main").strip())
                for date in snapshots if git.has("main")]
    versions += [(t, f"refs/tags/{t}") for _, t in sorted(first.items())]
    if git.has("main"):
        versions.append(("main", "main"))
    return versions


# --- Python sources -----------------------------------------------------------------------


@dataclass
class PyFacts:
    """What one Python file defines, imports and raises (its path decides its module)."""

    own: dict[str, str] = field(default_factory=dict)  # name -> signature key
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (module, name)
    stars: list[str] = field(default_factory=list)
    all_names: list[str] | None = None
    members: dict[str, list[str]] = field(default_factory=dict)  # class -> public attributes
    deprecated: list[tuple[str, str]] = field(default_factory=list)  # (name, message)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old, new) from @deprecated
    globals: list[str] = field(default_factory=list)
    sites: list[tuple] = field(default_factory=list)  # (kind, func, line, cond, pieces)
    converters: list[str] = field(default_factory=list)  # a frontend's convert-map keys
    undefined: list[tuple[str, str]] = field(default_factory=list)  # (name, function reading it)
    tvm_reads: list[tuple[str, str]] = field(default_factory=list)  # (tvm.a.b, function reading it)
    params: dict[str, str] = field(default_factory=dict)  # public function/method -> parameters
    loads: list[str] = field(default_factory=list)  # modules its top-level imports load
    unset: list[tuple[str, str]] = field(default_factory=list)  # (local, function) read maybe unset


def module_of(path: str, root: str) -> str | None:
    """``python/tvm/a/b.py`` -> ``tvm.a.b``; None for private or test modules."""
    rel = path[len(root):-3].split("/")
    if rel[-1] == "__init__":
        rel.pop()
    parts = [p for p in rel if p]
    if any(p.startswith("_") and p != "_ffi" for p in parts[1:]) or "tests" in parts:
        return None
    return ".".join(parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def _signature(node: ast.AST) -> str:
    """What makes a definition recognisable after a move: ``f:BODY:ARGS`` for a function (a
    hash of its body less the docstring, and its argument names), ``c:METHODS`` for a class
    (its method names). Compared by :func:`same_definition`."""
    if isinstance(node, ast.ClassDef):
        methods = sorted(n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
        return "c:" + ",".join(methods) if len(methods) > 1 else ""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
            getattr(node.body[0], "value", None), ast.Constant) else node.body
        dumped = "".join(ast.dump(b) for b in body)
        digest = hashlib.sha1(dumped.encode()).hexdigest()[:12] if len(dumped) > 200 else ""
        args = ",".join(a.arg for a in [*node.args.posonlyargs, *node.args.args,
                                        *node.args.kwonlyargs] if a.arg not in ("self", "cls"))
        return f"f:{digest}:{args}"
    return ""


def same_definition(old: str, new: str) -> bool:
    """Is ``new`` the definition ``old`` was (signatures from :func:`_signature`)? The same
    body; or the same (non-empty) arguments; or a class with mostly the same methods."""
    if not old or not new or old[0] != new[0]:
        return False
    if old.startswith("c:"):
        a, b = set(old[2:].split(",")), set(new[2:].split(","))
        return len(a & b) >= 2 and len(a & b) >= 0.6 * len(a | b)
    _, body_a, args_a = old.split(":", 2)
    _, body_b, args_b = new.split(":", 2)
    return bool(body_a and body_a == body_b or args_a and args_a == args_b)


def parameters(args: ast.arguments) -> str:
    """A function's parameters as a call sees them: ``mod,target=,*,params=,**`` (``=``: has a
    default; ``*``: keyword-only follow, or ``*NAME`` takes extra positionals; ``**``: takes
    any keyword), ``self``/``cls`` left out."""
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [a.arg + ("=" if d is not None else "") for a, d in zip(positional, defaults)
           if a.arg not in ("self", "cls")]
    if args.vararg or args.kwonlyargs:
        out.append("*" + (args.vararg.arg if args.vararg else ""))
    out += [a.arg + ("=" if d is not None else "") for a, d in zip(args.kwonlyargs,
                                                                    args.kw_defaults)]
    if args.kwarg:
        out.append("**")
    return ",".join(out)


def _str_pieces(node: ast.AST | None) -> list[str | None]:
    """A message expression as literal pieces and None for what is formatted in."""
    if node is None:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out: list[str | None] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            else:
                out.append(None)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _str_pieces(node.left) + _str_pieces(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(
            node.left, ast.Constant) and isinstance(node.left.value, str):
        return _percent_holes(node.left.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "format" and isinstance(node.func.value, ast.Constant) and \
            isinstance(node.func.value.value, str):
        return _format_holes(node.func.value.value, True)
    return [None]


def _percent_holes(text: str) -> list[str | None]:
    out: list[str | None] = []
    for i, part in enumerate(re.split(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifgxX]", text)):
        if i:
            out.append(None)
        out.append(part.replace("%%", "%"))
    return out


def _format_holes(text: str, formatted: bool) -> list[str | None]:
    if not formatted:
        return [text]
    out: list[str | None] = []
    for i, part in enumerate(re.split(r"\{[^{}]*\}", text)):
        if i:
            out.append(None)
        out.append(part.replace("{{", "{").replace("}}", "}"))
    return out


def _exc_name(node: ast.AST | None) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def parse_python(text: str, module: str, is_package: bool) -> PyFacts:
    facts = PyFacts()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return facts

    def top_level(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                facts.own[node.name] = _signature(node)
                if not node.name.startswith("_"):
                    if isinstance(node, ast.ClassDef):
                        for item in node.body:
                            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                                    not item.name.startswith("_") or item.name == "__init__"):
                                facts.params[f"{node.name}.{item.name}"] = parameters(item.args)
                    else:
                        facts.params[node.name] = parameters(node.args)
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and _exc_name(deco.func) == "deprecated" and \
                            len(deco.args) >= 2 and all(isinstance(a, ast.Constant) for a in deco.args[:2]):
                        facts.renamed.append((str(deco.args[0].value), str(deco.args[1].value)))
                if isinstance(node, ast.ClassDef):
                    attrs = []
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                            attrs.append(item.name)
                        elif isinstance(item, ast.Assign):
                            attrs += [t.id for t in item.targets if isinstance(t, ast.Name)]
                        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            attrs.append(item.target.id)
                    facts.members[node.name] = sorted({a for a in attrs if not a.startswith("_")})
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        facts.own.setdefault(t.id, "")
                        if t.id == "__all__" and isinstance(node.value, ast.List | ast.Tuple):
                            facts.all_names = [e.value for e in node.value.elts
                                               if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                facts.own.setdefault(node.target.id, "")
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(module, is_package, node.level, node.module) if node.level else \
                    (node.module or "")
                # ``from a import b`` loads a, and a.b where that is a module
                facts.loads += [src, *(f"{src}.{a.name}" for a in node.names if a.name != "*")]
                for alias in node.names:
                    if alias.name == "*":
                        facts.stars.append(src)
                    else:
                        facts.imports[alias.asname or alias.name] = (src, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    facts.loads.append(alias.name)
                    if alias.asname:
                        facts.imports[alias.asname] = (alias.name, None)
            elif isinstance(node, ast.If | ast.Try):
                top_level(node.body)
                for handler in getattr(node, "handlers", []):
                    top_level(handler.body)
                top_level(node.orelse)

    top_level(tree.body)

    def _convert_keys(node: ast.Dict) -> None:
        """A frontend's operator table: its string keys, where it has five or more."""
        if len(node.keys) >= 5:
            facts.converters += [k.value for k in node.keys if isinstance(k, ast.Constant)
                                 and isinstance(k.value, str)]

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.func: list[str] = []
            self.conds: list[str] = []

        def visit_ClassDef(self, node: ast.ClassDef) -> None:
            self.func.append(node.name)
            self.generic_visit(node)
            self.func.pop()

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            if "convert_map" in node.name:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Dict):
                        _convert_keys(sub)
            self.func.append(node.name)
            saved, self.conds = self.conds, []
            self.generic_visit(node)
            self.conds = saved
            self.func.pop()

        visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

        def visit_Assign(self, node: ast.Assign) -> None:
            # ``_convert_map = {...}`` (Relay's TensorFlow, Keras), ``self.convert_map = {...}``
            # (TFLite): the table assigned rather than returned by a ``*convert_map*`` function
            named = [t.id if isinstance(t, ast.Name) else t.attr for t in node.targets
                     if isinstance(t, ast.Name | ast.Attribute)]
            if isinstance(node.value, ast.Dict) and any("convert_map" in n for n in named) and \
                    not (self.func and "convert_map" in self.func[-1]):
                _convert_keys(node.value)
            self.generic_visit(node)

        def visit_If(self, node: ast.If) -> None:
            self.visit(node.test)
            cond = _unparse(node.test)
            self.conds.append(cond)
            for n in node.body:
                self.visit(n)
            self.conds[-1] = f"not ({cond})"
            for n in node.orelse:
                self.visit(n)
            self.conds.pop()

        def visit_Raise(self, node: ast.Raise) -> None:
            exc = node.exc
            kind = _exc_name(exc)
            if kind and isinstance(exc, ast.Call):
                msg = exc.args[0] if exc.args else None
                pieces = _str_pieces(msg) if msg is not None else []
                self.add(f"raise {kind}", node.lineno, self.conds[-1] if self.conds else "", pieces)

        def visit_Assert(self, node: ast.Assert) -> None:
            self.add("assert", node.lineno, _unparse(node.test), _str_pieces(node.msg))

        def visit_Call(self, node: ast.Call) -> None:
            name = _exc_name(node.func)
            if name in ("register_func", "register_global_func") and node.args and isinstance(
                    node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                facts.globals.append(node.args[0].value)
            if name == "warn" and node.args and self.func:
                pieces = _str_pieces(node.args[0])
                text = "".join(p for p in pieces if p)
                if "deprecat" in text.lower():
                    facts.deprecated.append((".".join(self.func), _join(pieces)))
            self.generic_visit(node)

        def add(self, kind: str, line: int, cond: str, pieces: list[str | None]) -> None:
            facts.sites.append((kind, ".".join(self.func), line, cond[:300], _join(pieces)))

    Visitor().visit(tree)
    facts.undefined = undefined_names(tree)
    facts.tvm_reads = tvm_attribute_reads(tree)
    facts.unset = unset_reads(tree)
    return facts



class _Scoped(ast.NodeVisitor):
    """A visitor that knows the function or class it is in (``func``, outermost first)."""

    def __init__(self) -> None:
        self.func: list[str] = []

    def _scope(self, node: ast.AST, name: str) -> None:
        self.func.append(name)
        self.generic_visit(node)
        self.func.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scope(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node, node.name)


def tvm_attribute_reads(tree: ast.Module) -> list[tuple[str, str]]:
    """The ``tvm.a.b`` attribute chains a file that does ``import tvm`` reads, longest form,
    with the function reading each first. Kept only where the chain's top-level name is in no
    version (``build`` filters): TVM's own ``AttributeError``, such as the Relay ONNX frontend's
    ``tvm.errors.OpAttributeRequired`` (the module is ``tvm.error``)."""
    if not any(isinstance(n, ast.Import) and any(a.name == "tvm" and not a.asname for a in n.names)
               for n in ast.walk(tree)):
        return []
    reads: dict[str, str] = {}

    class Chains(_Scoped):
        def visit_Attribute(self, node: ast.Attribute) -> None:
            parts, inner = [], node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "tvm" and isinstance(node.ctx, ast.Load):
                reads.setdefault(".".join(["tvm", *reversed(parts)]), ".".join(self.func))
                return  # the longest chain only
            self.generic_visit(node)

    Chains().visit(tree)
    return sorted(reads.items())


# Names every module has without binding them.
_MODULE_NAMES = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__",
                                       "__package__", "__loader__", "__builtins__", "__debug__",
                                       "__annotations__", "__dict__", "__class__"}


def undefined_names(tree: ast.Module) -> list[tuple[str, str]]:
    """Names a module reads that nothing in it binds, with the function that reads each first
    (pyflakes' undefined-name check, kept coarse so it never accuses a name wrongly: a name
    bound anywhere in the file counts as bound, and a file with ``import *`` or ``_init_api``
    says nothing).
    TVM's own bugs of this kind raise ``NameError: name 'X' is not defined`` in users' hands."""
    bound: set[str] = set()
    reads: dict[str, str] = {}
    star = False

    class Names(_Scoped):
        def visit_Name(self, node: ast.Name) -> None:
            if isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, ".".join(self.func))
            else:
                bound.add(node.id)

        def _scope(self, node: ast.AST, name: str) -> None:
            bound.add(name)
            super()._scope(node, name)

        def visit_arg(self, node: ast.arg) -> None:
            bound.add(node.arg)
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            bound.update(a.asname or a.name.split(".")[0] for a in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            nonlocal star
            for a in node.names:
                if a.name == "*":
                    star = True
                bound.add(a.asname or a.name)

        def visit_Call(self, node: ast.Call) -> None:
            nonlocal star
            if _exc_name(node.func) in ("_init_api", "init_ffi_api", "_init_api_prefix"):
                star = True  # FFI functions put into the module's namespace at import
            self.generic_visit(node)

        def generic_visit(self, node: ast.AST) -> None:
            # except E as NAME, global/nonlocal NAME, match captures, type parameters
            for attr in ("name", "rest"):
                value = getattr(node, attr, None)
                if isinstance(value, str) and not isinstance(node, ast.FunctionDef |
                                                                 ast.AsyncFunctionDef | ast.ClassDef):
                    bound.add(value)
            if isinstance(node, ast.Global | ast.Nonlocal):
                bound.update(node.names)
            super().generic_visit(node)

    Names().visit(tree)
    if star:
        return []
    return sorted((n, f) for n, f in reads.items() if n not in bound and n not in _MODULE_NAMES)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _names(node: ast.AST) -> tuple[list[str], set[str]]:
    """(names read, names bound) by one expression or simple statement, nested scopes (a
    lambda, a comprehension, a def) left out: what runs in the function's own scope."""
    reads: list[str] = []
    stores: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n is not node and isinstance(n, _SCOPES):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                stores.add(n.name)
            continue
        if isinstance(n, ast.Name):
            (reads.append if isinstance(n.ctx, ast.Load) else stores.add)(n.id)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            stores.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            stores.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            stores.add(n.rest)
        todo.extend(ast.iter_child_nodes(n))
    return reads, stores


def unset_reads(tree: ast.Module) -> list[tuple[str, str]]:
    """(local, function) for each local a function may read before any assignment to it has
    run: assigned only in some branches of an ``if``, in a loop's body, in a ``try``'s
    handler, and read after. What ``UnboundLocalError: cannot access local variable 'x'``
    (``local variable 'x' referenced before assignment`` before Python 3.11) is raised for."""
    out: list[tuple[str, str]] = []

    def function(fn: ast.FunctionDef | ast.AsyncFunctionDef, qual: str) -> None:
        local: set[str] = set()
        declared: set[str] = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Global | ast.Nonlocal):
                declared.update(n.names)
        for stmt in fn.body:
            local |= _bound_in(stmt)
        local -= declared
        args = fn.args
        start = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        start |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        found: list[str] = []

        def check(node: ast.AST, have: set[str]) -> set[str]:
            reads, stores = _names(node)
            found.extend(r for r in reads if r in local and r not in have and r not in found)
            return have | stores

        def flow(body: list[ast.stmt], have: set[str]) -> set[str] | None:
            """The locals surely bound after ``body``, or None when it never falls through."""
            for stmt in body:
                if isinstance(stmt, ast.If | ast.While):
                    have = check(stmt.test, have)
                    a = flow(stmt.body, set(have))
                    b = flow(stmt.orelse, set(have))
                    if isinstance(stmt, ast.While):
                        continue  # the body may not run
                    if a is None and b is None:
                        return None
                    have = a if b is None else b if a is None else a & b
                elif isinstance(stmt, ast.For | ast.AsyncFor):
                    have = check(stmt.iter, have)
                    flow(stmt.body, check(stmt.target, have))
                    have = flow(stmt.orelse, set(have)) or have
                elif isinstance(stmt, ast.With | ast.AsyncWith):
                    for item in stmt.items:
                        have = check(item, have)
                    got = flow(stmt.body, have)
                    if got is None:
                        return None
                    have = got
                elif isinstance(stmt, ast.Try):
                    tried = flow(stmt.body, set(have))
                    ends = [flow(stmt.orelse, tried) if tried is not None else None]
                    for h in stmt.handlers:
                        ends.append(flow(h.body, have | ({h.name} if h.name else set())))
                    alive = [e for e in ends if e is not None]
                    after = set.intersection(*alive) if alive else None
                    if stmt.finalbody:
                        flow(stmt.finalbody, set(have))
                    if after is None:
                        return None
                    have = after
                elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    for d in [*stmt.decorator_list]:
                        have = check(d, have)
                    have = have | {stmt.name}
                elif isinstance(stmt, ast.Delete):
                    have = have - {t.id for t in stmt.targets if isinstance(t, ast.Name)}
                elif isinstance(stmt, ast.Return | ast.Raise | ast.Break | ast.Continue):
                    check(stmt, have)
                    return None
                elif isinstance(stmt, ast.Match):
                    have = check(stmt.subject, have)
                    ends = [flow(c.body, check(c.pattern, set(have))) for c in stmt.cases]
                    alive = [e for e in ends if e is not None] + [have]
                    have = set.intersection(*alive)
                elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id in local and stmt.target.id not in have and \
                            stmt.target.id not in found:
                        found.append(stmt.target.id)
                    have = check(stmt, have)
                else:
                    have = check(stmt, have)
            return have

        flow(fn.body, start)
        out.extend((name, qual) for name in found)

    class Functions(_Scoped):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            function(node, ".".join([*self.func, node.name]))
            self._scope(node, node.name)

        visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    Functions().visit(tree)
    return out


def _bound_in(stmt: ast.stmt) -> set[str]:
    """Every name a statement binds in its function's own scope (any branch, any depth)."""
    bound: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
            if n is not stmt:
                continue
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return bound


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - an odd node: no condition rather than no index
        return ""


def _join(pieces: list[str | None]) -> str:
    """Pieces to the stored template: literals joined by WILD where a value goes; the first
    line only (a log shows a message's first line where the cause is)."""
    out: list[str] = []
    for p in pieces:
        if p is None:
            if not out or out[-1] != WILD:
                out.append(WILD)
        else:
            out.append(p)
    text = "".join(out)
    text = text.split("\n", 1)[0] if not text.startswith("\n") else text.lstrip("\n").split("\n", 1)[0]
    return text.replace("\t", " ")[:400]


# --- C++ sources --------------------------------------------------------------------------


_TOKEN = re.compile(r"""
 (?P<comment>//[^\n]*|/\*.*?\*/)
|(?P<raw>R"(?P<delim>[^(\s"]{0,16})\((?P<rawbody>.*?)\)(?P=delim)")
|(?P<str>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
|(?P<chr>'(?:\\.|[^'\\\n])*')
|(?P<pp>^[ \t]*\#(?:[^\n]*\\\n)*[^\n]*)
|(?P<word>[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*)
|(?P<shift><<)
|(?P<op>->|&&|\|\||==|!=|<=|>=|>>|\+\+|--|\+=|-=)
|(?P<punct>[{}()\[\];,=])
|(?P<num>\d[\w.']*)
|(?P<other>\S)
""", re.S | re.M | re.X)

_CHECK = re.compile(r"(?:TVM_FFI_)?I?CHECK(?:_(?P<op>EQ|NE|LT|LE|GT|GE|NOTNULL))?")
_OPS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}
_CONTROL = {"if", "for", "while", "switch", "catch", "return", "else", "do", "sizeof",
            "decltype", "alignof", "static_assert", "defined", "noexcept", "throw"}
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "0": ""}


def _unescape(lit: str) -> str:
    body = lit[lit.index('"') + 1:-1] if lit.endswith('"') else lit[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def _text(tokens: list[Token], src: str) -> str:
    """The source text the tokens span, whitespace collapsed (as the preprocessor's ``#``
    prints a macro argument)."""
    if not tokens:
        return ""
    return " ".join(src[tokens[0][3]:tokens[-1][4]].split())


Token = tuple[str, str, int, int, int]  # kind, text, line, start, end


@dataclass
class CppFacts:
    globals: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)  # object type keys ("ir.Call")
    sites: list[tuple] = field(default_factory=list)  # (kind, func, line, cond, template)
    llvm: list[int] = field(default_factory=list)  # LLVM major versions the code tests for
    declared: list[str] = field(default_factory=list)  # names a public header declares
    c_symbols: list[tuple[str, bool]] = field(default_factory=list)  # (TVM C function, exported)
    printed: list[str] = field(default_factory=list)  # names a source codegen's literals print


# TVM's C API (what ctypes looks up by name): a ``TVM*`` function marked for export
# (TVM_DLL: visibility default, dllexport on Windows), or defined ``extern "C"`` without the
# mark - present in a Linux build's symbols, absent from a Windows DLL's exports.
_C_SYMBOL = re.compile(r"""
  \bTVM(?:_FFI)?_DLL\s+(?:[\w:<>,*&]+\s+)*?[*&]*(?P<exported>TVM\w+)\s*\(
| \bextern\s+"C"\s+(?!TVM(?:_FFI)?_DLL)(?:[\w:<>,*&]+\s+)*?[*&]*(?P<plain>TVM\w+)\s*\(
""", re.X)


# A device source printer (codegen_cuda.cc, the CUDA half/fp8 helpers it prints, the OpenCL
# and Metal intrinsic rules): the names its string literals print into kernel source.
_PRINTER = re.compile(r"^src/.*/(?:codegen_(?P<cg>\w+)|intrin_rule_(?P<ir>\w+)|"
                      r"literal/(?P<lit>[a-z]+)_\w+)\.(?:cc|h)$")
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_PRINTED_NAME = re.compile(r"\b[A-Za-z_]\w{2,}\b")


def printer_target(path: str) -> str | None:
    """``cuda`` for src/target/source/codegen_cuda.cc (or literal/cuda_half_t.h), else None."""
    m = _PRINTER.match(path)
    target = (m.group("cg") or m.group("ir") or m.group("lit")) if m else None
    return target if target in PRINTER_TARGETS else None


PRINTER_TARGETS = ("cuda", "opencl", "metal", "webgpu", "c")  # TVM's source-printing targets


def printed_names(text: str) -> list[str]:
    return sorted({n for lit in _LITERAL.findall(text) for n in _PRINTED_NAME.findall(lit)})


def c_symbols(text: str) -> list[tuple[str, bool]]:
    return sorted({(m.group("exported") or m.group("plain"), bool(m.group("exported")))
                   for m in _C_SYMBOL.finditer(text)})


# What a public header declares that other code compiles against: exported functions, classes
# and structs it defines, type aliases and macros.
_DECLARED = re.compile(r"""
  \bTVM(?:_FFI)?_DLL\s+(?:[\w:<>,*&]+\s+)*?[*&]*(?P<func>\w+)\s*\(
| ^[ \t]*(?:template\s*<[^>\n]*>\s*)?(?:class|struct)\s+(?:TVM(?:_FFI)?_DLL\s+)?(?P<cls>\w+)
  \s*(?:final\s*)?[:{]
| ^[ \t]*\#[ \t]*define[ \t]+(?P<macro>\w+)
| ^[ \t]*using\s+(?P<alias>\w+)\s*=
""", re.M | re.X)


def declared_names(text: str) -> list[str]:
    """The names a header declares (``TVMSynchronize``, ``NDArray``, ``TVM_REGISTER_GLOBAL``),
    four characters or more, with an upper-case letter (not ``size``, ``data``)."""
    names = {m.group(m.lastgroup) for m in _DECLARED.finditer(text)}
    return sorted(n for n in names if len(n) >= 4 and not n.islower() and not n.startswith("_")
                  and not n.endswith(("_H_", "_H")))  # include guards


_LLVM_TEST = re.compile(r"\b(TVM_LLVM_VERSION|LLVM_VERSION_MAJOR)\s*(?:>=|<=|==|!=|<|>)\s*(\d+)")


def _tokens(text: str, macros: dict[str, Macro] | None = None, line: int = 0) -> list[Token]:
    """The tokens of C++ ``text`` (comments and preprocessor lines dropped); each ``#define``
    whose body raises is recorded in ``macros``. ``line`` fixes every token's line (a macro
    body expanded at its call)."""
    toks: list[Token] = []
    line_of = 1
    last = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("comment", "delim", "rawbody"):
            continue
        line_of += text.count("\n", last, m.start())
        last = m.start()
        if kind == "pp":
            if macros is not None:
                _define(m.group(0), line_of, macros)
            continue
        tok = m.group(0)
        if kind == "raw":
            kind, tok = "str", '"' + m.group("rawbody").replace("\\", "\\\\").replace('"', '\\"') + '"'
        toks.append((kind, tok, line or line_of, m.start(), m.end()))
    return toks


@dataclass
class Macro:
    """A ``#define`` whose body checks or raises (``TVM_CHECK_TYPE_CODE(CODE, T)``,
    ``CUDA_CALL(func)``): its checks print the condition as expanded where it is used."""

    name: str
    params: list[str] | None  # None: an object-like macro
    body: str
    sites: list[tuple] = field(default_factory=list)  # the body's sites, parameters as written


_DEFINE = re.compile(r"#\s*define\s+(?P<name>\w+)(?:\((?P<params>[^)]*)\))?(?P<body>.*)", re.S)
_RAISES = re.compile(r"\b(?:(?:TVM_FFI_)?I?CHECK(?:_[A-Z]+)?\s*\(|LOG\s*\(\s*FATAL|TVM_FFI_(?:VISIT_)?THROW|"
                     r"throw\b)")


def _define(directive: str, line: int, macros: dict[str, Macro]) -> None:
    """Record a ``#define`` that raises, with its body's sites under the function
    ``macro NAME(PARAMS)`` (the parameters, as in the log, are what its use site passed)."""
    m = _DEFINE.match(directive.strip())
    if m is None:
        return
    body = " ".join(m.group("body").replace("\\\n", " ").split())
    name = m.group("name")
    if not _RAISES.search(body) or _CHECK.fullmatch(name):
        return
    params = None
    if m.group("params") is not None:
        params = [p.strip() for p in m.group("params").split(",") if p.strip()]
    macro = Macro(name, params, body)
    # A parameter the body stringifies (#API) is a formatted part of the message.
    shown = re.sub(r"(?<!#)#\s*(\w+)", lambda p: '"\x1f"' if p.group(1) in (params or ()) else
                   p.group(0), body)
    toks = _tokens(shown, line=line)
    signature = f"macro {name}({', '.join(params)})" if params is not None else f"macro {name}"
    raises = False
    for j in range(len(toks)):
        site = _site(toks, j, [("func", signature, "")], shown)
        raises |= site is not None
        # TVM_CHECK_TYPE_CODE's own CODE == T says nothing until it is expanded at a use
        if site is not None and not _machinery(site[3], site[4], params or []):
            macro.sites.append(site)
    if raises:
        macros[name] = macro


def _machinery(condition: str, template: str, params: list[str]) -> bool:
    """Is a site in a macro's body the check machinery itself (DCHECK_EQ(x, y),
    TVM_FFI_ICHECK_BINARY_OP), which checks only what it is given and prints "Check failed"
    on its own, rather than a check of something (CUDA_CALL's ``e == cudaSuccess``)?"""
    words = set(re.findall(r"[A-Za-z_]\w*", condition))
    return "##" in condition or "Check failed" in template or bool(condition) and \
        words <= set(params)


def _expand(macro: Macro, toks: list[Token], i: int, scopes: list[tuple[str, str, str]],
            src: str) -> list[tuple]:
    """The sites of ``macro``'s body at its use ``toks[i]`` (``NAME(args)``), arguments
    substituted, in the function that uses it: the condition as the log prints it."""
    close = _matching([t[1] for t in toks[i + 1:min(len(toks), i + 400)]], 0) + i + 1
    args = [_text(a, src) for a in _split_args(toks[i + 2:close])]
    params = macro.params or []
    if len(args) != len(params):
        return []
    values = dict(zip(params, args))
    # #P becomes the argument's text as a literal, P the argument, A ## B joins them.
    body = re.sub(r"(?<!#)#\s*(\w+)", lambda p: '"' + values[p.group(1)].replace('"', '\\"') + '"'
                  if p.group(1) in values else p.group(0), macro.body)
    body = re.sub(r"\b\w+\b", lambda w: values.get(w.group(0), w.group(0)), body)
    body = re.sub(r"\s*##\s*", "", body)
    line = toks[i][2]
    expanded = _tokens(body, line=line)
    out = []
    for j in range(len(expanded)):
        site = _site(expanded, j, scopes, body)
        if site is not None:
            out.append(site)
    return out


def parse_cpp(text: str) -> CppFacts:
    """Registrations and error sites of one C++ file, with the function each sits in.

    A single pass over tokens keeps a scope stack: ``{`` opens a namespace, class, function,
    lambda or block, decided by the tokens since the last ``;``/``{``/``}``."""
    facts = CppFacts()
    macros: dict[str, Macro] = {}
    toks = _tokens(text, macros)
    for macro in macros.values():
        facts.sites += macro.sites
    scopes: list[tuple[str, str, str]] = []  # (kind, name, condition)
    head_start = 0
    i, n = 0, len(toks)
    in_global_def = -1  # the token index of a GlobalDef() chain's start, while in it
    depth_at_def = 0
    paren = 0
    while i < n:
        kind, tok, line = toks[i][:3]
        if kind == "punct":
            if tok in "([":
                paren += 1
            elif tok in ")]":
                paren = max(0, paren - 1)
            elif tok == "{":
                scopes.append(_classify_scope(toks[head_start:i], scopes, text))
                head_start = i + 1
            elif tok == "}":
                if scopes:
                    scopes.pop()
                head_start = i + 1
            elif tok == ";" and paren == 0:
                head_start = i + 1
                if in_global_def >= 0 and len(scopes) <= depth_at_def:
                    in_global_def = -1
        elif kind == "word":
            if tok in ("TVM_REGISTER_GLOBAL", "TVM_FFI_REGISTER_GLOBAL", "TVM_REGISTER_API") and \
                    i + 2 < n and \
                    toks[i + 2][0] == "str":
                facts.globals.append(_unescape(toks[i + 2][1]))
            elif tok.endswith("GlobalDef") and i + 2 < n and toks[i + 1][1] == "(":
                in_global_def, depth_at_def = i, len(scopes)
            elif in_global_def >= 0 and tok in ("def", "def_packed", "def_method") and i + 2 < n \
                    and toks[i - 1][1] == "." and toks[i + 1][1] == "(" and toks[i + 2][0] == "str" \
                    and len(scopes) == depth_at_def:
                facts.globals.append(_unescape(toks[i + 2][1]))
            site = _site(toks, i, scopes, text)
            if site is not None:
                facts.sites.append(site)
            elif tok in macros and macros[tok].params is not None and i + 1 < n and \
                    toks[i + 1][1] == "(":
                facts.sites += _expand(macros[tok], toks, i, scopes, text)
        i += 1
    _schedule_errors(toks, facts)
    facts.types = sorted(set(_TYPE_KEY.findall(text)))
    # TVM_LLVM_VERSION is major * 10 + minor (170: LLVM 17.0).
    facts.llvm = sorted({int(n) // 10 if macro == "TVM_LLVM_VERSION" else int(n)
                         for macro, n in _LLVM_TEST.findall(text)})
    return facts


_TYPE_KEY = re.compile(r'(?:_type_key\s*=\s*|TVM_FFI_DECLARE_OBJECT_INFO(?:_FINAL)?\(\s*)"([\w.]+)"')
_CMAKE_IF = re.compile(r"^\s*(if|elseif|else|endif)\s*\((.*?)\)?\s*$", re.I)
_CMAKE_SRC = re.compile(r"\b((?:src|3rdparty)/[\w/.*+-]+)")


def parse_cmake(text: str) -> list[tuple[str, str]]:
    """(option, source directory) for each source path a CMake file adds under ``if(USE_X)``:
    the build option without which that directory is not compiled."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        m = _CMAKE_IF.match(line)
        if m:
            word = m.group(1).lower()
            option = re.search(r"\b(USE_\w+)", m.group(2) or "")
            if word == "if":
                stack.append(option.group(1) if option else "")
            elif word == "endif" and stack:
                stack.pop()
            elif word == "elseif" and stack:
                stack[-1] = option.group(1) if option else ""
            elif word == "else" and stack:
                stack[-1] = ""
            continue
        option = next((o for o in stack if o), "")
        if option:
            for path in _CMAKE_SRC.findall(line):
                directory = path.split("*", 1)[0].rstrip("/")
                if "." in directory.rsplit("/", 1)[-1]:
                    directory = directory.rsplit("/", 1)[0]
                out.append((option, directory))
    return out


def _classify_scope(head: list[Token], scopes: list[tuple[str, str, str]], src: str
                    ) -> tuple[str, str, str]:
    """What a ``{`` opens, from the tokens since the previous ``;``, ``{`` or ``}``."""
    words = [t[1] for t in head if t[0] == "word"]
    toks = [t[1] for t in head]
    if words[:1] == ["namespace"] or words[:2] == ["extern", '"C"']:
        return ("ns", "", "")
    # The first top-level "(" (its name is the function's) and what comes before it; not one
    # in a return type's template arguments (std::function<void()> EnterConstraint(...)).
    depth, angle, at = 0, 0, -1
    for j, t in enumerate(toks):
        if t == "(" and depth == 0 and angle == 0:
            at = j
            break
        if t == "[":
            depth += 1
        elif t == "]":
            depth -= 1
        elif t == "<" and j and head[j - 1][0] == "word":
            angle += 1
        elif t in (">", ">>") and angle:
            angle = max(0, angle - len(t))
    before = toks[:at] if at >= 0 else toks
    for j, t in enumerate(toks):  # a lambda: [captures](args) {
        if t == "[" and (j == 0 or toks[j - 1] in ("(", ",", "=", "return", "{", "?", ":")):
            return ("lambda", "", "")
    if "=" in before or "return" in before or toks.count("(") > toks.count(")"):
        return ("block", "", "")  # an initializer list, a braced value, a macro's argument
    for kw in ("class", "struct", "union", "enum"):
        if kw in before:
            after = words[words.index(kw) + 1:]
            name = next((w for w in after if not w.isupper() and w not in ("final", "public",
                                                                           "private", "class")), "")
            return ("class", name, "")
    if at > 0:
        k = at - 1
        if toks[k] == ">":  # a specialisation: TryConstFold<tir::Div>(...)
            nest = 0
            while k >= 0:
                nest += toks[k] == ">"
                nest -= toks[k] == "<"
                if nest == 0:
                    break
                k -= 1
            k -= 1
        name = toks[k] if k >= 0 else ""
        if name in ("if", "while"):
            close = _matching(toks, at)
            return ("block", "", _text(head[at + 1:close], src))
        if name in _CONTROL or not re.match(r"[A-Za-z_~]", name):
            return ("block", "", "")
        owner = next((s[1] for s in reversed(scopes) if s[0] == "class"), "")
        short = name.rsplit("::", 1)[-1]
        qual = name if "::" in name or not owner else f"{owner}::{short}"
        return ("func", qual, "")
    return ("block", "", "")


def _matching(toks: list[str], at: int) -> int:
    depth = 0
    for j in range(at, len(toks)):
        if toks[j] in "([":
            depth += 1
        elif toks[j] in ")]":
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def _function(scopes: list[tuple[str, str, str]]) -> str:
    return next((s[1] for s in reversed(scopes) if s[0] == "func"), "")


def _condition(scopes: list[tuple[str, str, str]], toks: list[Token], i: int, src: str) -> str:
    """The condition under which a statement at token ``i`` runs: ``if (c) STATEMENT`` on
    the statement itself, else the innermost enclosing ``if`` block's."""
    j = i - 1
    if j > 0 and toks[j][1] == ")":
        depth = 0
        while j >= 0:
            if toks[j][1] == ")":
                depth += 1
            elif toks[j][1] == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if j > 0 and toks[j - 1][1] in ("if", "while"):
            return _text(toks[j + 1:i - 1], src)
    for s in reversed(scopes):
        if s[0] == "func":
            break
        if s[2]:
            return s[2]
    return ""


def _site(toks: list[Token], i: int, scopes: list[tuple[str, str, str]], src: str
          ) -> tuple | None:
    kind, tok, line = toks[i][:3]
    n = len(toks)
    if i + 1 >= n:
        return None
    check = _CHECK.fullmatch(tok)
    if check and toks[i + 1][1] == "(":
        close = _matching([t[1] for t in toks[i + 1:min(n, i + 400)]], 0) + i + 1
        args = _split_args(toks[i + 2:close])
        if not args:
            return None
        op = check.group("op")
        if op and op != "NOTNULL" and len(args) >= 2:
            cond = f"{_text(args[0], src)} {_OPS[op]} {_text(args[1], src)}"
        else:
            cond = _text(args[0], src)
        return ("check", _function(scopes), line, cond[:300], _stream(toks, close + 1))
    if tok == "LOG" and i + 3 < n and toks[i + 1][1] == "(" and toks[i + 2][1] == "FATAL":
        return ("fatal", _function(scopes), line, _condition(scopes, toks, i, src),
                _stream(toks, i + 4))
    if tok == "TVM_FFI_THROW" and toks[i + 1][1] == "(" and i + 3 < n:
        return (f"throw {toks[i + 2][1]}", _function(scopes), line,
                _condition(scopes, toks, i, src), _stream(toks, i + 4))
    if tok == "TVM_FFI_VISIT_THROW" and toks[i + 1][1] == "(" and i + 3 < n:
        # TVM_FFI_VISIT_THROW(Kind, node) << ...: from v0.25 what Relax's struct-info checks
        # throw (before, ctx->ReportFatal(Diagnostic::Error(call) << ...))
        close = _matching([t[1] for t in toks[i + 1:min(n, i + 200)]], 0) + i + 1
        return (f"throw {toks[i + 2][1]}", _function(scopes), line,
                _condition(scopes, toks, i, src), _stream(toks, close + 1))
    if tok.endswith("Diagnostic::Error") and toks[i + 1][1] == "(":
        close = _matching([t[1] for t in toks[i + 1:min(n, i + 200)]], 0) + i + 1
        return ("diagnostic", _function(scopes), line, _condition(scopes, toks, i, src),
                _stream(toks, close + 1))
    if tok == "throw" and i + 2 < n and toks[i + 1][0] == "word" and toks[i + 2][1] == "(":
        close = _matching([t[1] for t in toks[i + 2:min(n, i + 400)]], 0) + i + 2
        args = _split_args(toks[i + 3:close])
        exc = toks[i + 1][1].rsplit("::", 1)[-1]
        if exc.endswith("Error") and args:
            # ffi::Error(kind, message, backtrace): the message is the second argument
            msg = args[1] if exc == "Error" and len(args) >= 3 else args[0]
            return (f"throw {exc}", _function(scopes), line, _condition(scopes, toks, i, src),
                    _join(_expr_pieces(msg)))
    return None


def _split_args(toks: list[Token]) -> list[list[Token]]:
    args: list[list[Token]] = [[]]
    depth = 0
    for tok in toks:
        t = tok[1]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if t == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(tok)
    return [a for a in args if a]


def _expr_pieces(expr: list[Token]) -> list[str | None]:
    """``"a" + x + "b"`` (or one literal) as pieces; anything else is a hole."""
    pieces: list[str | None] = []
    depth = 0
    current: list[tuple[str, str]] = []
    for k, t in [*(tok[:2] for tok in expr), ("punct", "+")]:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if t == "+" and depth == 0:
            if current and all(k2 == "str" for k2, _ in current):
                pieces.append("".join(_unescape(t2) for _, t2 in current))
            elif current and len(current) >= 4 and current[0][1].endswith("string") and \
                    current[2][0] == "str":
                pieces.append(_unescape(current[2][1]))
            else:
                pieces.append(None)
            current = []
        else:
            current.append((k, t))
    return pieces


def _stream(toks: list[Token], start: int) -> str:
    """The message a ``<<`` chain streams, from token ``start`` to the end of the statement."""
    pieces: list[str | None] = []
    depth = 0
    current: list[tuple[str, str]] = []
    for j in range(start, min(len(toks), start + 600)):
        k, t = toks[j][:2]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth < 0:
                break
        if depth == 0 and (t == ";" or t == "<<"):
            if current:
                if all(k2 in ("str", "chr") for k2, _ in current):
                    pieces.append("".join(_unescape(t2) for _, t2 in current))
                elif current in ([("word", "std::endl")], [("word", "endl")]):
                    pieces.append("\n")
                else:
                    pieces.append(None)
            current = []
            if t == ";":
                break
            continue
        current.append((k, t))
    return _join(pieces)


def _schedule_errors(toks: list[Token], facts: CppFacts) -> None:
    """ScheduleError subclasses: the messages their FastErrorString/DetailRenderTemplate
    return (``{0}``-style holes for the IR they name), under the class's name."""
    owner = ""
    for i, (kind, tok, *_rest) in enumerate(toks):
        if kind == "word" and tok in ("class", "struct") and i + 1 < len(toks):
            owner = toks[i + 1][1]
        if kind == "word" and tok in ("FastErrorString", "DetailRenderTemplate") and \
                i + 1 < len(toks) and toks[i + 1][1] == "(":
            j = i
            while j < len(toks) and toks[j][1] != "{":
                j += 1
            depth, k = 0, j
            body_lines: list[list[str | None]] = []
            current: list[str | None] = []
            while k < len(toks):
                t = toks[k][1]
                if t == "{":
                    depth += 1
                elif t == "}":
                    depth -= 1
                    if depth == 0:
                        break
                if toks[k][0] == "str":
                    lit = _unescape(t)
                    if current and current[-1] is not None:
                        current[-1] += lit
                    else:
                        current.append(lit)
                elif t == ";":
                    if current:
                        body_lines.append(current)
                    current = []
                elif t == "<<" and current and current[-1] is not None and k + 1 < len(toks) and \
                        toks[k + 1][0] != "str":
                    current.append(None)
                k += 1
            if not body_lines:
                continue
            pieces: list[str | None] = []
            for b in body_lines:
                pieces.extend(b)
            text = _join(pieces)
            text = re.sub(r"\{\d+\}", WILD, text)
            text = re.sub(r"^ScheduleError: ", "", text)
            facts.sites.append((f"schedule {tok}", owner, toks[i][2], "", text))


# --- one blob -----------------------------------------------------------------------------


def parse_blob(args: tuple[str, str, bytes, str]) -> tuple[str, str, object]:
    """Parse one blob; ``python`` is the folder holding the project's package."""
    path, sha, data, python = args
    text = data.decode("utf-8", errors="replace")
    if path in REQUIREMENT_FILES:
        return path, sha, parse_requirements(path, text)
    if path.endswith(".cmake") or path.endswith("CMakeLists.txt"):
        return path, sha, parse_cmake(text)
    if path.endswith(".py"):
        module = python_module(path, python)[0] or "?"
        return path, sha, parse_python(text, module, path.endswith("__init__.py"))
    facts = parse_cpp(text)
    facts.c_symbols = c_symbols(text)
    if printer_target(path):
        facts.printed = printed_names(text)
    if path.startswith(("include/", f"{SUBMODULE}/include/")) and path.endswith(".h"):
        facts.declared = declared_names(text)
    return path, sha, facts


# --- the Python packages a release asks for -------------------------------------------------

# Where a release names its Python dependencies: setup.py's install_requires (v0.2 on),
# gen_requirements.py's pieces and constraints (v0.8 on), pyproject.toml (the newest).
REQUIREMENT_FILES = ("python/setup.py", "python/gen_requirements.py", "pyproject.toml",
                     "python/pyproject.toml")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;#]*)")


@dataclass
class Requirements:
    """The packages one file asks for: (package, version spec or "", piece: core or extra)."""

    asked: list[tuple[str, str, str]] = field(default_factory=list)


def _requirement(text: str, piece: str) -> tuple[str, str, str] | None:
    m = _REQUIREMENT.match(text)
    if not m:
        return None
    return m.group(1).lower().replace("_", "-"), "".join(m.group(2).split()), piece


def parse_requirements(path: str, text: str) -> Requirements:
    """What ``path`` (one of REQUIREMENT_FILES) asks for, read without running it."""
    out = Requirements()
    if path.endswith(".toml"):
        import tomllib

        try:
            project = tomllib.loads(text).get("project", {})
        except tomllib.TOMLDecodeError:
            return out
        for req in project.get("dependencies", []):
            out.asked.append(_requirement(req, "core"))
        for piece, reqs in project.get("optional-dependencies", {}).items():
            out.asked += [_requirement(r, piece) for r in reqs]
        out.asked = [a for a in out.asked if a]
        return out
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return out
    constraints: dict[str, str] = {}
    pieces: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires" and \
                isinstance(node.value, ast.List):
            out.asked += [_requirement(e.value, "core") for e in node.value.elts
                          if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if not isinstance(target, ast.Name) or not isinstance(node.value, ast.List):
            continue
        if target.id == "CONSTRAINTS":  # [("xgboost", ">=1.1.0"), ("numpy", None), ...]
            for e in node.value.elts:
                if isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[0], ast.Constant):
                    spec = e.elts[1].value if isinstance(e.elts[1], ast.Constant) else None
                    constraints[str(e.elts[0].value)] = spec or ""
        elif target.id == "REQUIREMENTS_BY_PIECE":  # [("core", ("...", ["numpy", ...])), ...]
            for e in node.value.elts:
                if isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[0], ast.Constant):
                    for sub in ast.walk(e.elts[1]):  # the list, not the description
                        if isinstance(sub, ast.List):
                            pieces.update((x.value, str(e.elts[0].value)) for x in sub.elts
                                          if isinstance(x, ast.Constant) and x.value not in pieces)
    for package, piece in pieces.items():
        if piece != "dev":
            out.asked.append(_requirement(package + constraints.get(package, ""), piece))
    out.asked = [a for a in out.asked if a]
    return out


# --- versions ------------------------------------------------------------------------------


def version_files(git: Git, ffi: Git | None, rev: str, project: Project
                  ) -> list[tuple[str, str, Git]]:
    """(path, sha, repository) of the sources indexed at ``rev``: the project's Python
    package, src and include; for TVM also its CMake files and requirements, and the vendored
    tvm-ffi's python/tvm_ffi, src and include."""
    out = []
    submodule = None
    tvm = project.own
    for kind, sha, path in git.tree(rev):
        if kind == "commit" and path == SUBMODULE:
            submodule = sha
        if kind != "blob":
            continue
        if path.startswith(project.package_dir) and path.endswith(".py") or \
                path.startswith(project.native) and path.endswith(CPP_EXT) or \
                tvm and (path == "CMakeLists.txt" or path.startswith("cmake/") and
                         path.endswith(".cmake") or path in REQUIREMENT_FILES):
            out.append((path, sha, git))
    if tvm and submodule and ffi is not None and ffi.has(submodule):
        for kind, sha, path in ffi.tree(submodule):
            if kind == "blob" and (path.startswith("python/tvm_ffi/") and path.endswith(".py") or
                                   path.startswith(("src/", "include/")) and path.endswith(CPP_EXT)):
                out.append((f"{SUBMODULE}/{path}", sha, ffi))
    return out


def python_module(path: str, python: str) -> tuple[str | None, bool]:
    """(module, whether a package) of a Python file: ``python`` holds the project's package;
    a vendored tvm-ffi's files have theirs under the submodule's python/."""
    root = f"{SUBMODULE}/python/" if path.startswith(SUBMODULE) else python
    return module_of(path, root) if path.startswith(root) else None, path.endswith("__init__.py")


def exports(modules: dict[str, PyFacts], packages: tuple[str, ...]
            ) -> dict[str, dict[str, tuple[str, str]]]:
    """Per module, every public name it offers and the (module, name) that defines it (a name
    imported from outside ``packages`` is not offered)."""
    done: dict[str, dict[str, tuple[str, str]]] = {}

    def origin(mod: str, name: str, seen: set[tuple[str, str]]) -> tuple[str, str]:
        facts = modules.get(mod)
        if facts is None or (mod, name) in seen:
            return (mod, name)
        seen.add((mod, name))
        if name in facts.own:
            return (mod, name)
        if name in facts.imports:
            src, real = facts.imports[name]
            if real is None:
                return (src, "")
            if f"{src}.{real}" in modules:
                return (f"{src}.{real}", "")
            return origin(src, real, seen)
        return (mod, name)

    def resolve(mod: str, stack: set[str]) -> dict[str, tuple[str, str]]:
        if mod in done:
            return done[mod]
        facts = modules[mod]
        names: dict[str, tuple[str, str]] = {}
        stack.add(mod)
        for star in facts.stars:
            if star in modules and star not in stack:
                sub = resolve(star, stack)
                allowed = modules[star].all_names
                for k, v in sub.items():
                    if allowed is None or k in allowed:
                        names.setdefault(k, v)
        stack.discard(mod)
        for name in facts.own:
            names[name] = (mod, name)
        for alias, (src, _real) in facts.imports.items():
            if src.split(".")[0] in packages:
                names[alias] = origin(mod, alias, set())
        done[mod] = {k: v for k, v in names.items() if not k.startswith("_")}
        return done[mod]

    for mod in modules:
        resolve(mod, set())
    return done


def loaded_by(every: dict[str, PyFacts], root: str) -> set[str]:
    """The modules ``import ROOT`` loads: its package's top-level imports, theirs, and the
    packages above each (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    loaded: set[str] = set()
    todo = [root]
    while todo:
        mod = todo.pop()
        if mod in loaded or mod not in every:
            continue
        loaded.add(mod)
        parts = mod.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [m for m in every[mod].loads if m == root or m.startswith(root + ".")]
        if "__getattr__" in every[mod].own:  # PEP 562: its submodules load on first access
            todo += [m for m in every if m.startswith(mod + ".") and "." not in m[len(mod) + 1:]]
    return loaded


def collect(git: Git, ffi: Git | None, versions: list[tuple[str, str]], jobs: int,
            project: Project) -> dict:
    parsed: dict[tuple[str, str], object] = {}
    per_version: list[list[tuple[str, str]]] = []
    started = time.time()
    for label, rev in versions:
        files = version_files(git, ffi, rev, project)
        per_version.append([(p, s) for p, s, _ in files])
        todo_by_repo: dict[int, list[tuple[str, str]]] = defaultdict(list)
        repos = {}
        for path, sha, repo in files:
            if (path, sha) not in parsed:
                todo_by_repo[id(repo)].append((path, sha))
                repos[id(repo)] = repo
        todo = []
        for key, items in todo_by_repo.items():
            data = repos[key].blobs(sorted({s for _, s in items}))
            todo += [(p, s, data.get(s, b""), project.python) for p, s in items]
        if jobs > 1:
            with multiprocessing.Pool(jobs) as pool:
                results = pool.map(parse_blob, todo, chunksize=16)
        else:
            results = [parse_blob(t) for t in todo]
        for path, sha, facts in results:
            parsed[(path, sha)] = facts
        print(f"  {label}: {len(files)} files, {len(todo)} new, {time.time() - started:.0f} s",
              file=sys.stderr, flush=True)
    return {"parsed": parsed, "per_version": per_version}


def build(git_dir: str, ffi_dir: str | None, since: str, jobs: int, project: Project
          ) -> tuple[str, str, dict]:
    git = Git(git_dir)
    ffi = Git(ffi_dir) if ffi_dir else None
    versions = release_versions(git, since, project.release, project.snapshots)
    if not versions:
        raise SystemExit(f"no release tags from {since} on and no main in {git_dir}")
    got = collect(git, ffi, versions, jobs, project)
    parsed, per_version = got["parsed"], got["per_version"]
    count = len(versions)
    masks: dict[tuple[str, str], int] = defaultdict(int)  # (kind, name) -> versions bitmask
    sites: dict[tuple, list] = {}  # key -> [mask, {line: mask}]
    defs: dict[str, dict[int, tuple[str, str]]] = defaultdict(dict)  # defpath -> v -> (sig, module)
    aliases: list[dict[str, tuple[str, str]]] = []  # per version: public path -> origin
    notes: dict[tuple[str, str, str], int] = defaultdict(int)  # deprecations and shims
    extra: dict[tuple[str, str], str] = {}  # (kind, name) -> where: a global's file, an alias' module
    signatures: dict[tuple[str, str], int] = defaultdict(int)  # (function, parameters) -> versions
    reads: dict[str, int] = defaultdict(int)  # FILE:tvm.a.b a TVM file reads -> versions
    for v, files in enumerate(per_version):
        bit = 1 << v
        modules: dict[str, PyFacts] = {}
        every: dict[str, PyFacts] = {}  # private modules too: what ``import tvm`` runs
        for path, sha in files:
            facts = parsed[(path, sha)]
            if isinstance(facts, list):  # CMake: which option compiles which directory
                for option, directory in facts:
                    masks[("O", f"{directory}\0{option}")] |= bit
                continue
            if isinstance(facts, Requirements):  # ``Q``: a package and the version asked
                for package, spec, piece in facts.asked:
                    masks[("Q", f"{package}{spec}")] |= bit
                    extra[("Q", f"{package}{spec}")] = piece
                continue
            if isinstance(facts, PyFacts):
                mod, _pkg = python_module(path, project.python)
                if mod is not None:
                    modules[mod] = facts
                if path.startswith(project.package_dir):
                    every[path[len(project.python):-3].removesuffix("/__init__")
                          .replace("/", ".")] = facts
                for name, func in facts.unset:
                    masks[("Y", f"{path}:{func}:{name}")] |= bit
                for key in facts.converters:
                    masks[("K", f"{mod}:{key}")] |= bit
                for name, func in facts.undefined:
                    masks[("U", f"{path}:{name}")] |= bit
                    extra[("U", f"{path}:{name}")] = func
                for chain, func in facts.tvm_reads if project.own else ():
                    reads[f"{path}:{chain}"] |= bit
                    extra[("X", f"{path}:{chain}")] = func
                if mod is not None:
                    for name, params in facts.params.items():
                        signatures[(f"{mod}.{name}", params)] |= bit
            else:
                masks[("P", path)] |= bit
                for t in facts.types:  # EXTRA: the file declaring it, in the newest version
                    masks[("T", t)] |= bit
                    extra[("T", t)] = path
                if path.startswith("src/target/llvm/"):
                    for major in facts.llvm:
                        masks[("L", str(major))] |= bit
                for name in facts.declared:
                    masks[("H", name)] |= bit
                    extra[("H", name)] = path
                target = printer_target(path)
                for name in facts.printed:  # ``I``: TARGET:NAME its printer writes
                    masks[("I", f"{target}:{name}")] |= bit
                    extra[("I", f"{target}:{name}")] = path
                for name, exported in facts.c_symbols:
                    masks[("E" if exported else "W", name)] |= bit
                    extra[("E" if exported else "W", name)] = path
            for g in facts.globals:
                masks[("F", g)] |= bit
                extra[("F", g)] = path
            for kind, func, line, cond, template in facts.sites:
                if not template.strip(WILD + " ") and not cond:
                    continue
                key = (kind, path, func, cond, template)
                entry = sites.setdefault(key, [0, defaultdict(int)])
                entry[0] |= bit
                entry[1][line] |= bit
        public = exports(modules, (project.package, "tvm_ffi"))
        # ``B``: the modules ``import tvm`` loads (so ``tvm.a.b`` is there without its import)
        for mod in loaded_by(every, project.package):
            if mod in modules:
                masks[("B", mod)] |= bit
        version_aliases: dict[str, tuple[str, str]] = {}
        for mod, facts in modules.items():
            masks[("M", mod)] |= bit
            for name, (omod, oname) in public[mod].items():
                path = f"{mod}.{name}"
                if oname == "" and omod in modules:
                    if path not in modules:  # a module offered under another name (tvm.nd)
                        masks[("A", path)] |= bit
                        extra[("A", path)] = omod
                    continue
                masks[("N", path)] |= bit
                version_aliases[path] = (omod, oname)
            for name, sig in facts.own.items():
                if not name.startswith("_"):
                    defs[f"{mod}.{name}"][v] = (sig, mod)
            for cls, attrs in facts.members.items():
                if cls.startswith("_"):
                    continue
                for a in attrs:
                    masks[("C", f"{mod}.{cls}.{a}")] |= bit
            for name, message in facts.deprecated:
                notes[("D", f"{mod}.{name}", message)] |= bit
            for old, new in facts.renamed:
                notes[("S", f"{mod}: {old}", new)] |= bit
        aliases.append(version_aliases)
    # ``X``: a tvm.* name TVM's own Python reads whose top-level part no version has.
    for key, mask in reads.items():
        top = ".".join(key.rpartition(":")[2].split(".")[:2])
        if not top.startswith("tvm.__") and not any(masks.get((kind, top))
                                                   for kind in ("M", "N", "A")):
            masks[("X", key)] |= mask
    for key in [k for k in extra if k[0] == "X" and k not in masks]:
        del extra[key]
    renames = find_renames(masks, defs, aliases, count)
    labels = [label for label, _ in versions]
    # Only functions whose parameters changed: what a TypeError of a call written for another
    # version can be answered from.
    changed: dict[str, int] = defaultdict(int)
    for name, _params in signatures:
        changed[name] += 1
    for (name, params), mask in signatures.items():
        if changed[name] > 1:
            masks[("G", f"{name}({params})")] |= mask
    return api_text(labels, masks, extra, renames, notes), sites_text(labels, sites), {
        "versions": labels, "names": len(masks), "sites": len(sites), "renames": len(renames)}


def find_renames(masks: dict[tuple[str, str], int], defs: dict[str, dict[int, tuple[str, str]]],
                 aliases: list[dict[str, tuple[str, str]]], count: int) -> list[tuple[str, str, str, int]]:
    """(old, new, how, version index of the move) for what can be established."""
    out: list[tuple[str, str, str, int]] = []
    by_short: dict[str, list[str]] = defaultdict(list)
    for path in defs:
        by_short[path.rsplit(".", 1)[-1]].append(path)
    moved: dict[tuple[str, str], str] = {}  # (old defpath, ...) -> new defpath
    for path, seen in defs.items():
        last = max(seen)
        if last == count - 1 or (last + 1) in seen:
            continue
        sig, _mod = seen[last]
        if not sig:
            continue
        nxt = last + 1
        found = [p for p in by_short[path.rsplit(".", 1)[-1]]
                 if p != path and nxt in defs[p] and same_definition(sig, defs[p][nxt][0])
                 and last not in defs[p]]
        if len(found) == 1:
            moved[(path, str(nxt))] = found[0]
            out.append((path, found[0], "definition moved", nxt))
    # Public names that re-exported a moved definition: to the shortest name re-exporting
    # the new one.
    for (old_def, nxt_s), new_def in moved.items():
        nxt = int(nxt_s)
        old_mod, old_name = old_def.rsplit(".", 1)
        new_mod, new_name = new_def.rsplit(".", 1)
        olds = [a for a, o in aliases[nxt - 1].items() if o == (old_mod, old_name)
                and a not in aliases[nxt]]
        news = sorted((a for a, o in aliases[nxt].items() if o == (new_mod, new_name)),
                      key=lambda a: (a.count("."), len(a)))
        if news:
            for a in olds:
                if a != old_def:
                    out.append((a, news[0], "re-exported definition moved", nxt))
    # Modules whose definitions moved together.
    module_moves: dict[tuple[str, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    module_sizes: dict[tuple[str, int], int] = defaultdict(int)
    for (old_def, nxt_s), new_def in moved.items():
        key = (old_def.rsplit(".", 1)[0], int(nxt_s))
        module_moves[key][new_def.rsplit(".", 1)[0]] += 1
    for path, seen in defs.items():
        for v in seen:
            if (v + 1) < count:
                module_sizes[(path.rsplit(".", 1)[0], v + 1)] += 1
    for (old_mod, nxt), targets in module_moves.items():
        new_mod, hits = max(targets.items(), key=lambda kv: kv[1])
        # One moved definition is enough when the module kept its name under a new package
        # (tvm.module -> tvm.runtime.module) and its definitions went nowhere else.
        same_name = new_mod.rsplit(".", 1)[-1] == old_mod.rsplit(".", 1)[-1] and len(targets) == 1
        enough = hits >= 2 and hits * 2 >= module_sizes[(old_mod, nxt)] or same_name
        if enough and not masks.get(("M", old_mod), 0) >> nxt & 1:
            out.append((old_mod, new_mod, "module's definitions moved", nxt))
    # Packages whose modules moved: tvm.dlight.gpu -> tvm.s_tir.dlight.gpu says tvm.dlight
    # became tvm.s_tir.dlight, when tvm.dlight is gone and tvm.s_tir.dlight exists then.
    pkg_moves: dict[tuple[str, str, int], int] = defaultdict(int)
    for old, new, how, nxt in out:
        if how != "module's definitions moved":
            continue
        o_parts, n_parts = old.split("."), new.split(".")
        tail = 0
        while tail < min(len(o_parts), len(n_parts)) - 1 and o_parts[-1 - tail] == n_parts[-1 - tail]:
            tail += 1
        for keep in range(tail, 0, -1):
            o_pkg, n_pkg = ".".join(o_parts[:-keep]), ".".join(n_parts[:-keep])
            if not masks.get(("M", o_pkg), 0) >> nxt & 1 and masks.get(("M", n_pkg), 0) >> nxt & 1 \
                    and masks.get(("M", o_pkg), 0) >> (nxt - 1) & 1:
                pkg_moves[(o_pkg, n_pkg, nxt)] += 1
                break
    for (old, new, nxt), hits in pkg_moves.items():
        if hits >= 2:
            out.append((old, new, "package's modules moved", nxt))
    # FFI globals whose name changed only in its first part (tir.X -> s_tir.X).
    globals_by_rest: dict[str, list[str]] = defaultdict(list)
    for kind, name in masks:
        if kind == "F" and "." in name:
            globals_by_rest[name.split(".", 1)[1]].append(name)
    for names in globals_by_rest.values():
        for old in names:
            mask = masks[("F", old)]
            last = mask.bit_length() - 1
            if last == count - 1:
                continue
            nxt = last + 1
            found = [g for g in names if g != old and masks[("F", g)] >> nxt & 1
                     and not masks[("F", g)] >> last & 1]
            if len(found) == 1:
                out.append((f"ffi:{old}", f"ffi:{found[0]}", "global renamed", nxt))
    return sorted(set(out))


def ranges(mask: int) -> str:
    """A bitmask as version-index ranges: ``0-11,13``."""
    out, v = [], 0
    while mask >> v:
        if mask >> v & 1:
            start = v
            while mask >> (v + 1) & 1:
                v += 1
            out.append(f"{start}-{v}" if v > start else str(start))
        v += 1
    return ",".join(out)


def api_text(labels: list[str], masks: dict[tuple[str, str], int], extra: dict[tuple[str, str], str],
             renames: list[tuple[str, str, str, int]],
             notes: dict[tuple[str, str, str], int]) -> str:
    lines = ["V\t" + "\t".join(labels)]
    for (kind, name), mask in sorted(masks.items()):
        if kind == "O":
            directory, option = name.split("\0")
            lines.append(f"O\t{directory}\t{ranges(mask)}\t{option}")
            continue
        where = extra.get((kind, name))
        lines.append(f"{kind}\t{name}\t{ranges(mask)}" + (f"\t{where}" if where else ""))
    for old, new, how, nxt in renames:
        lines.append(f"R\t{old}\t{new}\t{how}\t{nxt}")
    for (kind, name, message), mask in sorted(notes.items()):
        lines.append(f"{kind}\t{name}\t{ranges(mask)}\t{message.replace(chr(9), ' ')[:300]}")
    return "\n".join(lines) + "\n"


def line_ranges(lines: dict[int, int]) -> str:
    """A site's line in each version: ``820`` when every version has it there, else
    ``820@21;670@19-20`` (the newest version's line first; one version may list two lines,
    the same check written twice in one function)."""
    if len(lines) == 1:
        return str(next(iter(lines)))
    order = sorted(lines.items(), key=lambda kv: (-kv[1].bit_length(), kv[0]))
    return ";".join(f"{line}@{ranges(mask)}" for line, mask in order)


def sites_text(labels: list[str], sites: dict[tuple, list]) -> str:
    lines = ["V\t" + "\t".join(labels)]
    for (kind, path, func, cond, template), (mask, by_line) in sorted(sites.items()):
        cond = " ".join(cond.split())
        lines.append(f"{kind}\t{path}\t{func}\t{ranges(mask)}\t{line_ranges(by_line)}\t{cond}"
                     f"\t{template}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", help="a clone of the project (bare is enough)")
    parser.add_argument("--project", choices=sorted(PROJECTS), default="tvm",
                        help="which repository git_dir is (default: apache/tvm)")
    parser.add_argument("--ffi-git-dir", help="a clone of apache/tvm-ffi, for TVM's submodule")
    parser.add_argument("--since", help="the oldest release tag indexed (TVM: v0.2)")
    parser.add_argument("--out", help="default: toolkit/data/explain, or its folder for the "
                        "project")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()
    if not Path(args.git_dir).exists():
        print(f"explain_index: no such git directory: {args.git_dir}", file=sys.stderr)
        return 2
    started = time.time()
    project = PROJECTS[args.project]
    api, sites, summary = build(args.git_dir, args.ffi_git_dir, args.since or project.since,
                                args.jobs, project)
    data = Path(__file__).resolve().parent.parent / "toolkit" / "data" / "explain"
    out = Path(args.out) if args.out else data if project.own else data / project.key
    out.mkdir(parents=True, exist_ok=True)
    written = [("api.txt.gz", api)] + [("sites.txt.gz", sites)] * project.sites
    for name, text in written:
        # mtime=0: the same history gives the same bytes
        (out / name).write_bytes(gzip.compress((project.header() + text).encode(),
                                               compresslevel=9, mtime=0))
    sizes = ", ".join(f"{name} {(out / name).stat().st_size / 1e6:.2f} MB" for name, _ in written)
    print(f"{len(summary['versions'])} versions ({summary['versions'][0]}..{summary['versions'][-1]}),"
          f" {summary['names']} names, {summary['renames']} renames, {summary['sites']} sites; "
          f"{sizes}; {time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
