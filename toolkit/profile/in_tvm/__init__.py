"""profile's half inside the TVM under test: ``measure`` times every VM call of a compiled
workload here (``remote``: on an RPC server's device), ``timing`` and ``devtimer`` take the
times, ``cost`` says what each kernel is. What they return is plain data
(``toolkit.profile.records``); the report is made on the host side."""
