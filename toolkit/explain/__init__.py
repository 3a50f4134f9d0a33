"""What a TVM failure means and what to do about it.

- :mod:`toolkit.cause`: the first cause of any failure, read from an exception or a
  log (tracebacks, ScheduleErrors, CMake, Ninja, nvcc); every failure tk reports goes
  through it.
- :mod:`toolkit.explain.rules`: the corpus of known failures, each with a cause and a fix.
- :mod:`toolkit.explain.match`: finding the corpus's failures in a log in linear time.
- :mod:`toolkit.explain.last`: the log of tk's last failure, for ``tk explain --last``.

Host-side safe: no tvm import here, so build, bisect and doctor route their logs through it.
"""

from toolkit.cause import Cause, first_cause, one_line
from toolkit.explain.match import Finding, best, explain, hint, pick
from toolkit.explain.rules import RULES, Rule

__all__ = ["RULES", "Cause", "Finding", "Rule", "best", "explain", "first_cause", "hint",
           "one_line", "pick"]
