"""Commit, pass and function bisection: find the commit, then the pass or the kernel, that
broke a check.

The protocol between tk and a check is git's, made stricter (``protocol``, with the pass and
function probe servers'): a check is a command run in the build's environment inside a
dedicated worktree; its exit status (or its output, with ``--regress match:REGEX``) says good,
bad or skip; 126/127 mean the command itself is broken and stop the bisect instead of
poisoning it. The search (``search``), the saved state (``state``), the worktree
(``worktree``), the verdicts and those already known (``verdicts``), the step runner
(``runner``), the builds of each step (``artifacts``), a whole bisection (``session``) and
the report (``report``) are separate pieces so each can be tested on its own. ``passes`` and
``functions`` bisect the pass pipeline and the kernels of one build: they drive servers that
run inside the TVM under test (``in_tvm``); nothing else here imports tvm.
"""
