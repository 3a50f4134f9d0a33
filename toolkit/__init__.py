"""tk: a build-and-debug toolkit for Apache TVM and its forks.

Host-side modules (recipes, builders, git, docker, reports) never import tvm at module
level; target-side modules (stack, dumpir, profile runners) import it lazily, so that
``tk --help`` and build/bisect work never map a libtvm into the tk process.
"""

__version__ = "0.1.0"
