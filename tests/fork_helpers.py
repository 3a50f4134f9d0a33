"""A fork made on real apache/tvm history, for the tk fork and tk bisect upstream tests.

The history comes from an apache/tvm git directory named by ``TK_TVM_GIT`` (the search
tool's ``fetch github:apache/tvm`` gives one; any clone holding the commits below will do):
the fork is a ``git clone --shared`` of it (no object is copied), so making one costs a
checkout. Tests skip, saying how to get the history, where there is none.

The fork's shape is a real one: the v0.26.0 release (a branch off main, with the release's
own commits: a version bump and a fix that main also took) plus the fork's own commits - a
Python pass, a C++ pass, a new target with its device, an IR node change, and an API check
of its own - on top of it, with ``upstream/main`` at a later main.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

V026 = "c7b458e946bc4266915da582457476bdcd9705ae"  # tag v0.26.0 (release branch)
BRANCH_POINT = "68ba2b31c2a6d202fcd44e5780ef10ce08721dd5"  # where v0.26.0 left main
MAIN = "5d4dc8721307cf9677becacf0395c19be130e206"  # main, 35 commits after the branch point
RELEASE_BUMP = "f3bff33a0e03665522bf28ed20cfb70df1eac89b"  # conflicts with main's bumps
RELEASE_FIX = "c7b458e946bc4266915da582457476bdcd9705ae"  # main took it as c737bf79fb

PY_PASS = '''"""ForkFoldScale: the fork's own Relax pass, in Python: x * 1 becomes x."""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _FoldScale(PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        one = call.args[1] if len(call.args) == 2 else None
        if (call.op.same_as(tvm.ir.Op.get("relax.multiply")) and isinstance(one, relax.Constant)
                and one.data.numpy().size == 1 and float(one.data.numpy()) == 1.0):
            return call.args[0]
        return call


@tvm.transform.module_pass(opt_level=0, name="ForkFoldScale")
class ForkFoldScale:
    def transform_module(self, mod, ctx):
        folder = _FoldScale(mod)
        for gv, func in mod.functions_items():
            if isinstance(func, relax.Function):
                folder.builder_.update_func(gv, folder.visit_expr(func))
        return folder.builder_.get()
'''

CC_PASS = '''/*!
 * \\file fork_tag_calls.cc
 * \\brief The fork's Relax pass: record on every Relax function how many of its bindings are
 *        calls (attribute `fork.num_calls`).
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ir/transform.h>
#include <tvm/relax/expr.h>
#include <tvm/relax/transform.h>

namespace tvm {
namespace relax {
namespace transform {

Pass ForkTagCalls() {
  auto pass_func = [](Function func, IRModule, PassContext) -> Function {
    int64_t calls = 0;
    if (const auto* seq = func->body.as<SeqExprNode>()) {
      for (const BindingBlock& block : seq->blocks) {
        for (const Binding& binding : block->bindings) {
          const auto* bound = binding.as<VarBindingNode>();
          if (bound && bound->value.as<CallNode>()) ++calls;
        }
      }
    }
    return WithAttr(std::move(func), "fork.num_calls", calls);
  };
  return CreateFunctionPass(pass_func, 0, "ForkTagCalls", {});
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("relax.transform.ForkTagCalls", ForkTagCalls);
}

}  // namespace transform
}  // namespace relax
}  // namespace tvm
'''

CC_PASS_DECL = '''
/*!
 * \\brief The fork's: attribute `fork.num_calls` on every Relax function.
 */
TVM_DLL Pass ForkTagCalls();
'''

PY_WRAPPER = '''

def ForkTagCalls() -> tvm.ir.transform.Pass:  # noqa: N802
    """The fork's: attribute ``fork.num_calls`` on every Relax function."""
    return _ffi_api.ForkTagCalls()  # type: ignore
'''

CODEGEN = '''// The fork's device, forkdev: its target kind and code generator (C source).
#include <tvm/ffi/reflection/registry.h>
#include <tvm/target/target_kind.h>

namespace tvm {
namespace codegen {

TVM_REGISTER_TARGET_KIND("forkdev", kDLExtDev);

ffi::Module BuildForkDev(IRModule mod, Target target);  // emits C, as CodegenC does

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("target.build.forkdev", BuildForkDev);
}

}  // namespace codegen
}  // namespace tvm
'''

DEVICE_API = '''// The fork's device, forkdev: its device API (host memory, one device).
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/device_api.h>

