"""``DIR/repro.py``: rerun the pass that failed (raised, or crashed the process), on the
module exactly as it received it.

The script depends on nothing but the TVM that failed (and the workload file, when the pass
is the user's own), so it can go into a bug report with ``failed/``. Modules are saved as
TVMScript and parsed back (``save_json`` was seen to segfault on the 0.27 wheel).

It tries, in order, until one raises: the pass alone on the module it received - a
``tvm.transform.Pass`` of that name defined in the workload file, else a TVM pass of that name
built without arguments - then the whole compile from its input with the workload's pipeline
(which reaches the same pass, as the user configured it, with the same module). A pass rebuilt
by name may not be the one that ran (``LegalizeOps({...})`` with the user's legalizations is
rebuilt as a plain ``LegalizeOps()``, which does not raise): so an attempt that runs clean hands
over to the next, and the script exits 0 only when nothing reproduced.

``verify`` runs the script the way a user would and says whether it reproduces the failure:
tk points at repro.py only when it does.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolkit.dumpir.store import write_atomic
from toolkit.process import signal_name
from toolkit.stack import compat
from toolkit.stack import target as targets

# Text from outside (pass name, workload path, target) enters the script only as Python
# literals made by repr()/json (never inside the docstring): a workload file may be named
# 'x"""; __import__("os").system(...); """.py'.
TEMPLATE = '''\
"""Reproduce: the pass PASS_NAME failed during `tk dump-ir WORKLOAD_SOURCE` for TARGET_SPEC.

Runs only that pass on the module it received (failed/input.py) when the pass can be built
here, then, if that runs clean, the compile from its input (failed/compile_input.py).
Usage: python repro.py   (exits non-zero with the pass's error, or dies as it did, while
the bug is there)
"""

import json
import pathlib
import runpy

import tvm
import tvm.script

HERE = pathlib.Path(__file__).resolve().parent
PASS_NAME = {name!r}
WORKLOAD_SOURCE = {workload!r}
TARGET_SPEC = {target_spec!r}
WORKLOAD = {workload_file!r}  # the workload's .py file, when it was one
target = tvm.target.Target(json.loads({target_json!r}))
config = json.loads({config_json!r})


def load(name):
    return tvm.script.from_source((HERE / "failed" / name).read_text())


def workload_namespace():
    return runpy.run_path(WORKLOAD) if WORKLOAD and pathlib.Path(WORKLOAD).exists() else {{}}


def build_pass(namespace):
{factory}
    for value in namespace.values():
        if isinstance(value, tvm.transform.Pass) and value.info.name == PASS_NAME:
            return value
    return None


namespace = workload_namespace()
build = getattr(tvm, "compile", None) or tvm.relax.build  # relax.build before 0.19
pipeline = namespace.get("pipeline")
extra = {{"relax_pipeline": pipeline}} if pipeline is not None else {{}}
attempts = []
the_pass = build_pass(namespace)
if the_pass is not None:
    attempts.append((f"only {{PASS_NAME}} on failed/input.py",
                     lambda: the_pass(load("input.py"))))
attempts.append(("the compile from failed/compile_input.py",
                 lambda: build(load("compile_input.py"), target=target, **extra)))
for what, attempt in attempts:
    print(f"running {{what}}", flush=True)
    with target, tvm.transform.PassContext(opt_level=3, config=config):
        attempt()  # the failure, when it is still there, ends the script here (exit 1)
    print(f"{{what}} ran without raising", flush=True)
print(f"{{PASS_NAME}}'s failure did not reproduce on this TVM")
'''


_FACTORY = re.compile(r"tvm(\.[A-Za-z_]\w*)+\(\)")


def write_repro(
    directory: Path, pass_name: str, workload_source: str, target_spec: str,
    pass_config: dict[str, Any] | None,
) -> Path:
    factory = compat.pass_factory(pass_name)
    if factory is not None and not _FACTORY.fullmatch(factory):
        factory = None  # only ever "tvm.a.b.Name()": anything else is not pasted into code
    factory_code = f"    return {factory}" if factory else "    # not a TVM pass buildable by name"
    workload_file = (
        str(Path(workload_source).resolve()) if workload_source.endswith(".py") else None
    )
    text = TEMPLATE.format(
        name=pass_name, workload=workload_source, target_spec=target_spec,
        workload_file=workload_file, factory=factory_code,
        target_json=json.dumps(_target_dict(target_spec)),
        config_json=json.dumps(pass_config or {}),
    )
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


VERIFY_TIMEOUT_S = 600.0  # a repro reruns at most one compile


def verify(script: Path, message: str) -> str | None:
    """Run ``script`` as a user would (this interpreter, its environment) and say why it does
    not reproduce the failure whose first cause says ``message``; None when it does: it exits
    non-zero and its error output carries that message (its first 100 characters: a long one
    is shortened in the middle)."""
    proc = _run(script)
    if isinstance(proc, str):
        return proc
    if proc.returncode == 0:
        return "it runs without raising here"
    if proc.returncode < 0:
        return f"it was killed by {signal_name(-proc.returncode)}"
    if _words(message.split(" ... ")[0][:100]) not in _words(proc.stderr):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"it fails otherwise: {last[:200]}"
    return None


def verify_crash(script: Path, signum: int) -> str | None:
    """As :func:`verify`, for a pass that killed the process: None when the script dies of
    the same signal."""
    proc = _run(script)
    if isinstance(proc, str):
        return proc
    if proc.returncode == -signum:
        return None
    if proc.returncode == 0:
        return "it runs without crashing here"
    if proc.returncode < 0:
        return f"it was killed by {signal_name(-proc.returncode)}, not {signal_name(signum)}"
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return f"it fails without crashing: {last[:200]}"


def _run(script: Path) -> subprocess.CompletedProcess[str] | str:
    """Run ``script`` as a user would (this interpreter, its environment); why not, if it
    could not be run to its end."""
    try:
        # Absolute: the script runs from its own directory, and ``-o`` may be relative.
        return subprocess.run([sys.executable, str(script.resolve())], capture_output=True,
                              text=True, timeout=VERIFY_TIMEOUT_S, cwd=script.parent)
    except subprocess.TimeoutExpired:
        return f"it ran over {VERIFY_TIMEOUT_S:.0f} s"


def _words(text: str) -> str:
    """Text as a run of words: a cause reads the same however a traceback wrapped it."""
    return " ".join(text.split())
