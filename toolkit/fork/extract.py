"""``tk fork extract COMMITS --kind K``: a fork's in-tree change as an out-of-tree extension,
built against upstream, and shown to behave the same.

The project is ``tk ext new --kind K``'s scaffold with the fork's files in place of its
samples: the C++ the commits add (built by the scaffold's CMake against upstream's headers and
libraries), the Python modules they add (``python/<name>/fork/``, read under their names in
tvm), the names they add to upstream's modules (``python/<name>/additions/``, run in those
modules), their tests; the package's ``__init__`` puts all of it where the fork had it, so
code written against the fork runs unchanged against upstream plus the extension. What cannot
move is refused before anything is written (``classify``); what is left behind (additions to
upstream's headers and build files, docs) is said.

The proof runs the check (a command, or a workload's numerics) three times, at the top of the
fork's tree: with the fork's TVM, with upstream's plus the extension, and with upstream's
alone (which says whether the check exercises the change at all); for a workload, ``tk
dump-ir`` of the fork and of upstream plus the extension are compared pass by pass.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolkit import events as ev
from toolkit.bisect.state import BisectState
from toolkit.bisect.worktree import Worktree
from toolkit.builds.recipes import Request
from toolkit.errors import TkError, UserError
from toolkit.fork import repo as forks
from toolkit.fork.classify import ADDED, Change, kind_of, read
from toolkit.process import last_line, with_toolkit

DATA = Path(__file__).resolve().parent.parent / "data" / "fork_extension"
KINDS = ("pass", "codegen", "target", "runtime")
CXX = (".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp")
# What the scaffold of each kind brings as samples, replaced by the fork's own files.
SAMPLES = ("src", "tests", "workload.py")
REGISTERED = re.compile(r"""(?:\.def|TVM_REGISTER_GLOBAL|TVM_FFI_REGISTER_GLOBAL)\(\s*"([\w.]+)\"""")
PASS_NAMES = re.compile(r"""Create\w*Pass\([^;]*?"([\w.]+)"|module_pass\([^)]*name=["'](\w+)["']"""
                        r"""|(?:function|prim_func|dataflowblock)_pass\([^)]*name=["'](\w+)["']""")


@dataclass
class Moved:
    path: str  # in the fork
    to: str | None  # in the extension; None: left out
    how: str  # what became of it, or why it stays


@dataclass
class Side:
    """One TVM the check runs with."""

    name: str  # "fork", "upstream + extension", "upstream alone"
    python: str
    env: dict[str, str]
    what: str  # where its TVM comes from, for the report


@dataclass
class Extraction:
    name: str
    kind: str
    project: str
    fork: str  # the repository
    commits: list[dict[str, str]]
    upstream: dict[str, str]  # ref, hash: the merge base it is built against
    moved: list[Moved]
    library: str | None = None
    registers: list[str] = field(default_factory=list)
    built_against: str | None = None
    check: str | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)  # one per side
    ir: dict[str, Any] | None = None

    @property
    def proven(self) -> bool | None:
        """The check passes on the fork and on upstream plus the extension (and, for a
        workload, the IR is the same after every pass); None: nothing was checked."""
        if not self.runs:
            return None
        ok = {r["side"]: r["verdict"] == "good" for r in self.runs}
        same_ir = self.ir is None or self.ir["same"]
        return ok["fork"] and ok["upstream + extension"] and same_ir

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "proven": self.proven}


# -- what moves where -------------------------------------------------------------------------

def select(fork: forks.Fork, own: list[str], specs: list[str]) -> list[str]:
    """COMMITS as the user gave them (revisions, A..B ranges): the fork's own, oldest first."""
    chosen: set[str] = set()
    for spec in specs:
        if ".." in spec:
            shas = fork.repo.git("rev-list", "--no-merges", spec).split() if fork.repo.ok(
                "rev-list", "--quiet", spec) else None
            if shas is None:
                raise UserError(f"{spec!r} is not a range of commits in {fork.root}")
        else:
            shas = [fork.resolve(spec, "commit")]
        for sha in shas:
            if sha not in own:
                raise UserError(f"{spec}: {sha[:10]} is not one of the fork's own commits (those "
                                "on top of upstream: tk fork status lists them)")
            chosen.add(sha)
    if not chosen:
        raise UserError("no commits to extract")
    return [sha for sha in own if sha in chosen]


