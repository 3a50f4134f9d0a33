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
from dataclasses import dataclass, field, fields
from typing import Any

from toolkit.errors import TkError, UserError
from toolkit.process import FUNCS_RESULT_MARKER, with_toolkit


@dataclass
class FunctionBisection:
    workload: str
    target: str
    good_pipeline: str
    status: str = "done"  # done / stopped
    stop_reason: str | None = None
    differing: list[str] = field(default_factory=list)  # kernels whose good and bad code differ
    # Kernels that cannot be swapped: the good lowering lacks them, or calls them otherwise.
    unswappable: list[str] = field(default_factory=list)
    kernel: str | None = None  # the kernel whose bad code breaks the check
    candidates: list[str] = field(default_factory=list)  # when no single kernel does
    probes: list[dict[str, Any]] = field(default_factory=list)  # swapped kernels -> verdict
    detail: str = ""  # what the check said of the bad compile
    pass_name: str | None = None  # the first pass after which the two sides' kernels differ
    pass_index: int | None = None  # its place among the passes that changed a kernel
    pass_kernels: list[str] = field(default_factory=list)  # kernels differing after it
    diff: str = ""  # good vs bad text of those kernels, after that pass
    tvm: str = ""
    reproduce: str = ""  # commands that reproduce the finding (set on the host side)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FunctionBisection:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def run(workload: str, target: str, good_pipeline: str, *, env: dict[str, str] | None = None,
        rtol: float = 1e-3, atol: float = 1e-4, timeout: float | None = None) -> FunctionBisection:
    env = with_toolkit(dict(env if env is not None else os.environ))
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
            result = FunctionBisection.from_json(out)
            result.reproduce = reproduce_command(result)
            return result
    last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
    raise TkError(f"the function bisection process for {workload} died (exit "
                  f"{proc.returncode}){': ' + last[0][:300] if last else ''}")


def reproduce_command(r: FunctionBisection) -> str:
    cmd = (f"tk bisect functions {shlex.quote(r.workload)} --target "
           f"{shlex.quote(r.target)} --good-pipeline {shlex.quote(r.good_pipeline)}")
    if r.pass_name:
        name = shlex.quote(r.pass_name)
        cmd += (f"\ntk dump-ir {shlex.quote(r.workload)} --target {shlex.quote(r.target)}"
                f" -o ir-dump --passes {name} && tk dump-ir show ir-dump --pass {name} --diff")
    return cmd


def markdown(r: FunctionBisection) -> str:
    lines = []
    if r.kernel:
        lines += [f"# Bad kernel: {r.kernel}", "",
                  f"- Workload `{r.workload}` on `{r.target}` (TVM {r.tvm}): its own "
                  f"pipeline gives outputs that {r.detail}; with the good pipeline "
                  f"`{r.good_pipeline}`'s {r.kernel} swapped in, they match."]
    elif r.candidates:
        lines += ["# Bad kernels: only together", "",
                  f"- {', '.join(r.candidates)}: {r.stop_reason}"]
    else:
        lines += [f"# Function bisection {r.status}", "", f"- {r.stop_reason}"]
    lines.append(f"- {len(r.differing)} kernels differ between the good and bad lowering "
                 f"({', '.join(r.differing) or 'none'}); {len(r.probes)} hybrids built")
    if r.unswappable:
        lines.append("- Not swappable (absent from the good lowering, or called with other "
                     f"arguments there): {', '.join(r.unswappable)}")
    if r.pass_name:
        lines += [f"- First pass where the kernels part: {r.pass_name} (after it, "
                  f"{', '.join(r.pass_kernels)} differ)", "",
                  "```diff", r.diff.rstrip(), "```"]
    lines += ["", "Reproduce:", "", "```sh", r.reproduce, "```"]
    return "\n".join(lines) + "\n"
