"""The Relax pipeline that brings __NAME__'s passes into a compile: TVM's own passes with
ours in between. A workload file hands it to tk as ``pipeline`` (see ``workload.py``);
``tvm.compile(mod, target, relax_pipeline=pipeline)`` takes it as it is.

In-tree, this would be an edit of ``python/tvm/relax/pipeline.py``.
"""

import tvm
from tvm import relax

from .transform import CountCalls, CountStores

pipeline = tvm.transform.Sequential(
    [
        CountCalls(),
        relax.pipeline.zero_pipeline(),  # LegalizeOps: Relax operators become PrimFuncs
        CountStores(),
        relax.pipeline.default_build_pipeline(),
    ],
    name="__NAME__.pipeline",
)
