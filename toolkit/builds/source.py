"""The TVM source tree a build comes from: its layout, its git state, its build key.

The *build key* of a tree is a hash of what can change the compiled libraries — C++ sources,
CMake files, submodule SHAs — and nothing else: a commit that touches only ``python/``,
``docs/`` or tests keeps the key, so a stored build of its parent serves it.
``tree_key(repo, commit)`` computes it from git objects alone (``git ls-tree``), without a
checkout: ``tk bisect`` uses it to find the nearest already-built commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat as stat_mod
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit import git as gitrun
from toolkit.errors import UserError

# Top-level directories whose contents never reach libtvm / libtvm_runtime.
NOT_BUILT_DIRS = frozenset({
    "python", "docs", "tests", "gallery", "web", "apps", "jvm", "rust", "golang", "ci",
    "docker", "conda", ".github", ".ci", "licenses", "tutorials", "vta/python",
})
NOT_BUILT_SUFFIXES = (".md", ".rst", ".ipynb", ".txt.license")
NOT_BUILT_FILES = frozenset({
    "LICENSE", "NOTICE", "KEYS", ".gitignore", ".asf.yaml", ".pre-commit-config.yaml",
    "pyproject.toml", "setup.py", "setup.cfg", "version.py", ".clang-format", "Jenkinsfile",
    ".gitattributes", "config.cmake",
})
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1, SHA-256 object names
# Directories under a tree that are no one's source: git's, and Python's bytecode caches.
NOT_SOURCES = frozenset({".git", "__pycache__"})


def build_relevant(path: str) -> bool:
    """Can a change to ``path`` (relative to the tree root) change the built libraries?

    ``config.cmake`` at the root is excluded because tk writes the build directory's own,
    which TVM's CMakeLists prefers; ``.gitmodules`` stays (it moves submodules).
    """
    # Plain string work: this runs for every file of a tree on each tk build.
    parts = [part for part in path.split("/") if part and part != "."]
    if not parts:
        return True
    if parts[0] == "build" or parts[0].startswith("build-"):
        return False  # build directories: outputs, not inputs
    if parts[0] in NOT_BUILT_DIRS or "/".join(parts[:2]) in NOT_BUILT_DIRS:
        return False
    if len(parts) == 1 and parts[0] in NOT_BUILT_FILES:
        return False
    return not parts[-1].endswith(NOT_BUILT_SUFFIXES)


def git(repo: Path, *args: str, check: bool = True, stdin: str | None = None) -> str:
    """``git ARGS`` in the user's tree ``repo``; a failure is the user's (a tree that is not
    one, a bad ref): one line, exit 2."""
    proc = gitrun.run(*args, cwd=repo, check=False, input=stdin)
    if check and proc.returncode != 0:
        raise UserError(f"git {' '.join(args)[:200]} in {repo}: {gitrun.failure(proc)}")
    return proc.stdout


def is_git(repo: Path) -> bool:
    return gitrun.run("rev-parse", "--show-toplevel", cwd=repo, check=False).returncode == 0


def tree_key(repo: Path | str, commit: str = "HEAD") -> str:
    """Build key of ``commit`` from git objects only: blob and gitlink SHAs of build paths."""
    return tree_keys(repo, [commit])[commit]


def tree_keys(repo: Path | str, commits: Sequence[str]) -> dict[str, str]:
    """``tree_key`` of each commit, from three git processes however many there are: the
    first commit's listing, then each other's difference from it (a bisection keys every
    commit of its range; one ``git ls-tree`` each was most of its time outside builds)."""
    repo = Path(repo)
    unique = list(dict.fromkeys(commits))
    if len(unique) > 1 and not all(FULL_SHA.fullmatch(c) for c in unique):
        # diff-tree --stdin reads full SHAs only (a bisection's commits are already)
        full = dict(zip(unique, git(repo, "rev-parse", *unique).split(), strict=True))
    else:
        full = {c: c for c in unique}
    if not unique:
        return {}
    base, others = unique[0], unique[1:]
    # Build paths only, each path judged once: the listing's here, then each changed one.
    files: dict[str, tuple[str, str]] = {}
    for entry in git(repo, "ls-tree", "-r", "--full-tree", "-z", base).split("\0"):
        meta, _, path = entry.partition("\t")
        if path and build_relevant(path):
            mode, _kind, sha = meta.split()
            files[path] = (mode, sha)
    keys = {base: _files_key(files)}
    if not others:
        return keys
    # "<commit> <parent>" lines: the difference from base to each commit, under a header
    # that names the commit; then per change ":<modes> <shas> <status>" and the path.
    lines = "".join(f"{full[c]} {full[base]}\n" for c in others)
    tokens = iter(git(repo, "diff-tree", "--stdin", "-r", "--no-renames", "-z", "--always",
                      stdin=lines).split("\0"))
    diffs: dict[str, dict[str, tuple[str, str] | None]] = {}
    changed: dict[str, tuple[str, str] | None] = {}
    for token in tokens:
        if token.startswith(":"):
            _old_mode, mode, _old_sha, sha, status = token[1:].split()
            changed[next(tokens)] = None if status == "D" else (mode, sha)
        elif token.strip():
            changed = diffs.setdefault(token.strip(), {})
    for commit in others:
        built = {path: entry for path, entry in diffs.get(full[commit], {}).items()
                 if build_relevant(path)}
        if not built:  # Python, docs, tests only: the base's build paths, the base's key
            keys[commit] = keys[base]
            continue
        now = dict(files)
        for path, entry in built.items():
            if entry is None:
                now.pop(path, None)
            else:
                now[path] = entry
        keys[commit] = _files_key(now)
    return keys


def _files_key(files: dict[str, tuple[str, str]]) -> str:
    """The key of a tree's build paths (the caller leaves the others out)."""
    digest = hashlib.sha256()
    for path in sorted(files):  # path order: git's own, for full paths
        mode, sha = files[path]
        digest.update(f"{mode} {sha} {path}\n".encode())
    return digest.hexdigest()[:16]


