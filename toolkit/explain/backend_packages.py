"""A TVM module imports, as it is imported, a package that no TVM release lists among its
requirements: the dependency of one backend or integration (Vitis AI's ``pyxir``, a vendor
SDK's Python bindings), installed on its own as that backend's guide says. pip never installs
it with TVM, so ``No module named 'X'`` raised at ``import X`` in TVM's file means the
backend's package is missing, not that TVM is broken.
"""

from __future__ import annotations

import re

from toolkit.explain import toolchain
from toolkit.explain.frames import frames_with_code, tvm_python_tail
from toolkit.explain.refine import NOT_THIS

_IMPORT = re.compile(r"(?:import|from) (?P<imported>[\w.]+)")
FRAMES_BEHIND = 2000  # characters above the message searched for the frame that raised it


def unlisted(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``File ".../tvm/contrib/target/vitis_ai.py", line 20, in <module>`` / ``import pyxir``
    / ``No module named 'pyxir'``: the innermost frame above the message is TVM's import."""
    package = groups.get("pkg", "")
    top = package.split(".")[0]
    at = text.find(f"No module named '{package}'")
    # TVM's frames above the message whose source line is an import statement
    frames = [(tail, m.group("imported")) for path, code in
              frames_with_code(text, max(0, at - FRAMES_BEHIND), max(at, 0))
              if (tail := tvm_python_tail(path)).startswith("tvm/")
              and (m := _IMPORT.match(code))]
    if not frames or frames[-1][1].split(".")[0] != top:
        return NOT_THIS  # no TVM frame importing it right above the message
    if top in ("tvm", "tvm_ffi") or top in toolchain.PYTHON_DEPENDENCIES \
            or toolchain.requirements(top):
        return NOT_THIS  # TVM's own modules (the history) or its requirements (their table)
    module = frames[-1][0].removesuffix(".py").replace("/", ".")
    file = "python/" + frames[-1][0]
    return (f"TVM's {file} imports {top} as it is imported, and {top} is not installed: no TVM "
            f"release lists {top} among its requirements (tk's table of python/setup.py, "
            "gen_requirements.py, pyproject.toml), so pip never installs it with TVM; it is the "
            f"dependency of the backend or integration {file} belongs to.",
            f"install {top} as that backend's guide says (it may not be on PyPI: Vitis AI's "
            "pyxir comes from its own repository and docker image), in the interpreter that "
            f"runs TVM; or do not import {module} "
            "where the backend is not used")