def plan(fork: forks.Fork, shas: list[str], kind: str, name: str | None = None
         ) -> tuple[str, list[Moved], dict[str, str]]:
    """The extension's name (``name``, else the stem of the change's first file of its own),
    what becomes of each file the commits change, and the extension's files (path in the
    project -> text). Refuses (UserError) commits that are not one movable change of ``kind``."""
    from toolkit.ext.scaffold import validate

    commits = read(fork, shas)
    changes = [c for commit in commits for c in commit.changes]
    found, why = kind_of(changes)
    wanted = "target" if kind == "codegen" else kind
    if found is None:
        raise UserError(f"{', '.join(s[:10] for s in shas)} cannot move out of tree: {why}")
    if found != wanted:
        raise UserError(f"{', '.join(s[:10] for s in shas)} is a {found} change ({why}), not a "
                        f"{kind} one: --kind {found}")
    name = validate(name or derive_name(changes))
    files: dict[str, str] = {}
    additions: dict[str, list[str]] = {}
    moved: dict[str, Moved] = {}
    latest: dict[str, tuple[str, Change]] = {}  # an added file: its text at the last commit
    for commit in commits:
        for c in commit.changes:
            if c.binary:
                moved[c.path] = Moved(c.path, None, "a binary file: carry it by hand")
            elif c.change == ADDED or c.path in latest:
                latest[c.path] = (commit.hash, c)
            elif c.group == "other":
                moved[c.path] = Moved(c.path, None, "not code: stays with the fork")
            elif c.group == "tests":
                moved[c.path] = Moved(c.path, None, "changes upstream's tests: stays with the "
                                                    "fork")
            elif c.path.endswith(".py"):
                try:
                    ast.parse("\n".join(c.added))
                except SyntaxError as e:
                    raise UserError(f"{commit.hash[:10]} adds to {c.path} lines that are not "
                                    f"whole statements of the module ({e.msg}, line {e.lineno} "
                                    "of the additions): an extension can add names to a module, "
                                    "not code inside its functions") from None
                to = f"python/{name}/additions/{c.path.removeprefix('python/')}"
                additions.setdefault(to, []).append(
                    f"# {commit.hash[:10]} {commit.subject}\n" + "\n".join(c.added) + "\n")
                n = len(c.added)
                moved[c.path] = Moved(c.path, to, f"the line{'s' if n != 1 else ''} it adds "
                                                  f"run{'s' if n == 1 else ''} in "
                                                  f"{module_of(c.path)} on import")
            elif c.group == "build":
                moved[c.path] = Moved(c.path, None, "the extension's own CMakeLists.txt builds "
                                                    "its sources")
            else:  # additions to a header of upstream's (classify refuses any other)
                moved[c.path] = Moved(c.path, None, "declarations added to upstream's header: "
                                                    "left out (the extension compiles against "
                                                    "upstream's; its build says if its sources "
                                                    "need them)")
    for path, (sha, c) in latest.items():
        text = fork.repo.git("show", f"{sha}:{path}", check=False)
        if c.group == "tests":
            to = path if path.startswith("tests/") else f"tests/{Path(path).name}"
        elif path.endswith(CXX):
            to = path if path.startswith(("src/", "include/")) else f"src/{path}"
        elif path.endswith(".py") and path.startswith("python/"):
            to = f"python/{name}/fork/{path.removeprefix('python/')}"
        elif c.group == "build":
            moved[path] = Moved(path, None, "the extension's own CMakeLists.txt builds its "
                                            "sources")
            continue
        else:
            moved[path] = Moved(path, None, "not code: stays with the fork")
            continue
        files[to] = text
        how = {"tests": "a test", "python": "a module, imported under its name in tvm"}.get(
            c.group, "C++, built against upstream" if path.endswith(CXX) else "copied")
        if path.endswith(".py") and c.group != "tests":
            how = f"a module, importable as {module_of(path)}"
        moved[path] = Moved(path, to, how)
    files.update({to: "".join(parts) for to, parts in additions.items()})
    return name, list(moved.values()), files


