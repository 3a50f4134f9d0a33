"""dump-ir: every pass of a real compile, recorded so a person can see what changed.

A dump directory holds ``index.json`` (one record per pass), ``store/`` (each distinct
function text once, content-addressed), ``index.html`` (the pipeline as a page) and, when a
pass raised, ``failed/`` + ``repro.py``. :func:`toolkit.tvm_side.dumpir.dump.dump` writes one;
:mod:`toolkit.dumpir.query` reads them.
"""
