"""Target-side probes: scripts run by path inside the environment of the TVM under test.

They import only the standard library, numpy and that TVM (never ``toolkit``), because
the interpreter running them may be another Python, a build's environment or a container.
Each prints one JSON object per line, flushed, so a crash mid-way still leaves what came
before it on the host side.
"""

from pathlib import Path

PROBE_DIR = Path(__file__).parent


def path_of(name: str) -> Path:
    return PROBE_DIR / f"{name}.py"
