"""A TorchScript graph made by ``torch.jit.script`` given to a TVM frontend that reads traced ones.

TVM's PyTorch frontends (relay/frontend/pytorch.py ``from_pytorch``) convert the graph
``torch.jit.trace`` records: tensor operations only, Python control flow already run. A
scripted graph keeps the Python: identity tests on Optionals (``aten::__is__``), the
refinement that follows them (``prim::unchecked_cast``), string formatting for error
messages (``aten::format``), ``raise`` (``prim::RaiseException``). Those ops have no
converter in any release because a traced graph never holds them; their presence in the
frontend's list of missing operators says which kind of graph it got.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

# Emitted by TorchScript's compiler (torch/csrc/jit/frontend/ir_emitter.cpp) for Python
# constructs tracing runs away: `is`/`is not`, Optional refinement, f-strings/str.format,
# raise, isinstance, warnings.warn, variables bound on one branch only.
SCRIPT_ONLY = ("aten::__is__", "aten::__isnot__", "prim::unchecked_cast", "aten::format",
               "prim::RaiseException", "prim::isinstance", "aten::warn", "prim::Uninitialized",
               "prim::unchecked_unwrap_optional")
_OP = re.compile(r"(?:aten|prim)::\w+")


def scripted_graph(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``The following operators are not implemented: [...]`` naming script-only ops."""
    ops = _OP.findall(groups.get("ops", ""))
    scripted = [op for op in ops if op in SCRIPT_ONLY]
    if not scripted:
        return NOT_THIS
    return (f"the frontend was given a torch.jit.script (scripted) graph: {', '.join(scripted)} "
            f"appear only in scripted graphs, where TorchScript keeps Python's `is` tests, "
            f"Optional refinements, string formatting and raise; TVM's PyTorch frontend "
            f"converts traced graphs (torch.jit.trace), which hold tensor operations only, so "
            f"no release converts these.",
            "trace the model instead (torch.jit.trace(model.eval(), example_inputs)) and give "
            "the traced module to the frontend; where a tool scripted it for you (torchdynamo "
            "falling back to scripting), make the model traceable")
