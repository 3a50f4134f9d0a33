"""Commit and pass bisection: find the commit, then the pass, that broke a check.

The protocol between tk and a check is git's, made stricter (see ``verdict``): a check is a
command run in the build's environment inside a dedicated worktree; its exit status (or its
output, with ``--regress match:REGEX``) says good, bad or skip; 126/127 mean the command
itself is broken and stop the bisect instead of poisoning it. The search (``search``), the
saved state (``state``), the worktree (``worktree``), the step runner (``runner``) and the
report (``report``) are separate pieces so each can be tested on its own; ``passes``
bisects the pass pipeline of one build. Host side only: nothing here imports tvm except
``passes``, which runs inside the TVM under test.
"""
