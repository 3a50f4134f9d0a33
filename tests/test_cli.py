"""The command line as a user meets it: help, version, errors and exit codes."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_help_lists_every_command_without_importing_heavy_modules():
    code = (
        "import sys\n"
        "from toolkit.cli import _main\n"
        "try:\n"
        "    _main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('tvm', 'pandas', 'docker', 'git', 'numpy') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert "HEAVY=\n" in out.stdout, out.stdout
    for command in ("compile", "run", "doctor", "dump-ir", "profile", "build", "bisect", "ext"):
        assert f"  {command} " in out.stdout


def test_version(tk):
    from toolkit import __version__

    result = tk("--version")
    assert result.returncode == 0
    assert __version__ in result.stdout


def test_unknown_flag_is_one_line_and_exit_2(tk):
    result = tk("compile", "builtin:mlp", "--no-such-flag")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--no-such-flag" in lines[0] and "tk compile --help" in lines[0]


def test_unknown_command_exit_2(tk):
    result = tk("frobnicate")
    assert result.returncode == 2
    assert "frobnicate" in result.stderr