namespace tvm {
namespace runtime {

class ForkDevDeviceAPI final : public DeviceAPI {
  // SetDevice, GetAttr, AllocDataSpace, FreeDataSpace, StreamSync ... as CPUDeviceAPI does.
};

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("device_api.forkdev", []() -> void* {
    static ForkDevDeviceAPI inst;
    return &inst;
  });
}

}  // namespace runtime
}  // namespace tvm
'''

CMAKE_ADD = '''
# The fork's device.
tvm_file_glob(GLOB FORKDEV_SRCS src/backend/forkdev/*/*.cc)
target_sources(tvm_objs PRIVATE ${FORKDEV_SRCS})
'''

CHECK_API = '''"""The fork's API check: every name its own modules import from tvm is still defined there.

Run at the top of the tree (no build needed): python tests/fork/check_api.py
"""

import ast
import sys
from pathlib import Path

OWN = ["python/tvm/relax/transform/fork_fold_scale.py"]


def defined(module):
    base = Path("python", *module.split("."))
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    if not path.is_file():
        return None
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


missing = []
for own in OWN:
    for node in ast.walk(ast.parse(Path(own).read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tvm."):
            names = defined(node.module)
            for alias in node.names:
                if names is None or alias.name not in names:
                    missing.append(f"{own}: {node.module}.{alias.name}")
if missing:
    print("missing in tvm:", *missing, sep="\\n  ")
    sys.exit(1)
print(f"ok: {len(OWN)} modules")
'''

WORKLOAD = '''"""The fork's workload: a layer whose output is scaled by one, compiled through a pipeline
that runs the fork's ForkFoldScale first (tk run / tk dump-ir take ``pipeline`` from here)."""

import tvm
from tvm import relax
from tvm.relax.frontend import nn


class Layer(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return nn.relu(self.fc(x)) * 1.0


model = Layer()
spec = {"forward": {"x": nn.spec.Tensor((2, 16), "float32")}}
pipeline = tvm.transform.Sequential(
    [relax.transform.ForkFoldScale(), relax.pipeline.zero_pipeline(),
     relax.pipeline.default_build_pipeline()], name="fork_pipeline")


def reference(x, w, b):
    import numpy as np

    return np.maximum(x @ w.T + b, 0)
'''

ENV = {"GIT_AUTHOR_NAME": "Fork Dev", "GIT_AUTHOR_EMAIL": "dev@fork.example",
       "GIT_COMMITTER_NAME": "Fork Dev", "GIT_COMMITTER_EMAIL": "dev@fork.example",
       "GIT_AUTHOR_DATE": "2026-08-10T12:00:00Z", "GIT_COMMITTER_DATE": "2026-08-10T12:00:00Z"}


def snapshot(repo: Path) -> dict[str, str]:
    """Every file under ``repo`` - its .git whole, objects included - by content."""
    return {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(repo.rglob("*")) if p.is_file() and not p.is_symlink()}


def unchanged(repo: Path, before: dict[str, str]) -> None:
    after = snapshot(repo)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"the fork's repository changed: {changed[:10]}"


def tvm_git() -> Path:
    """The apache/tvm history (``TK_TVM_GIT``), or the test skips saying how to get one."""
    where = os.environ.get("TK_TVM_GIT")
    if not where:
        pytest.skip("TK_TVM_GIT is not set: name an apache/tvm git directory (a clone, or the "
                    "search tool's fetch github:apache/tvm)")
    path = Path(where)
    probe = subprocess.run(["git", f"--git-dir={path}", "cat-file", "-e", f"{MAIN}^{{commit}}"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{path} does not hold apache/tvm {MAIN[:10]} (fetch a newer history)")
    return path


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
    return subprocess.run(["git", "-c", "advice.detachedHead=false", *args], cwd=repo,
                          check=True, capture_output=True, text=True, input=input,
                          env={**os.environ, **ENV, **(env or {})}).stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str], append: dict[str, str] | None = None,
           replace: dict[str, tuple[str, str]] | None = None) -> str:
    """Write ``files``, append to ``append``'s files, replace text in ``replace``'s; commit."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for rel, text in (append or {}).items():
        (repo / rel).write_text((repo / rel).read_text() + text)
    for rel, (old, new) in (replace or {}).items():
        body = (repo / rel).read_text()
        assert old in body, (rel, old)
        (repo / rel).write_text(body.replace(old, new, 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_fork(path: Path, base: str = V026, only_python: bool = False) -> dict[str, str]:
    """The fork at ``path`` (branch ``fork`` checked out, ``upstream/main`` at ``MAIN``): its
    own commits on ``base``, by name -> sha (``only_python``: the Python pass alone)."""
    history = tvm_git()
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(history), str(path)],
                   check=True, capture_output=True)
    git(path, "update-ref", "refs/remotes/upstream/main", MAIN)
    git(path, "checkout", "-q", "-b", "fork", base)
    t = "python/tvm/relax/transform/"
    shas = {"base": base}
    shas["python_pass"] = commit(path, "[Fork] ForkFoldScale: a Relax pass in Python", {
        f"{t}fork_fold_scale.py": PY_PASS,
        "tests/fork/check_api.py": CHECK_API,
        "tests/fork/workload.py": WORKLOAD,
    }, append={f"{t}__init__.py": "from .fork_fold_scale import ForkFoldScale\n"})
    if only_python:
        return shas
    shas["cpp_pass"] = commit(path, "[Fork] ForkTagCalls: a Relax pass in C++", {
        "src/relax/transform/fork_tag_calls.cc": CC_PASS,
    }, append={f"{t}transform.py": PY_WRAPPER}, replace={"include/tvm/relax/transform.h": (
        "\n}  // namespace transform\n}  // namespace relax",
        CC_PASS_DECL + "\n}  // namespace transform\n}  // namespace relax")})
    shas["target"] = commit(path, "[Fork] forkdev: a new target and its device", {
        "src/backend/forkdev/codegen/codegen_forkdev.cc": CODEGEN,
        "src/backend/forkdev/runtime/forkdev_device_api.cc": DEVICE_API,
    }, append={"CMakeLists.txt": CMAKE_ADD})
    shas["ir_node"] = commit(path, "[Fork] Call nodes remember whether the fork pinned them", {},
                             replace={"include/tvm/ir/expr.h": (
                                 "  ffi::Array<Type> ty_args;\n",
                                 "  ffi::Array<Type> ty_args;\n  /*! \\brief The fork's. */\n"
                                 "  bool fork_pinned = false;\n")})
    return shas


