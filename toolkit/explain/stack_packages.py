"""A script uses an API of a package built on TVM (TileLang, MLC-LLM, tvm-ffi) that the
installed release of that package does not have.

Examples and tutorials in these projects' repositories follow their main branch, which runs
ahead of the last release on PyPI: ``module 'tilelang.language' has no attribute 'Tensor'``
from the user's own script is the installed release predating the example.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

# The importable package -> (its distribution, how a newer build is installed).
PACKAGES = {
    "tilelang": ("tilelang", "pip install -U tilelang, its nightly wheels, or pip install -e . "
                 "in a clone of its main branch"),
    "mlc_llm": ("mlc-llm", "install the nightly MLC wheels MLC-LLM's docs name for your "
                "platform, or build it from its main branch"),
    "tvm_ffi": ("apache-tvm-ffi", "pip install -U apache-tvm-ffi"),
}
_FRAME = re.compile(r"File \"(?P<file>[^\"]+)\", line \d+")


def missing_api(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``module 'tilelang.language' has no attribute 'Tensor'`` raised in the user's code."""
    module, attr = groups.get("mod", ""), groups.get("attr", "")
    top = module.split(".", 1)[0]
    if top not in PACKAGES:
        return NOT_THIS
    frames = _FRAME.findall(text[:text.find(f"has no attribute '{attr}'")])
    if frames and f"/{top}/" in frames[-1].replace("\\", "/"):
        return NOT_THIS  # raised inside the package itself: a mismatch of its own dependencies
    dist, install = PACKAGES[top]
    where = f" ({frames[-1]})" if frames else ""
    return (f"the script{where} uses {module}.{attr}, which the installed {dist} does not "
            f"have: the script (an example or tutorial) was written for another {dist} "
            f"release, most often a newer one than the installed release ({dist}'s examples "
            "follow its main branch, ahead of the last release).",
            f"compare {top}.__version__ with the release the script is from, then install a "
            f"newer {dist} ({install}), or use the examples of the installed release's tag")
