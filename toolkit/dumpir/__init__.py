"""dump-ir: every pass of a real compile, recorded so a person can see what changed.

A dump directory holds ``index.json`` (one record per pass), ``store.json.gz`` (each
distinct function text once, content-addressed, in one pack), ``index.html`` (the pipeline
as a page), ``.tk-dump`` (the files tk wrote) and, when a pass raised, ``failed/`` +
``repro.py``. ``in_tvm.dump.dump`` writes one inside the TVM under test (``in_tvm.recorder`` records each
pass, ``in_tvm.repro`` writes the repro); the host side reads them: ``query`` (show, find,
diff), ``html`` (the page), ``directory`` and ``index``/``store`` (the files), ``normalise``
(what a cross-version diff ignores).
"""
