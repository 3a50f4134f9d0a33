"""The command line as a user meets it: help, version, errors and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

from toolkit.cli import COMMANDS


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
    for command in ("compile", "run", "doctor", "dump-ir", "profile", "trace", "build", "bisect",
                    "ext"):
        assert f"  {command} " in out.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_commands_help_ends_with_its_manual_page(tk, command):
    """`tk CMD --help` (and each of a group's subcommands) ends with the path of a page that
    exists in the repository, and the page is that command's."""
    import click

    from toolkit.cli import cli

    result = tk(command, "--help")
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1].strip()
    assert last == f"Manual: docs/tk-{command}.md"
    page = REPO / last.removeprefix("Manual: ")
    assert page.is_file() and page.read_text().startswith(f"# tk-{command}(1)")
    group = cli.get_command(click.Context(cli), command)
    for name, sub in getattr(group, "commands", {}).items():
        with click.Context(sub, info_name=name) as ctx:
            assert sub.get_help(ctx).strip().splitlines()[-1].strip() == last, (command, name)


def test_tks_help_ends_with_the_manuals_index(tk):
    last = tk("--help").stdout.strip().splitlines()[-1]
    assert last.strip().startswith("Manual: docs/README.md") and (REPO / "docs/README.md").is_file()


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


def parse_tk_line(line: str) -> list[str]:
    """Parse a suggested tk command line with tk's own click tree, running nothing: click
    raises UsageError for any option or argument the command does not take."""
    import shlex

    import click

    from toolkit.cli import cli

    words = shlex.split(line)
    assert words[0] == "tk", line
    ctx = cli.make_context("tk", words[1:])
    path = ["tk"]
    while isinstance(ctx.command, click.Group):
        # A group leaves the subcommand's name and words unparsed for the subcommand.
        rest = [*ctx._protected_args, *ctx.args]
        name, cmd, args = ctx.command.resolve_command(ctx, rest)
        ctx = cmd.make_context(name, args, parent=ctx)
        path.append(name)
    return path


def test_parse_tk_line_refuses_what_click_refuses():
    import click
    import pytest

    assert parse_tk_line("tk --debug compile x.py --target llvm") == ["tk", "compile"]
    assert parse_tk_line("tk profile x.py -n 3") == ["tk", "profile", "run"]
    with pytest.raises(click.UsageError):
        parse_tk_line("tk compile x.py --target llvm --debug")  # the line tk used to suggest


def test_groups_with_a_default_command_share_one_behaviour(tk):
    for group, default_words, sub in (("dump-ir", ["dump", "--help"], ["show", "--help"]),
                                      ("profile", ["run", "--help"], ["compare", "--help"])):
        bare = tk(group)
        assert bare.returncode == 2 and len(bare.stderr.strip().splitlines()) == 1
        assert "missing WORKLOAD" in bare.stderr and sub[0] in bare.stderr
        # A first word that is not a subcommand goes to the default one.
        implicit = tk(group, "builtin:mlp", "--help")
        assert implicit.returncode == 0
        assert implicit.stdout == tk(group, *default_words).stdout
        assert tk(group, *sub).returncode == 0


@pytest.mark.parametrize("args", [
    ("profile", "builtin:mlp", "-n", "99999999999999999999"),
    ("profile", "builtin:mlp", "--warmup", "99999999999999999999"),
    ("tune", "builtin:matmul", "--trials", "99999999999999999999", "-o", "db"),
])
def test_a_run_count_no_one_can_wait_for_is_refused_at_once(tk, tmp_path, args):
    """10**20 runs was taken and ran for ever (--trials overflowed MetaSchedule's int32 later
    as a TypeError); a count is bounded, and the line says the bound."""
    result = tk(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "must be at most 1,000,000" in lines[0], result.stderr
    assert not (tmp_path / "db").exists()


def test_python_that_is_not_an_interpreter_is_one_line_exit_2(tk, tmp_path):
    """--python naming a library (executable bit and all), a program that is not a Python, or
    nothing: refused at once (a library failed later with 'OSError: Exec format error')."""
    library = tmp_path / "libfake.so"
    library.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 57)  # an ELF header, nothing to run
    library.chmod(0o755)
    for value, says in ((str(library), "is not a program this machine runs"),
                        ("/bin/true", "is not a Python 3 interpreter"),
                        (str(tmp_path / "missing"), "no such interpreter")):
        result = tk("doctor", "--python", value)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and value in lines[0], result.stderr


def test_a_module_tk_installs_that_is_missing_here_names_its_pip_install(tk, tmp_path):
    """A venv without cloudpickle (an older tk's, or one it was removed from): tk tune says
    which pip install brings it back, one line, exit 2 - it was 'internal error'."""
    hidden = tmp_path / "hide"
    (hidden / "cloudpickle").mkdir(parents=True)
    (hidden / "cloudpickle" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'cloudpickle'\", name='cloudpickle')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(hidden), str(REPO)])}
    result = tk("tune", "builtin:matmul", "--trials", "2", "-o", str(tmp_path / "db"), env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "tk: error: Python module 'cloudpickle' is missing here: pip install cloudpickle"]
    assert not (tmp_path / "db").exists()
