"""Out-of-tree TVM extensions: scaffold (``scaffold``), build (``compile``, against a tree's or
a wheel's headers: ``headers``; a wheel of one: ``wheel``), check (``check``) and the manifest a
build leaves beside the library (``manifest``). ``loader`` puts extension libraries into this
process's TVM in the right order, or refuses with the reason; it is the one host module that
imports tvm."""