@dataclass
class Submodule:
    path: str
    recorded: str | None  # the SHA the superproject records (None in a tree without git)
    checked_out: str | None  # None when not a git checkout (empty, or files without .git)
    # "ok", "moved" (checked out at another commit), "uninitialised" (empty), "populated"
    # (files present but not a registered checkout: judged by content), "conflict"
    state: str
    dirty: bool = False  # uncommitted changes inside the submodule
    content: str | None = None  # hash of its build-relevant files, when judged by content

    def to_json(self) -> dict:
        return {"recorded": self.recorded, "checked_out": self.checked_out,
                "state": self.state, "dirty": self.dirty, "content": self.content}

    @classmethod
    def from_json(cls, path: str, data: dict) -> Submodule:
        return cls(path=path, recorded=data.get("recorded"), checked_out=data.get("checked_out"),
                   state=data.get("state", "ok"), dirty=bool(data.get("dirty")),
                   content=data.get("content"))


@dataclass
class SourceTree:
    root: Path
    layout: str  # "python" (<= v0.21), "pyproject" (v0.22+), "main" (libtvm_compiler), "extension"
    commit: str | None = None
    dirty_paths: list[str] = field(default_factory=list)  # build-relevant uncommitted changes
    dirty_hash: str | None = None
    submodules: list[Submodule] = field(default_factory=list)
    key: str = ""
    files_key: str = ""  # which build-relevant files exist (not their contents)
    content_hash: str | None = None  # a tree without git: hash of its build-relevant files

    def to_json(self) -> dict:
        return {
            "dir": str(self.root), "layout": self.layout, "commit": self.commit,
            "content_hash": self.content_hash,
            "dirty": bool(self.dirty_paths), "dirty_paths": self.dirty_paths[:50],
            "dirty_hash": self.dirty_hash, "tree_key": self.key,
            "submodules": {s.path: s.to_json() for s in self.submodules},
        }


def python_dirs(root: Path) -> list[Path]:
    """What goes on PYTHONPATH for a tree's own Python packages: tvm, and tvm-ffi's when its
    Cython core was built in place (else the installed apache-tvm-ffi has to serve)."""
    dirs = [root / "python"]
    ffi = root / "3rdparty" / "tvm-ffi" / "python"
    if any((ffi / "tvm_ffi").glob("core*.so")):
        dirs.append(ffi)
    return [d for d in dirs if d.is_dir()]


def detect_layout(root: Path) -> str:
    lists = root / "CMakeLists.txt"
    text = lists.read_text(errors="replace") if lists.exists() else ""
    if (("TVM_PREBUILD_PATH" in text or "find_package(tvm" in text.lower())
            and not (root / "cmake" / "config.cmake").exists()):
        return "extension"  # builds against a prebuilt TVM rather than being one
    if "tvm_compiler" in text:
        return "main"
    pyproject = root / "pyproject.toml"
    if pyproject.exists() and "scikit_build" in pyproject.read_text(errors="replace"):
        return "pyproject"
    return "python"


