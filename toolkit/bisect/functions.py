"""Function bisection, host side: run ``python -m toolkit.tvm_side.funcs`` in the build's
environment and render what it found - the kernel whose code breaks the check, the first
pass where its good and bad texts part, the IR diff, and a command that reproduces it.

The search itself (swapping good PrimFuncs into the bad module, half at a time) runs inside
the TVM under test; see ``toolkit.tvm_side.funcs``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolkit.errors import TkError, UserError
from toolkit.process import FUNCS_RESULT_MARKER


def run(workload: str, target: str, good_pipeline: str, *, env: dict[str, str] | None = None,
        rtol: float = 1e-3, atol: float = 1e-4, timeout: float | None = None) -> dict[str, Any]:
    env = dict(env if env is not None else os.environ)
    root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([p for p in [env.get("PYTHONPATH", ""), root] if p])
    argv = [sys.executable, "-m", "toolkit.tvm_side.funcs", "--workload", workload,
            "--target", target, "--good-pipeline", good_pipeline, "--rtol", str(rtol),
            "--atol", str(atol)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TkError(f"function bisection of {workload} took more than {timeout:g}s") from None
    for line in proc.stdout.splitlines():
        if line.startswith(FUNCS_RESULT_MARKER):
            out = json.loads(line[len(FUNCS_RESULT_MARKER):])
            if "error" in out:
                raise (UserError if out["user_error"] else TkError)(out["error"])
            out["reproduce"] = reproduce_command(out)
            return out
    last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
    raise TkError(f"the function bisection process for {workload} died (exit "
                  f"{proc.returncode}){': ' + last[0][:300] if last else ''}")


def reproduce_command(r: dict[str, Any]) -> str:
    cmd = (f"tk bisect functions {shlex.quote(r['workload'])} --target "
           f"{shlex.quote(r['target'])} --good-pipeline {shlex.quote(r['good_pipeline'])}")
    if r.get("pass_name"):
        name = shlex.quote(r["pass_name"])
        cmd += (f"\ntk dump-ir {shlex.quote(r['workload'])} --target {shlex.quote(r['target'])}"
                f" -o ir-dump --passes {name} && tk dump-ir show ir-dump --pass {name} --diff")
    return cmd


def markdown(r: dict[str, Any]) -> str:
    lines = []
    if r.get("kernel"):
        lines += [f"# Bad kernel: {r['kernel']}", "",
                  f"- Workload `{r['workload']}` on `{r['target']}` (TVM {r['tvm']}): its own "
                  f"pipeline gives outputs that {r['detail']}; with the good pipeline "
                  f"`{r['good_pipeline']}`'s {r['kernel']} swapped in, they match."]
    elif r.get("candidates"):
        lines += ["# Bad kernels: only together", "",
                  f"- {', '.join(r['candidates'])}: {r['stop_reason']}"]
    else:
        lines += [f"# Function bisection {r['status']}", "", f"- {r['stop_reason']}"]
    lines.append(f"- {len(r['differing'])} kernels differ between the good and bad lowering "
                 f"({', '.join(r['differing']) or 'none'}); {len(r['probes'])} hybrids built")
    if r.get("unswappable"):
        lines.append("- Not swappable (absent from the good lowering, or called with other "
                     f"arguments there): {', '.join(r['unswappable'])}")
    if r.get("pass_name"):
        lines += [f"- First pass where the kernels part: {r['pass_name']} (after it, "
                  f"{', '.join(r['pass_kernels'])} differ)", "",
                  "```diff", r["diff"].rstrip(), "```"]
    lines += ["", "Reproduce:", "", "```sh", r["reproduce"], "```"]
    return "\n".join(lines) + "\n"
