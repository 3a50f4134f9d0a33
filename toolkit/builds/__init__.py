"""The build chore: recipes -> plan -> pre-flight -> backend -> store -> post-build check.

``recipes`` resolves what the user asked for (a ``Request``: recipe fragments by their flags,
files, overrides) into a ``BuildPlan``; ``source`` reads the tree (commit,
submodules, build key); ``preflight`` checks the host before anything runs; ``backends``
run CMake and Ninja natively or in a container (``image`` makes its toolchain image);
``store`` keeps finished builds by plan hash + tree key (``gc`` packs and collects what no one
uses); ``record`` is what a build was, ``report`` renders it; ``python`` builds the tree's tvm-ffi
package; ``driver`` ties them together. (Named ``builds``, not ``build``: tools take a folder
called build for output.)
"""
