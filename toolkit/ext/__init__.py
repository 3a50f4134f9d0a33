"""Out-of-tree TVM extensions: scaffold (``scaffold``), build (``build``), check (``check``)
and the manifest a build leaves beside the library (``manifest``). Loading is
``toolkit.ext.loader``."""
