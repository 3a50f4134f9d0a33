"""A minifork history with a regression at a known commit, for bisect tests and benchmarks.

The docs' examples make one with ``python bisect_helpers.py DIR [--commits N] [--culprit K]``
(``minifork.py`` beside it).
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
from pathlib import Path

from minifork import add_python_commit, commit_file, git, make_minifork

ADD_BAD = ("#include <tvm/mini.h>\n\n// Off by one.\n"
           "TVM_MINI_DLL int TVMMiniAdd(int a, int b) { return a + b + 1; }\n")
# The check: does the runtime add? (exit 1 when not)
CHECK = ("python -c \"import sys, tvm; sys.exit(0 if tvm._RUNTIME.TVMMiniAdd(2, 2) == 4 "
         "else 1)\"")


OP_SOURCE = """#include <tvm/mini.h>
#include <map>
#include <string>
#include <vector>
#include <sstream>

namespace {{
std::map<std::string, std::vector<double>> Table{i}() {{
  std::map<std::string, std::vector<double>> t;
  for (int k = 0; k < 64; ++k) {{
    std::ostringstream name;
    name << "op{i}_" << k;
    t[name.str()] = std::vector<double>(k + 1, k * {i}.5);
  }}
  return t;
}}
}}  // namespace

TVM_MINI_DLL double MiniOp{i}(int k) {{ return Table{i}().begin()->second.size() + k; }}
"""


def add_operator_sources(root: Path, count: int) -> str:
    """A commit adding ``count`` C++ files to the compiler library: a tree whose clean build
    costs many compiles while a typical commit touches one file, as in TVM."""
    lists = (root / "CMakeLists.txt").read_text().replace(
        "set(COMPILER_SRCS src/ir/module.cc src/driver/build_info.cc)",
        "set(COMPILER_SRCS src/ir/module.cc src/driver/build_info.cc)\n"
        "file(GLOB MINI_OPS ${CMAKE_CURRENT_SOURCE_DIR}/src/ops/*.cc)\n"
        "list(APPEND COMPILER_SRCS ${MINI_OPS})")
    (root / "CMakeLists.txt").write_text(lists)
    for i in range(count):
        path = root / "src" / "ops" / f"op_{i}.cc"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(OP_SOURCE.format(i=i))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{count} operators")
    return git(root, "rev-parse", "HEAD")


def make_history(root: Path, commits: int = 64, culprit: int = 41, python_every: int = 3,
                 broken: range = range(0), sources: int = 0) -> list[str]:
    """``commits`` commits after a good base; returns shas (index 0 = base, good).

    Commit ``culprit`` breaks TVMMiniAdd; every ``python_every``-th commit touches only
    Python; commits in ``broken`` do not compile (up to the next C++ commit, which fixes it);
    ``sources`` extra C++ files in the base make a clean build cost more than an incremental.
    """
    make_minifork(root)
    if sources:
        add_operator_sources(root, sources)
    shas = [git(root, "rev-parse", "HEAD")]
    for i in range(1, commits + 1):
        if i in broken:
            sha = commit_file(root, "src/ir/module.cc", f"int MiniModuleFunctions() {{ return }} // {i}\n",
                              f"step {i}: broken C++")
        elif i == culprit:
            sha = commit_file(root, "src/runtime/device_api.cc", ADD_BAD, f"step {i}: faster add")
        elif python_every and i % python_every == 0:
            sha = add_python_commit(root, f"# step {i}\n", f"step {i}: python only")
        else:
            sha = commit_file(root, "src/ir/module.cc",
                              f"#include <tvm/mini.h>\n\nint MiniModuleFunctions() {{ return {i + 100}; }}\n",
                              f"step {i}: C++")
        shas.append(sha)
    return shas


def checkout_fingerprint(repo: Path) -> str:
    """HEAD, branches, index and every file of the working tree (tracked or not), hashed."""
    h = hashlib.sha256()
    for args in (["rev-parse", "HEAD"], ["for-each-ref"], ["status", "--porcelain", "-uall"],
                 ["stash", "list"]):
        h.update(subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                                text=True).stdout.encode())
    h.update((repo / ".git" / "index").read_bytes())
    h.update((repo / ".git" / "HEAD").read_bytes())
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if rel.parts[0] == ".git" or not path.is_file():
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Make a miniature TVM fork whose history breaks TVMMiniAdd at one commit.")
    parser.add_argument("path", type=Path)
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--culprit", type=int, default=11)
    args = parser.parse_args()
    if not 0 < args.culprit <= args.commits:
        parser.error("--culprit must be one of the commits, 1..--commits")
    if args.path.exists() and any(args.path.iterdir()):
        parser.error(f"{args.path} is not empty")
    shas = make_history(args.path, commits=args.commits, culprit=args.culprit)
    print(f"made {args.path}: {args.commits} commits after a good base; step {args.culprit} "
          f"({shas[args.culprit][:10]}) breaks TVMMiniAdd")
    print(f"check: {CHECK}")
