"""The TVM source tree a build comes from: its layout, its git state, its build key.

The *build key* of a tree is a hash of what can change the compiled libraries — C++ sources,
CMake files, submodule SHAs — and nothing else: a commit that touches only ``python/``,
``docs/`` or tests keeps the key, so a stored build of its parent serves it.
``tree_key(repo, commit)`` computes it from git objects alone (``git ls-tree``), without a
checkout: ``tk bisect`` uses it to find the nearest already-built commit.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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


def build_relevant(path: str) -> bool:
    """Can a change to ``path`` (relative to the tree root) change the built libraries?

    ``config.cmake`` at the root is excluded because tk writes the build directory's own,
    which TVM's CMakeLists prefers; ``.gitmodules`` stays (it moves submodules).
    """
    p = PurePosixPath(path)
    if p.parts and (p.parts[0] == "build" or p.parts[0].startswith("build-")):
        return False  # build directories: outputs, not inputs
    if p.parts and (p.parts[0] in NOT_BUILT_DIRS or "/".join(p.parts[:2]) in NOT_BUILT_DIRS):
        return False
    if len(p.parts) == 1 and p.name in NOT_BUILT_FILES:
        return False
    return not p.name.endswith(NOT_BUILT_SUFFIXES)


def git_env() -> dict[str, str]:
    """The environment of tk's git reads of a user's tree: ``git status`` would otherwise
    refresh and rewrite the user's .git/index (as root, under sudo: a root-owned index)."""
    return {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=git_env())
    if check and proc.returncode != 0:
        raise UserError(f"git {' '.join(args)} in {repo}: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout


def is_git(repo: Path) -> bool:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
                          capture_output=True, text=True, env=git_env()).returncode == 0


def tree_key(repo: Path | str, commit: str = "HEAD") -> str:
    """Build key of ``commit`` from git objects only: blob and gitlink SHAs of build paths."""
    repo = Path(repo)
    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--full-tree", commit],
                          capture_output=True, text=True, env=git_env())
    if proc.returncode != 0:
        raise UserError(f"{commit!r} is not a commit of {repo}: {proc.stderr.strip()}")
    digest = hashlib.sha256()
    for line in proc.stdout.splitlines():
        meta, _, path = line.partition("\t")
        if build_relevant(path):
            mode, _kind, sha = meta.split()
            digest.update(f"{mode} {sha} {path}\n".encode())
    return digest.hexdigest()[:16]


@dataclass
class Submodule:
    path: str
    recorded: str  # the SHA the superproject records
    checked_out: str | None  # None when not initialised
    state: str  # "ok", "uninitialised", "moved" (checked out elsewhere), "conflict"


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

    def to_json(self) -> dict:
        return {
            "dir": str(self.root), "layout": self.layout, "commit": self.commit,
            "dirty": bool(self.dirty_paths), "dirty_paths": self.dirty_paths[:50],
            "dirty_hash": self.dirty_hash, "tree_key": self.key,
            "submodules": {s.path: {"recorded": s.recorded, "checked_out": s.checked_out,
                                    "state": s.state} for s in self.submodules},
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


def submodules(root: Path) -> list[Submodule]:
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
        if state == "uninitialised":
            checked_out = None
        elif state == "moved":
            recorded = _recorded_sha(root, path) or sha
        subs.append(Submodule(path, recorded, checked_out, state))
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
        tree.key = _content_key(root)
        tree.files_key = tree.key
        return tree
    tree.commit = git(root, "rev-parse", "HEAD").strip()
    tree.submodules = submodules(root)
    # Build directories inside the tree may be untracked and huge: leave them out of the scan.
    status = git(root, "status", "--porcelain=v1", "--untracked-files=all",
                 "--ignore-submodules=none", "--", ".", ":(exclude,glob)build*/**")
    paths = {line[3:].split(" -> ")[-1].strip('"') for line in status.splitlines() if len(line) > 3}
    tree.dirty_paths = sorted(p for p in paths if build_relevant(p))
    tree.key = tree_key(root, "HEAD")
    tracked = git(root, "ls-files").splitlines()
    names = hashlib.sha256()
    for rel in sorted({*tracked, *paths}):
        if build_relevant(rel):
            names.update(rel.encode() + b"\n")
    for sub in tree.submodules:
        names.update(f"{sub.path} {sub.checked_out}\n".encode())
    tree.files_key = names.hexdigest()[:16]
    # An uninitialised submodule builds nothing different (its SHA is in the commit's key);
    # one checked out elsewhere does.
    if tree.dirty_paths or any(s.state in ("moved", "conflict") for s in tree.submodules):
        # Uncommitted build-relevant work: a key of its own, never the commit's.
        dirty = hashlib.sha256()
        for sub in tree.submodules:
            dirty.update(f"{sub.path} {sub.checked_out}\n".encode())
        for rel in tree.dirty_paths:
            path = root / rel
            dirty.update(rel.encode() + b"\0")
            if path.is_file():
                dirty.update(path.read_bytes())
        tree.dirty_hash = dirty.hexdigest()[:16]
        tree.key = hashlib.sha256(f"{tree.key} {tree.dirty_hash}".encode()).hexdigest()[:16]
    return tree


def _content_key(root: Path) -> str:
    """Build key of a tree that is not a git checkout: hash every build-relevant file."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if (path.is_file() and build_relevant(rel)
                and not rel.startswith(("build", ".git/"))):
            digest.update(rel.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
