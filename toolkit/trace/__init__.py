"""trace: where one compile spends its time (``tk trace``).

``in_tvm.record`` compiles a workload through the hosted stack with its seams attached and
returns the spans (``spans``); ``report`` turns spans into a Chrome/Perfetto trace and the
terminal's tables.
"""
