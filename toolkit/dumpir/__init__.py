"""dump-ir: every pass of a real compile, recorded so a person can see what changed.

A dump directory holds ``index.json`` (one record per pass), ``store.json.gz`` (each
distinct function text once, content-addressed, in one pack), ``index.html`` (the pipeline
as a page), ``.tk-dump`` (the files tk wrote) and, when a pass raised, ``failed/`` +
``repro.py``. :func:`toolkit.tvm_side.dumpir.dump.dump` writes one;
:mod:`toolkit.dumpir.query` reads them.
"""