def gitmodule_paths(root: Path) -> list[str]:
    """Submodule paths declared in ``.gitmodules`` (also in a release tarball, without git)."""
    gm = root / ".gitmodules"
    if not gm.exists():
        return []
    return re.findall(r"^\s*path\s*=\s*(\S+)", gm.read_text(errors="replace"), re.M)


def populated(path: Path) -> bool:
    return path.is_dir() and any(p.name != ".git" for p in path.iterdir())


def dirty_files(repo: Path) -> list[str]:
    """Paths with uncommitted changes (untracked included), relative to ``repo``; build
    directories inside it left out of the scan (they may be untracked and huge)."""
    status = git(repo, "status", "--porcelain=v1", "--untracked-files=all",
                 "--ignore-submodules=none", "--", ".", ":(exclude,glob)build*/**", check=False)
    return sorted({line[3:].split(" -> ")[-1].strip('"') for line in status.splitlines()
                   if len(line) > 3})


def submodules(root: Path) -> list[Submodule]:
    """Each submodule's state. A populated directory that ``.git/config`` does not register
    (copied in, or cloned by hand) is judged by its content, not refused as uninitialised."""
    if not (root / ".gitmodules").exists():
        return []
    out = git(root, "submodule", "status", "--recursive", check=False)
    subs = []
    for line in out.splitlines():
        m = re.match(r"^([ +\-U])([0-9a-f]{40}) (\S+)", line)
        if not m:
            continue
        flag, sha, path = m.groups()
        recorded = sha
        checked_out: str | None = sha
        state = {" ": "ok", "+": "moved", "-": "uninitialised", "U": "conflict"}[flag]
        if state == "moved":
            recorded = _recorded_sha(root, path) or sha
        sub = Submodule(path, recorded, checked_out, state)
        where = root / path
        if state == "uninitialised":
            sub.checked_out = None
            if (where / ".git").exists() and is_git(where):
                sub.checked_out = git(where, "rev-parse", "HEAD", check=False).strip() or None
                sub.state = "ok" if sub.checked_out == recorded else "moved"
            elif populated(where):
                sub.state = "populated"
                sub.content = content_key(where)
        if sub.checked_out and sub.state in ("ok", "moved"):
            sub.dirty = bool(dirty_files(where))
        subs.append(sub)
    return subs


def tarball_submodules(root: Path) -> list[Submodule]:
    """A tree without git: submodules are what ``.gitmodules`` names, judged by content."""
    subs = []
    for path in gitmodule_paths(root):
        where = root / path
        if populated(where):
            subs.append(Submodule(path, None, None, "populated", content=content_key(where)))
        else:
            subs.append(Submodule(path, None, None, "uninitialised"))
    return subs


def _recorded_sha(root: Path, path: str) -> str | None:
    # Nested submodules are recorded by their own parent, which ls-files resolves.
    parent, name = root, path
    for sub in sorted(Path(path).parents, key=lambda p: len(p.parts), reverse=True):
        if str(sub) != "." and (root / sub / ".git").exists():
            parent, name = root / sub, str(Path(path).relative_to(sub))
            break
    out = git(parent, "ls-files", "-s", "--", name, check=False).split()
    return out[1] if len(out) > 1 else None


