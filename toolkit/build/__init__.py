"""The build chore: recipes -> plan -> pre-flight -> backend -> store -> post-build check.

``recipes`` resolves TOML fragments into a ``BuildPlan``; ``source`` reads the tree (commit,
submodules, build key); ``preflight`` checks the host before anything runs; ``backends``
run CMake and Ninja natively or in a container (``image`` makes its toolchain image);
``store`` keeps finished builds by plan hash + tree key; ``driver`` ties them together.
"""
