"""bisect's half inside the TVM under test: the pass-probe server (``passes``) and the
function bisection (``functions``), each started as ``python -m`` in the build's environment.
They import the compile stack, the bottom layer and ``toolkit.bisect.protocol``, nothing else."""
