#!/bin/sh
# The fork of docs/tk-fork.md's examples, made here in ./tvm: a TVM-shaped tree (the paths of
# TVM's, a few lines in each file), upstream's line on branch upstream/main, and a fork with
# three commits of its own - a Python pass (and the fork's API check), a C++ pass, an IR node
# change - on an older upstream. Fixed names and dates: the same commits on every machine.
set -eu
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
n=0
commit() {  # commit MESSAGE: everything in the tree, a minute after the one before
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2026-08-01T10:$(printf %02d $n):00Z" GIT_COMMITTER_DATE="2026-08-01T10:$(printf %02d $n):00Z"
  git add -A && git commit -q -m "$1"
}
git init -q -b main tvm
cd tvm
mkdir -p python/tvm/relax/transform src/relax/transform include/tvm/ir docs
echo '"""tvm"""' > python/tvm/__init__.py
echo '"""relax"""' > python/tvm/relax/__init__.py
cat > python/tvm/relax/expr_functor.py <<'EOF'
"""Visitors and mutators of Relax expressions."""


def derived_object(cls):
    return cls


class PyExprMutator:
    """A mutator written in Python."""


mutator = derived_object
EOF
cat > python/tvm/relax/transform/__init__.py <<'EOF'
"""Relax passes."""
from .transform import FuseOps
EOF
echo 'def FuseOps(): ...' > python/tvm/relax/transform/transform.py
echo '// FuseOps: fuse operators into kernels.' > src/relax/transform/fuse_ops.cc
printf '%s\n' '#pragma once' 'class CallNode {' ' public:' '  Expr op;' '};' > include/tvm/ir/expr.h
echo '# TVM' > docs/index.md
commit "Relax: passes and expressions"

git checkout -q -b fork
cat > python/tvm/relax/transform/fork_fold_scale.py <<'EOF'
"""ForkFoldScale: the fork's own Relax pass, in Python: x * 1 becomes x."""
import tvm
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _FoldScale(PyExprMutator):
    pass


@tvm.transform.module_pass(opt_level=0, name="ForkFoldScale")
class ForkFoldScale:
    def transform_module(self, mod, ctx):
        return mod
EOF
echo 'from .fork_fold_scale import ForkFoldScale' >> python/tvm/relax/transform/__init__.py
mkdir -p tests/fork
cat > tests/fork/check_api.py <<'EOF'
"""The fork's API check: every name its own modules import from tvm is still defined there."""
import ast
import sys
from pathlib import Path

OWN = ["python/tvm/relax/transform/fork_fold_scale.py"]
missing = []
for own in OWN:
    for node in ast.walk(ast.parse(Path(own).read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tvm."):
            path = Path("python", *node.module.split(".")).with_suffix(".py")
            tree = ast.parse(path.read_text()) if path.is_file() else ast.Module([], [])
            names = {getattr(n, "name", None) for n in tree.body}
            names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
            missing += [f"{node.module}.{a.name}" for a in node.names if a.name not in names]
print("missing in tvm: " + ", ".join(missing) if missing else f"ok: {len(OWN)} modules")
sys.exit(1 if missing else 0)
EOF
commit "[Fork] ForkFoldScale: a Relax pass in Python"
cat > src/relax/transform/fork_tag_calls.cc <<'EOF'
// The fork's Relax pass: attribute fork.num_calls on every function.
Pass ForkTagCalls() { return CreateFunctionPass(pass_func, 0, "ForkTagCalls", {}); }
EOF
commit "[Fork] ForkTagCalls: a Relax pass in C++"
sed -i 's/  Expr op;/  Expr op;  \/\/ and whether the fork pinned it/' include/tvm/ir/expr.h
commit "[Fork] Call nodes remember whether the fork pinned them"

git checkout -q main
echo 'Relax passes: docs.' >> docs/index.md
commit "[Docs] Relax passes"
echo '// and in the right order' >> src/relax/transform/fuse_ops.cc
commit "[Relax] FuseOps keeps the order of its inputs"
sed -i 's/^mutator = derived_object/expr_mutator = derived_object/' python/tvm/relax/expr_functor.py
commit "[Relax] Rename the mutator decorator to expr_mutator"
echo 'More docs.' >> docs/index.md
commit "[Docs] More"
mkdir -p src/tir/transforms && echo '// unroll' > src/tir/transforms/unroll.cc
commit "[TIR] Unroll loops"
git update-ref refs/remotes/upstream/main main
git update-ref refs/remotes/upstream/base main~5
git checkout -q fork
echo "made tvm: branch fork (3 commits of its own) on upstream/base; upstream/main is 5 commits on"