@dataclass(frozen=True)
class Edit:
    """A planted upstream commit: after the ``at``-th commit of main's line from the branch
    point, ``old`` becomes ``new`` in ``path`` (the first occurrence)."""

    at: int
    path: str
    old: str
    new: str
    message: str


def plant(repo: Path, edits: list[Edit]) -> tuple[list[str], str]:
    """Upstream's first-parent line from the branch point to MAIN with commits planted in it:
    each edit is a commit of its own, and every real commit after it is made again on top with
    the edit in its tree (the edited files are ones the real commits do not touch). Returns
    the planted commits (in the order of ``edits``) and the new tip."""
    line = git(repo, "rev-list", "--reverse", "--first-parent", f"{BRANCH_POINT}..{MAIN}").split()
    index = repo / ".git" / "tk-plant-index"
    env = {"GIT_INDEX_FILE": str(index)}
    texts: dict[str, str] = {}  # path -> its text as edited so far
    planted: dict[int, str] = {}
    tip = line[min(e.at for e in edits) - 1]

    def again(sha: str, edit: Edit | None) -> str:
        git(repo, "read-tree", f"{sha}^{{tree}}", env=env)
        for path, text in texts.items():
            blob = git(repo, "hash-object", "-w", "--stdin", input=text)
            git(repo, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
        who = git(repo, "show", "-s", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI", sha)
        an, ae, ad, cn, ce, cd = who.split("\x00")
        if edit is not None:
            an, ae, cn, ce = "Planted", "planted@example.com", "Planted", "planted@example.com"
        body = edit.message if edit else git(repo, "show", "-s", "--format=%B", sha)
        return git(repo, "commit-tree", tree, "-p", tip, input=body, env={
            **env, "GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
            "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd})

    for i in range(min(e.at for e in edits), len(line) + 1):
        for k, edit in enumerate(edits):
            if edit.at != i:
                continue
            assert not git(repo, "log", "--format=%h", f"{BRANCH_POINT}..{MAIN}", "--",
                           edit.path), edit.path
            text = texts.get(edit.path) or git(repo, "show", f"{line[i - 1]}:{edit.path}") + "\n"
            assert edit.old in text, (edit.path, edit.old)
            texts[edit.path] = text.replace(edit.old, edit.new, 1)
            tip = planted[k] = again(line[i - 1], edit)
        if i < len(line):
            tip = again(line[i], None)
    index.unlink()
    return [planted[k] for k in range(len(edits))], tip


# -- the miniature fork, with passes ----------------------------------------------------------
# The minifork (tests/minifork.py) builds in seconds; this gives it what an out-of-tree pass
# needs from TVM: passes that are tvm-ffi global functions (mini.transform.<Name>, a module of
# numbers as text in and out), the header they are written against, TVM_VERSION, and a
# libtvm linked to the apache-tvm-ffi of this Python - what tk ext build checks and links.

MINI_PASS_H = '''#pragma once
// Passes of the miniature TVM: a pass turns a module (numbers, as text "1,2,3") into another
// and is the tvm-ffi global function "mini.transform.<Name>", as TVM's passes are globals.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <sstream>
#include <string>
#include <vector>

namespace tvm {
namespace transform {

inline std::vector<long> Parse(const std::string& text) {
  std::vector<long> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stol(item));
  return out;
}

inline std::string Print(const std::vector<long>& values) {
  std::string out;
  for (long v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace transform
}  // namespace tvm
'''

MINI_IDENTITY = '''#include <tvm/ir/transform.h>

namespace {
tvm::ffi::String Identity(tvm::ffi::String module) { return module; }
}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("mini.transform.Identity", Identity);
}
'''

MINI_TRANSFORM_PY = '''"""Passes of the miniature TVM: tvm-ffi globals mini.transform.<Name>."""

import tvm_ffi


def run(name, module):
    return str(tvm_ffi.get_global_func(f"mini.transform.{name}")(module))


def Identity(module):  # noqa: N802
    return run("Identity", module)
'''

MINI_DOUBLE = '''// The fork's pass: every number of the module doubled.
#include <tvm/ir/transform.h>

namespace tvm {
namespace transform {

ffi::String DoubleAll(ffi::String module) {
  std::vector<long> values = Parse(module);
  for (long& v : values) v *= 2;
  return Print(values);
}

}  // namespace transform
}  // namespace tvm

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("mini.transform.DoubleAll", tvm::transform::DoubleAll);
}
'''

MINI_DOUBLE_PY = '''

def DoubleAll(module):  # noqa: N802 - the fork's
    return run("DoubleAll", module)
'''

# The fork's check: its pass doubles (exit 1 when it does not, or is not there).
MINI_CHECK = ("python -c \"import sys, tvm; "
              "sys.exit(0 if tvm.relax.transform.DoubleAll('1,2,3') == '2,4,6' else 1)\"")


def ffi_cmake_dir() -> str:
    import sys

    return subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--cmakedir"], check=True,
                          capture_output=True, text=True).stdout.strip()


def make_mini_fork(path: Path) -> dict[str, str]:
    """The minifork with passes (upstream: branch ``upstream``) and a fork (branch ``fork``,
    checked out) whose own commit adds a C++ pass and its Python wrapper."""
    from minifork import git as mgit
    from minifork import make_minifork

    make_minifork(path)
    shas = {"mini": mgit(path, "rev-parse", "HEAD")}
    init = (path / "python/tvm/__init__.py").read_text()
    lists = (path / "CMakeLists.txt").read_text() + (
        f'\nset(tvm_ffi_ROOT "{ffi_cmake_dir()}")\nfind_package(tvm_ffi CONFIG REQUIRED)\n'
        "file(GLOB MINI_PASSES ${CMAKE_CURRENT_SOURCE_DIR}/src/relax/transform/*.cc)\n"
        "target_sources(tvm PRIVATE ${MINI_PASSES})\n"
        "target_link_libraries(tvm PUBLIC tvm_ffi::shared)\n")
    files = {
        "CMakeLists.txt": lists,
        "include/tvm/runtime/base.h": '#pragma once\n#define TVM_VERSION "0.0.1"\n',
        "include/tvm/ir/transform.h": MINI_PASS_H,
        "src/relax/transform/identity.cc": MINI_IDENTITY,
        "python/tvm/relax/__init__.py": "from . import transform  # noqa: F401\n",
        "python/tvm/relax/transform.py": MINI_TRANSFORM_PY,
        "python/tvm/__init__.py": init.replace(
            "import ctypes\n", "import ctypes\n\nimport tvm_ffi  # noqa: F401 - libtvm links it\n"
        ).replace("from . import runtime, support", "from . import relax, runtime, support"),
    }
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    mgit(path, "add", "-A")
    mgit(path, "commit", "-q", "-m", "passes: tvm-ffi globals mini.transform.*")
    shas["upstream"] = mgit(path, "rev-parse", "HEAD")
    mgit(path, "branch", "upstream")
    mgit(path, "checkout", "-q", "-b", "fork")
    (path / "src/relax/transform/double_all.cc").write_text(MINI_DOUBLE)
    with (path / "python/tvm/relax/transform.py").open("a") as f:
        f.write(MINI_DOUBLE_PY)
    mgit(path, "add", "-A")
    mgit(path, "commit", "-q", "-m", "[Fork] DoubleAll: a pass in C++")
    shas["cpp_pass"] = mgit(path, "rev-parse", "HEAD")
    return shas