def module_of(path: str) -> str:
    parts = Path(path).with_suffix("").parts[1:]  # python/tvm/a/b.py -> tvm.a.b
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def write_project(root: Path, name: str, kind: str, files: dict[str, str],
                  commits: list[dict[str, str]], fork: str) -> tuple[bool, list[str]]:
    """Replace the scaffold's samples with the fork's files; write the package's loader, its
    fork.json, the CMake that builds the C++ (or no CMake, when there is none). Returns
    whether there is C++, and the prefixes of the globals it registers."""
    for sample in SAMPLES:
        target = root / sample
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    package = root / "python" / name
    for path in package.iterdir():
        if path.is_file():
            path.unlink()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sources = sorted(rel for rel in files if rel.endswith((".cc", ".cpp", ".cxx", ".cu")))
    prefixes = sorted({n.rsplit(".", 1)[0] for rel in sources
                       for n in REGISTERED.findall(files[rel]) if "." in n})
    shutil.copy(DATA / "__init__.py", package / "__init__.py")
    (package / "fork.json").write_text(json.dumps(
        {"kind": kind, "fork": fork, "commits": commits, "library": bool(sources),
         "ffi_prefixes": prefixes}, indent=2) + "\n")
    if sources:
        compiler = "" if kind == "runtime" else " COMPILER"
        # Quote-includes of upstream's private headers ("utils.h" beside a pass) resolve in
        # upstream's tree, beside where the file was.
        beside = sorted({str(Path(rel).parent) for rel in sources if rel.startswith("src/")})
        include = (f"\ntarget_include_directories({name} BEFORE PRIVATE "
                   "${CMAKE_CURRENT_SOURCE_DIR}/include)"
                   if any(rel.startswith("include/") for rel in files) else "")
        (root / "CMakeLists.txt").write_text(CMAKE.format(
            name=name, sources=" ".join(sources), compiler=compiler, include=include,
            beside=" ".join(f"${{TVM_SOURCE_DIR}}/{d}" for d in beside)))
    else:
        (root / "CMakeLists.txt").unlink()
        shutil.rmtree(root / "cmake")
    (root / "README.md").write_text(README.format(
        name=name, kind=kind, fork=fork,
        commits="\n".join(f"- {c['hash'][:12]} {c['subject']}" for c in commits)))
    return bool(sources), prefixes


CMAKE = """# {name}: a fork's change out of tree, written by `tk fork extract` (the scaffold of
# tk ext new, its samples replaced by the fork's own sources).
cmake_minimum_required(VERSION 3.18)
project({name} LANGUAGES CXX)

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()

include(cmake/tvm_extension.cmake)
tvm_extension({name} {sources}{compiler}){include}
if(TVM_SOURCE_DIR)
  target_include_directories({name} PRIVATE ${{TVM_SOURCE_DIR}}/src {beside})
endif()
"""

README = """# {name}

A {kind} change of the fork {fork}, moved out of tree by `tk fork extract` from:

{commits}

- `src/`, `include/`: the C++ the commits added, built by `tk ext build .` against upstream
  TVM (`--build ID`, `--tvm-source DIR`): `python/{name}/lib/lib{name}.so`.
- `python/{name}/fork/`: the Python modules they added, imported under their names in tvm.
- `python/{name}/additions/`: the lines they added to upstream's modules, run in those
  modules when the package is imported.
- `python/{name}/fork.json`: which commits, and what the library registers.

Import `{name}` after `tvm` (or `tk run ... --ext .`): code written against the fork runs
unchanged. Nothing here imports tk.
"""


