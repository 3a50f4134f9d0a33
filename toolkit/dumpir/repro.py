"""``DIR/repro.py``: rerun only the pass that raised, on the module exactly as it received it.

The script depends on nothing but the TVM that failed, so it can be attached to a bug report
together with ``failed/input.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolkit import compat
from toolkit import target as targets
from toolkit.dumpir.store import write_atomic

TEMPLATE = '''\
"""Reproduce: TVM pass {name!r} raised during `tk dump-ir` for target {target_spec!r}.

Runs only that pass on the module it received ({module}; readable as failed/input.py).
Usage: python repro.py
"""

import json
import pathlib

import tvm

HERE = pathlib.Path(__file__).resolve().parent
mod = tvm.ir.load_json((HERE / {module!r}).read_text())
target = tvm.target.Target(json.loads({target_json!r}))
config = json.loads({config_json!r})


def make_pass():
{make_pass}


with target, tvm.transform.PassContext(opt_level=3, config=config):
    make_pass()(mod)
print("pass {name} ran without raising on this TVM")
'''


def write_repro(
    directory: Path, pass_name: str, module: str, target_spec: str,
    pass_config: dict[str, Any] | None,
) -> Path:
    factory = compat.pass_factory(pass_name)
    if factory is not None:
        make_pass = f"    return {factory}"
    else:
        make_pass = (
            f"    # No argument-free constructor named {pass_name!r} was found in this TVM:\n"
            "    # construct the pass here (it may be your own, or need arguments).\n"
            f"    raise SystemExit('edit make_pass() in repro.py to build {pass_name}')"
        )
    target_json = json.dumps(_target_dict(target_spec))
    text = TEMPLATE.format(
        name=pass_name, target_spec=target_spec, module=module, target_json=target_json,
        config_json=json.dumps(pass_config or {}), make_pass=make_pass,
    )
    path = directory / "repro.py"
    write_atomic(path, text.encode())
    return path


def _target_dict(target_spec: str) -> dict[str, Any]:
    exported = targets.to_tvm(target_spec).export()
    return json.loads(json.dumps(exported, default=str))
