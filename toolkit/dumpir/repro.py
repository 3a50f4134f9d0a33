"""``DIR/repro.py``: rerun the pass that raised, on the module exactly as it received it.

The script depends on nothing but the TVM that failed, so it can go into a bug report with
``failed/``. The modules are saved as TVMScript and parsed back (``save_json`` was seen to
segfault on the 0.27 wheel). A pass TVM can build by name with no arguments runs alone;
any other (dlight's ApplyDefaultSchedule, a user's own pass) is reproduced by rerunning the
compile from its input, which reaches the same pass with the same module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolkit import compat
from toolkit import target as targets
from toolkit.dumpir.store import write_atomic

HEADER = '''\
"""Reproduce: TVM pass {name!r} raised during `tk dump-ir` for target {target_spec!r}.

{how}
Usage: python repro.py   (exits non-zero with TVM's error while the bug is there)
"""

import json
import pathlib

import tvm
import tvm.script

HERE = pathlib.Path(__file__).resolve().parent
target = tvm.target.Target(json.loads({target_json!r}))
config = json.loads({config_json!r})


def load(name):
    return tvm.script.from_source((HERE / "failed" / name).read_text())


'''

SINGLE_PASS = '''\
mod = load("input.py")  # the module as {name} received it
with target, tvm.transform.PassContext(opt_level=3, config=config):
    {factory}(mod)
print("pass {name} ran without raising on this TVM")
'''

WHOLE_COMPILE = '''\
mod = load("compile_input.py")  # what the compile started from; {name} received failed/input.py
with tvm.transform.PassContext(opt_level=3, config=config):
    tvm.compile(mod, target=target)
print("the compile (and pass {name}) ran without raising on this TVM")
'''


def write_repro(
    directory: Path, pass_name: str, target_spec: str, pass_config: dict[str, Any] | None,
) -> Path:
    factory = compat.pass_factory(pass_name)
    if factory is not None:
        how = "Runs only that pass on the module it received (failed/input.py)."
        body = SINGLE_PASS.format(name=pass_name, factory=factory.removesuffix("()") + "()")
    else:
        how = (f"TVM has no argument-free constructor named {pass_name!r}, so this reruns the\n"
               "compile from its input (failed/compile_input.py); the pass received\n"
               "failed/input.py.")
        body = WHOLE_COMPILE.format(name=pass_name)
    text = HEADER.format(
        name=pass_name, target_spec=target_spec, how=how,
        target_json=json.dumps(_target_dict(target_spec)),
        config_json=json.dumps(pass_config or {}),
    ) + body
    path = directory / "repro.py"
    write_atomic(path, text.encode())
    return path


def _target_dict(target_spec: str) -> dict[str, Any]:
    return _plain(targets.to_tvm(target_spec).export())


def _plain(value: Any) -> Any:
    """TVM's Map/Array/String as JSON-able Python values."""
    if isinstance(value, (bool, int, float)):
        return value
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "Array":
        return [_plain(v) for v in value]
    return str(value)
