"""Fixtures shared by the whole suite: the CLI as a user runs it, headless Chromium.

Feature-specific fixtures live beside their tests (tests/<feature>_*.py), not here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run_tk(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
           timeout: float = 600, input: str | None = None) -> Result:
    """Run ``tk`` in a fresh process from this checkout, as a user's shell would."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), *filter(None, [full_env.get("PYTHONPATH")])]
    )
    full_env.pop("TK_DEBUG", None)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", *args], cwd=cwd, env=full_env, text=True,
        capture_output=True, timeout=timeout, input=input,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def tk():
    return run_tk


@pytest.fixture(scope="session")
def absent_gpu() -> str:
    """A GPU target kind with no device 0 on this machine - cuda where there is no GPU - so
    tests of the absent-device refusal hold on a machine with a GPU too."""
    tvm = pytest.importorskip("tvm")
    for kind in ("cuda", "rocm", "vulkan", "metal", "opencl"):
        if not tvm.device(kind, 0).exist:
            return kind
    pytest.skip("every GPU kind TVM knows has a device 0 here: no absent device to refuse")


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@dataclass
class Browser:
    binary: str
    profile: Path

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", *args],
            capture_output=True, text=True, timeout=120,
        )

    def dom(self, page: Path, budget_ms: int = 5000) -> str:
        """The page's DOM after its scripts ran (what a person would see, as HTML)."""
        proc = self._run(f"--virtual-time-budget={budget_ms}", "--dump-dom", page.as_uri())
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    def screenshot(self, page: Path, out: Path, size: str = "1400,1000") -> Path:
        proc = self._run(f"--screenshot={out}", f"--window-size={size}",
                         "--virtual-time-budget=5000", page.as_uri())
        assert out.exists(), proc.stderr[-2000:]
        return out


@pytest.fixture
def browser(tmp_path: Path) -> Browser:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return Browser(binary, tmp_path / "chromium-profile")