def inspect(root: Path | str) -> SourceTree:
    """Layout, commit, build-relevant dirty state and submodules of a source tree."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise UserError(f"source tree {root}: no such directory")
    if not (root / "CMakeLists.txt").exists() and is_git(root):
        # Run from inside the tree (e.g. python/): its top level is the source tree.
        top = Path(git(root, "rev-parse", "--show-toplevel").strip())
        if (top / "CMakeLists.txt").exists():
            root = top
    if not (root / "CMakeLists.txt").exists():
        raise UserError(f"source tree {root}: no CMakeLists.txt (not a TVM source tree?)")
    tree = SourceTree(root=root, layout=detect_layout(root))
    if not is_git(root):
        # A release tarball: found again by a hash of its build-relevant content.
        files = source_files(root)
        tree.content_hash = content_key(root, files=files)
        tree.key = tree.content_hash
        # Which files exist, not what they hold: an edit is no reason to configure again.
        tree.files_key = hashlib.sha256("\n".join(sorted(files)).encode()).hexdigest()[:16]
        tree.submodules = tarball_submodules(root)
        return tree
    tree.commit = git(root, "rev-parse", "HEAD").strip()
    tree.submodules = submodules(root)
    paths = set(dirty_files(root))
    tree.dirty_paths = sorted(p for p in paths if build_relevant(p))
    tree.key = tree_key(root, "HEAD")
    tracked = git(root, "ls-files").splitlines()
    names = hashlib.sha256()
    for rel in sorted({*tracked, *paths}):
        if build_relevant(rel):
            names.update(rel.encode() + b"\n")
    for sub in tree.submodules:
        names.update(f"{sub.path} {sub.checked_out} {sub.content}\n".encode())
    tree.files_key = names.hexdigest()[:16]
    # An uninitialised submodule builds nothing different (its SHA is in the commit's key);
    # one checked out elsewhere, dirty inside, or populated by hand may.
    changed = [s for s in tree.submodules
               if s.state in ("moved", "conflict", "populated") or s.dirty]
    if tree.dirty_paths or changed:
        # Uncommitted build-relevant work: a key of its own, never the commit's.
        dirty = hashlib.sha256()
        for sub in tree.submodules:
            dirty.update(f"{sub.path} {sub.checked_out} {sub.content}\n".encode())
        for rel in tree.dirty_paths:
            _hash_file(dirty, root, rel)
        for sub in changed:
            if sub.dirty:
                for rel in dirty_files(root / sub.path):
                    _hash_file(dirty, root, f"{sub.path}/{rel}")
        tree.dirty_hash = dirty.hexdigest()[:16]
        tree.key = hashlib.sha256(f"{tree.key} {tree.dirty_hash}".encode()).hexdigest()[:16]
    return tree


def _hash_file(digest: Any, root: Path, rel: str) -> None:
    path = root / rel
    digest.update(rel.encode() + b"\0")
    if path.is_file():
        digest.update(path.read_bytes())


def source_files(root: Path, whole: bool = False) -> list[str]:
    """The build-relevant files under ``root`` (``whole``: every file), relative, build
    directories and .git pruned."""
    files = []
    top = str(root)
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = os.path.relpath(dirpath, top)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(d for d in dirnames if d not in NOT_SOURCES and not (
            not prefix and (d == "build" or d.startswith("build-"))))
        for name in filenames:
            rel = prefix + name
            if name != ".git" and (whole or build_relevant(rel)):
                files.append(rel)
    return files


def content_key(root: Path, whole: bool = False, files: list[str] | None = None) -> str:
    """Hash every build-relevant file under ``root`` (build directories and .git pruned);
    ``whole``: every file, for what is built from all of it (a Python package's wheel takes
    ``python/`` and ``pyproject.toml``, which never reach the libraries).

    Only what the sources are counts, not where they lie: a submodule's ``.git`` *file*
    (``gitdir: ../../.git/modules/...``, another path in every worktree of a bisection) and
    the bytecode Python writes beside its sources (``__pycache__``) are left out, so the
    same sources checked out anywhere have one key (and one tvm-ffi wheel).

    Each file's own digest is remembered by (size, mtime, inode) in a stat cache under the
    store (as git's index does), so a tree that did not change is hashed from ``stat`` alone;
    a file changed within the cache's last two seconds is read again (racily clean)."""
    files = source_files(root, whole) if files is None else files
    top = str(root)
    cache_path, cached = _stat_cache(root, "whole" if whole else "built")
    trusted_before = cached.get("written", 0) - 2_000_000_000
    entries: dict[str, list] = {}
    digest = hashlib.sha256()
    known = cached.get("files", {})
    for rel in sorted(files):
        path = os.path.join(top, rel)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat_mod.S_ISREG(st.st_mode):
            continue
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        old = known.get(rel)
        if old and old[:3] == stamp and st.st_mtime_ns < trusted_before:
            file_digest = old[3]
        else:
            with open(path, "rb") as f:
                file_digest = hashlib.sha256(f.read()).hexdigest()
        entries[rel] = [*stamp, file_digest]
        digest.update(f"{rel}\0{file_digest}\n".encode())
    if entries != cached.get("files"):
        _save_stat_cache(cache_path, entries)
    return digest.hexdigest()[:16]


def _stat_cache(root: Path, view: str) -> tuple[Path, dict]:
    """The stat cache of one view of ``root``: a tree hashed two ways (a submodule for the
    libraries and for its wheel) keeps one cache per way, or each would evict the other."""
    from toolkit.paths import cache_root

    name = hashlib.sha256(f"{root.resolve()}\0{view}".encode()).hexdigest()[:16]
    path = cache_root() / "trees" / f"{name}.json"
    try:
        return path, json.loads(path.read_text())
    except (OSError, ValueError):
        return path, {}


def _save_stat_cache(path: Path, entries: dict[str, list]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"written": time.time_ns(), "files": entries}))
        tmp.replace(path)
    except OSError:
        pass  # a cache: without it the next run reads the files again
