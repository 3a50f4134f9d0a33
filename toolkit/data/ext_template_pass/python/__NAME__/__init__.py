"""__NAME__: out-of-tree TVM compiler passes (a Relax pass and a TIR pass) in Python.

Registered with TVM's pass infrastructure by its decorators, under the names
``__NAME__.TagRelaxFunctions`` and ``__NAME__.TagPrimFuncs``: they run in a
``tvm.transform.Sequential`` / ``tvm.compile(..., relax_pipeline=...)`` like TVM's own, and
``tk dump-ir`` records them like TVM's own. Nothing here imports tk.
"""

from .pipeline import pipeline
from .relax_passes import TagRelaxFunctions
from .tir_passes import TagPrimFuncs

__all__ = ["TagRelaxFunctions", "TagPrimFuncs", "pipeline"]
