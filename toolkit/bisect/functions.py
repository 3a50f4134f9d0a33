"""Function bisection, host side: run ``python -m toolkit.bisect.in_tvm.functions`` in the build's
environment and render what it found - the kernel whose code breaks the check, the first
pass where its good and bad texts part, the IR diff, and a command that reproduces it.

The search itself (swapping good PrimFuncs into the bad module, half at a time) runs inside
the TVM under test; see ``toolkit.bisect.in_tvm.functions``. The good side is the same TVM with
``--good-pipeline``, or another TVM's interpreter (``python``): that one lowers and checks
the workload first, in its own process, and the search reads its kernels back.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from toolkit.bisect.protocol import AUTO_PIPELINE, FUNCS_RESULT_MARKER, FunctionBisection
from toolkit.errors import TkError, UserError
from toolkit.process import with_toolkit


def run(workload: str, target: str, good_pipeline: str = AUTO_PIPELINE, *,
        env: dict[str, str] | None = None,
        rtol: float = 1e-3, atol: float = 1e-4, timeout: float | None = None,
        python: str | None = None) -> FunctionBisection:
    """Search in the TVM of ``env`` (default: this environment's); the good side is
    ``good_pipeline`` (``auto``: the one whose kernels are called most like the workload's
    own) in that TVM, or in the TVM of the interpreter ``python``."""
    env = with_toolkit(dict(env if env is not None else os.environ))
    args = ["--workload", workload, "--target", target, "--good-pipeline", good_pipeline,
            "--rtol", str(rtol), "--atol", str(atol)]
    if python is None:
        return _search(args, env, workload, timeout)
    with tempfile.TemporaryDirectory(prefix="tk-good-side-") as tmp:
        # The other interpreter's own TVM: none of the build under test's paths.
        theirs = with_toolkit({k: v for k, v in os.environ.items()
                               if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")})
        _side([python, "-m", "toolkit.bisect.in_tvm.functions", *args, "--good-side", tmp], theirs,
              workload, timeout, f"the good side ({python})", f"the good side ({python}): ")
        return _search([*args, "--good-from", tmp], env, workload, timeout, python)


def _search(args: list[str], env: dict[str, str], workload: str, timeout: float | None,
            python: str | None = None) -> FunctionBisection:
    out = _side([sys.executable, "-m", "toolkit.bisect.in_tvm.functions", *args], env, workload, timeout,
                "the function bisection")
    result = FunctionBisection.from_json(out)
    result.good_python = python
    result.reproduce = reproduce_command(result)
    return result


def _side(argv: list[str], env: dict[str, str], workload: str, timeout: float | None,
          what: str, prefix: str = "") -> dict[str, Any]:
    """Run one process of the search; what it printed after the marker (its error, after
    ``prefix``, raised)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                              cwd=Path.cwd())
    except FileNotFoundError:
        raise UserError(f"--python {argv[0]}: no such interpreter") from None
    except subprocess.TimeoutExpired:
        raise TkError(f"{what} of {workload} took more than {timeout:g}s") from None
    for line in proc.stdout.splitlines():
        if line.startswith(FUNCS_RESULT_MARKER):
            out = json.loads(line[len(FUNCS_RESULT_MARKER):])
            if "error" in out:
                raise (UserError if out["user_error"] else TkError)(prefix + out["error"])
            return out
    last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
    raise TkError(f"{what} process for {workload} died (exit "
                  f"{proc.returncode}){': ' + last[0][:300] if last else ''}")


def reproduce_command(r: FunctionBisection) -> str:
    cmd = (f"tk bisect functions {shlex.quote(r.workload)} --target "
           f"{shlex.quote(r.target)} --good-pipeline {shlex.quote(r.good_pipeline)}")
    if r.good_python:
        cmd += f" --python {shlex.quote(r.good_python)}"
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
                  f"`{r.good_pipeline}`'s {r.kernel}"
                  + (f" (TVM {r.good_tvm}, `{r.good_python}`)" if r.good_python else "")
                  + " swapped in, they match."]
    elif r.candidates:
        lines += ["# Bad kernels: only together", "",
                  f"- {', '.join(r.candidates)}: {r.stop_reason}"]
    elif r.status == "flaky":
        lines += ["# Function bisection: the check is flaky - no kernel", "",
                  f"- {r.stop_reason}"]
        for d in r.disagreements:
            runs = "; ".join(f"{v} ({why})" for v, why in zip(d["verdicts"], d["details"]))
            lines.append(f"- Runs with {', '.join(d['good_kernels']) or 'no good kernel'} "
                         f"swapped in: {runs}")
    else:
        lines += [f"# Function bisection {r.status}", "", f"- {r.stop_reason}"]
    if r.good_choice:
        lines.append(f"- Good side: {r.good_choice}")
    again = sum(p.get("phase") == "confirm" for p in r.probes)
    lines.append(f"- {len(r.differing)} kernels differ between the good and bad lowering "
                 f"({', '.join(r.differing) or 'none'}); {len(r.probes) - again} hybrids "
                 f"built" + (f", then {again} re-run to confirm" if again else ""))
    if r.unswappable:
        lines.append("- Not swappable (absent from the good lowering, or called with other "
                     f"arguments there): {', '.join(r.unswappable)}")
    if r.pass_name:
        lines += [f"- First pass where the kernels part: {r.pass_name} (after it, "
                  f"{', '.join(r.pass_kernels)} differ)", "",
                  "```diff", r.diff.rstrip(), "```"]
    lines += ["", "Reproduce:", "", "```sh", r.reproduce, "```"]
    return "\n".join(lines) + "\n"
