"""TileLang's LayoutInference pass finds no layout for a fragment (register) buffer.

A ``local.fragment`` buffer is spread over a block's threads by a layout that TileLang infers
from the ops touching it (T.gemm, T.reduce_*, T.copy, T.Parallel loops). Its
src/transform/layout_inference.cc stops in two ways: a fragment no op gave a layout ("The layout
for fragment X can not be inferred correctly") and a T.Parallel loop for which no candidate
thread layout passed its checks ("no available layout found", where every candidate must cover
the loop evenly over the threads and be proven injective). Both are limits of the inference,
met by valid kernels as often as by wrong ones; newer TileLang releases infer more of them.
"""

from __future__ import annotations

_WAYS_OUT = ("try the newest TileLang (its inference covers more cases from release to "
             "release); otherwise give the buffer its layout yourself (T.annotate_layout), "
             "make the fragment's extents multiples of the block's thread count, or stage the "
             "buffer in shared memory (T.alloc_shared), which needs no fragment layout; if the "
             "kernel is valid, report it to tile-ai/tilelang with the kernel")


def not_inferred(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """Which of LayoutInference's two checks stopped, and the fragment it names."""
    buffer = groups.get("buffer")
    if buffer:
        return (f"TileLang's LayoutInference (src/transform/layout_inference.cc) found no op "
                f"that gives the fragment {buffer} a layout: a fragment is laid out over the "
                "threads by the ops that use it (T.gemm, T.reduce_*, T.copy, T.Parallel "
                "loops), and one only filled or assigned, or used only by ops without a layout "
                "rule on this backend, gets none.", _WAYS_OUT)
    return ("TileLang's LayoutInference (src/transform/layout_inference.cc) tried each "
            "candidate thread layout for a T.Parallel loop over a fragment and none passed: "
            "each must spread the loop evenly over the block's threads and be proven "
            "injective. Known triggers: an extent the thread count does not divide, several "
            "reductions over one fragment, a fused loop domain too large for the prover.",
            _WAYS_OUT)