def derive_name(changes: list[Change]) -> str:
    """The stem of the change's first file of its own: ``fork_fold_scale`` for
    ``python/tvm/relax/transform/fork_fold_scale.py``."""
    for c in changes:
        if c.change == ADDED and c.group not in ("tests", "other", "build"):
            stem = re.sub(r"[^a-z0-9_]", "_", Path(c.path).stem.lower()).strip("_")
            if stem and stem[0].isalpha():
                return stem
    raise UserError("give --name NAME for the extension")


# -- the proof ------------------------------------------------------------------------------

def tvm_dir(python: str) -> Path:
    from toolkit.ext.compile import target_python_facts

    where = target_python_facts(python).get("tvm_dir")
    if not where:
        raise UserError(f"{python} imports no tvm: it cannot be upstream's side")
    return Path(where)


def base_env(python: str | None) -> dict[str, str]:
    """The environment a side starts from: the user's, without what picks a TVM; with
    ``python``'s directory first on PATH (a check's ``python`` is that one)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH", "TK_DEBUG")}
    if python:
        env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    return env


def with_extension(side: Side, root: Path, name: str, autoload: Path) -> Side:
    """``side`` with the extension imported as soon as tvm is (a sitecustomize of tk's)."""
    autoload.mkdir(parents=True, exist_ok=True)
    (autoload / "sitecustomize.py").write_text(
        (DATA / "sitecustomize.py").read_text().replace("__NAME__", name))
    paths = [str(autoload), str(root / "python"), *filter(None, side.env.get(
        "PYTHONPATH", "").split(os.pathsep))]
    return Side("upstream + extension", side.python,
                {**side.env, "PYTHONPATH": os.pathsep.join(paths)},
                f"{side.what}, with {root}")


def run_side(side: Side, argv: list[str], cwd: Path, timeout: float | None) -> dict[str, Any]:
    from toolkit.bisect import verdicts
    from toolkit.bisect.runner import run_check, tail

    words = [side.python if w == sys.executable else w for w in argv]
    outcome = run_check(words, with_toolkit(dict(side.env)), cwd, timeout)
    verdict = verdicts.classify(outcome)
    return {"side": side.name, "tvm": side.what, "verdict": verdict.value,
            "reason": verdict.reason, "output_tail": tail(outcome.output)}


def dump(side: Side, workload: str, target: str, out: Path, cwd: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    proc = subprocess.run([side.python, "-m", "toolkit", "dump-ir", workload, "--target", target,
                           "-o", str(out)], cwd=cwd, env=with_toolkit(dict(side.env)),
                          capture_output=True, text=True)
    if not (out / "index.json").is_file():
        raise TkError(f"tk dump-ir {workload} with {side.name}'s TVM ({side.what}) failed: "
                      f"{last_line(proc.stderr, f'exit {proc.returncode}')}")
    # The texts compare_ir reads are rendered by compiling again with the TVM that recorded
    # them: this side's, so in its interpreter, not in tk's.
    proc = subprocess.run([side.python, "-m", "toolkit", "dump-ir", "page", str(out)], cwd=cwd,
                          env=with_toolkit(dict(side.env)), capture_output=True, text=True)
    if proc.returncode != 0:
        raise TkError(f"rendering the texts of {out} with {side.name}'s TVM ({side.what}) "
                      f"failed: {last_line(proc.stderr, f'exit {proc.returncode}')}")


def compare_ir(a: Path, b: Path, pass_names: list[str]) -> dict[str, Any]:
    """The two dumps compared pass by pass; the fork's passes found in both."""
    from toolkit.dumpir import query

    da, db = query.Dump.open(a), query.Dump.open(b)
    result = query.compare(da, db)
    same = not (result["failed_a"] or result["failed_b"] or result["only_a"]
                or result["only_b"] or result["first_divergence"]
                or result["first_input_difference"])
    leaves_a = {r.name for r in da.leaves}
    leaves_b = {r.name for r in db.leaves}
    found = [p for p in pass_names if any(n.endswith(p) for n in leaves_a)
             and any(n.endswith(p) for n in leaves_b)]
    return {"fork": str(a), "upstream": str(b), "same": same, "passes": result["aligned"],
            "fork_passes": found, "compare": result}


# -- all of it --------------------------------------------------------------------------------

def extract(source: Path | None, specs: list[str], kind: str, *, name: str | None = None,
            directory: Path | str = ".", upstream: str | None = None, fork_rev: str = "HEAD",
            check: list[str] | None = None, workload: str | None = None, target: str = "llvm",
            python: str | None = None, upstream_build: str | None = None,
            fork_build: str | None = None, request: Request | None = None,
            timeout: float | None = None, events: ev.Handler = ev.ignore) -> Extraction:
    from toolkit.bisect import checks
    from toolkit.bisect.artifacts import StoreBuilder
    from toolkit.builds import source as sources
    from toolkit.builds import store
    from toolkit.ext import scaffold
    from toolkit.ext.compile import build as build_extension

    if kind not in KINDS:
        raise UserError(f"--kind {kind!r}: one of {', '.join(KINDS)}")
    if python and upstream_build:
        raise UserError("give --python PY or --upstream-build ID for upstream's side, not both")
    fork = forks.open_fork(source, fork_rev)
    ref, up = forks.upstream_of(fork, upstream)
    base = forks.merge_base(fork, up, fork.tip)
    shas = select(fork, forks.own_commits(fork, up), specs)
    name, moved, files = plan(fork, shas, kind, name)
    argv: list[str] = []
    display = None
    if check or workload:
        words = check or ["numerics", str(workload), "--target", target]
        argv, display = checks.resolve(words, fork.root)
    commits = [{"hash": sha, "subject": fork.subject(sha)} for sha in shas]
    root = scaffold.new(name, directory, "target" if kind == "codegen" else kind,
                        python or sys.executable)
    has_cxx, _ = write_project(root, name, kind, files, commits, str(fork.root))
    result = Extraction(name=name, kind=kind, project=str(root), fork=str(fork.root),
                        commits=commits, upstream={"ref": ref, "hash": base}, moved=moved,
                        check=display)

    if not has_cxx and not argv:
        return result  # nothing to build, nothing to check
    own = forks.own_repo(fork)
    work = forks.home(fork) / "extract"
    config = BisectState(source=own.working_tree_dir, good=base, bad=fork.tip,
                         commits=[base, fork.tip], check=[], check_display="",
                         request=request or Request())
    up_wt = Worktree(own, work / "upstream" / "worktree")
    up_wt.checkout(base)

    def stored(sha: str, wt: Worktree, what: str) -> tuple[str, dict[str, str]]:
        wt.checkout(sha)
        events(ev.Stage(f"{what}: {sha[:10]}, built through the store in {wt.path}"))
        built = StoreBuilder(config, own, wt.path, events).build(sha)
        if not built.ok:
            raise TkError(f"{what} {sha[:10]} does not build: {built.message}")
        assert built.key is not None
        return built.key, built.env

    # Upstream's side: a stored build (given, or made), or the TVM of --python.
    up_key = upstream_build
    if python:
        up_side = Side("upstream alone", python, base_env(python), f"the tvm of {python}")
    else:
        if up_key is None:
            up_key, _ = stored(base, up_wt, "upstream")
        record = store.find(up_key)
        up_side = Side("upstream alone", sys.executable,
                       {**base_env(None), **store.env_of(record, up_wt.path)},
                       f"build {record.id} of upstream {base[:10]}")
    if has_cxx:
        events(ev.Stage(f"building {name} against upstream {base[:10]}"))
        built = build_extension(root, python=up_side.python, events=events,
                                build_id=up_key if not python else None,
                                tvm_source=str(up_wt.path) if python else None,
                                headers_from=up_wt.path if not python else None)
        result.library = str(built.library)
        result.registers = built.manifest["globals"]
        result.built_against = built.manifest["tvm"]["against"]
    if not argv:
        return result

    # The fork's side: a stored build (given, or made); the fork's python/ over upstream's
    # libraries when its commits change nothing that is built (the store's answer, too).
    fork_wt = Worktree(own, work / "fork" / "worktree")
    fork_wt.checkout(fork.tip)
    if fork_build is not None:
        record = store.find(fork_build)
        fork_side = Side("fork", sys.executable,
                         {**base_env(None), **store.env_of(record, fork_wt.path)},
                         f"build {record.id} of the fork")
    elif python:
        keys = sources.tree_keys(Path(own.git_dir), [base, fork.tip])
        if keys[base] != keys[fork.tip]:
            raise UserError("the fork's own commits change what is built: its side needs a "
                            "build of the fork (--fork-build ID), or drop --python and tk "
                            "builds both")
        lib = tvm_dir(python) / "lib"
        fork_side = Side("fork", python, {**base_env(python),
                                          "PYTHONPATH": str(fork_wt.path / "python"),
                                          "TVM_LIBRARY_PATH": str(lib)},
                         f"the fork's python/ over the libraries of {python}'s tvm (its "
                         "commits change nothing that is built)")
    else:
        key, env = stored(fork.tip, fork_wt, "the fork")
        fork_side = Side("fork", sys.executable, {**base_env(None), **env},
                         f"build {key} of the fork {fork.tip[:10]}")
    ext_side = with_extension(up_side, root, name, work / name / "autoload")
    for side in (fork_side, ext_side, up_side):
        events(ev.Stage(f"checking with {side.name}: {side.what}"))
        result.runs.append(run_side(side, argv, fork_wt.path, timeout))
    if workload is not None:
        events(ev.Stage(f"dumping the IR of {workload} with the fork and with upstream + "
                        f"{name}"))
        a, b = work / name / "ir-fork", work / name / "ir-upstream"
        dump(fork_side, workload, target, a, fork_wt.path)
        dump(ext_side, workload, target, b, fork_wt.path)
        names = [m for text in files.values() for g in PASS_NAMES.findall(text)
                 for m in g if m]
        result.ir = compare_ir(a, b, list(dict.fromkeys(names)))
    return result


def render(data: dict[str, Any]) -> str:
    lines = [f"{data['project']}: the {data['kind']} change of {len(data['commits'])} "
             f"commit{'s' if len(data['commits']) != 1 else ''} of {data['fork']}"]
    lines += [f"  {c['hash'][:10]} {c['subject']}" for c in data["commits"]]
    for m in data["moved"]:
        lines.append(f"  {m['path']} -> {m['to']}: {m['how']}" if m["to"]
                     else f"  {m['path']}: {m['how']}")
    if data["library"]:
        lines.append(f"built {data['library']} against {data['built_against']}; registers "
                     f"{', '.join(data['registers']) or 'nothing'}")
    elif data["moved"]:
        lines.append("no C++: nothing to build")
    if not data["runs"]:
        lines.append("not checked (give --check CMD or --workload W to prove it behaves the same)")
        return "\n".join(lines)
    lines.append(f"check {data['check']}, at the top of the fork's tree:")
    for r in data["runs"]:
        lines.append(f"  {r['side']:<21} {r['verdict']} ({r['reason']})  [{r['tvm']}]")
    alone = next(r for r in data["runs"] if r["side"] == "upstream alone")
    if alone["verdict"] == "good":
        lines.append("  note: the check passes on upstream alone too: it does not show that the "
                     "extension carries the change")
    ir = data["ir"]
    if ir is not None:
        compared = ir["compare"]
        where = compared["first_divergence"] or compared["first_input_difference"]
        lines.append(f"IR: {'the same' if ir['same'] else 'DIFFERENT'} after every one of the "
                     f"{ir['passes']} passes aligned"
                     + (f", the fork's {', '.join(ir['fork_passes'])} among them"
                        if ir["fork_passes"] else "")
                     + (f"; first difference at {where['name']}" if where else "")
                     + f" (tk dump-ir compare {ir['fork']} {ir['upstream']})")
    lines.append("proven: the same check passes with upstream + the extension as with the fork"
                 if data["proven"] else
                 "NOT proven: see the runs above")
    return "\n".join(lines)
