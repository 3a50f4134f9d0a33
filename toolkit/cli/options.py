"""Options shared by several commands, so each is spelled and documented once."""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from toolkit.cli.terminal import Terminal
from toolkit.watchdog import Bounds


class Number(click.ParamType):
    """A number from the command line: finite (no nan/inf) and within its bounds, else a usage
    error (exit 2) that names the bound. One type for every numeric option, ints and floats."""

    def __init__(self, kind: type = float, min: float | None = None, max: float | None = None,
                 min_open: bool = False) -> None:
        self.kind, self.min, self.max, self.min_open = kind, min, max, min_open
        self.name = "integer" if kind is int else "number"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, self.kind) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = self.kind(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a{'n integer' if self.kind is int else ' number'}",
                          param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.min is not None and (number <= self.min if self.min_open else number < self.min):
            self.fail(f"{value!r} must be {'above' if self.min_open else 'at least'} "
                      f"{self._text(self.min)}", param, ctx)
        if self.max is not None and number > self.max:
            self.fail(f"{value!r} must be at most {self._text(self.max)}", param, ctx)
        return number

    def _text(self, bound: float) -> str:
        return f"{bound:,}" if self.kind is int else f"{bound:g}"


POSITIVE_SECONDS = Number(float, min=0, min_open=True)
TOLERANCE = Number(float, min=0)
COUNT = Number(int, min=1)
# Runs and trials a person can wait for: 10**20 was taken and ran for ever (or overflowed
# MetaSchedule's int32 later, as a TypeError).
RUNS = Number(int, min=1, max=1_000_000)
SEED = Number(int, min=0, max=2**32 - 1)  # numpy's seeds

workload_argument = click.argument("workload", metavar="WORKLOAD")
target_option = click.option(
    "--target", "-t", default="llvm", show_default=True,
    help="Target: 'llvm', 'cuda -arch=sm_80', or JSON like '{\"kind\": \"cuda\"}'.",
)
# Extensions the command loads before it reads the workload and the target: a device's target
# and codegen, passes, global functions (toolkit.ext.loader.use).
ext_option = click.option(
    "--ext", "extensions", multiple=True, metavar="DIR|LIB.so",
    help="Load this TVM extension first: a 'tk ext new' project or its package directory "
         "(library checked, then package imported), or a library (repeatable).")


def _json_mode(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    # The terminal needs to know too: with --json its progress stays plain lines on stderr.
    if value:
        ctx.ensure_object(Terminal).as_json = True
    return value


json_option = click.option("--json", "as_json", is_flag=True, callback=_json_mode,
                           help="Print JSON instead of text.")


def _interpreter(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # The interpreter runs with another working directory (the probe's), where a relative
    # path like venv/bin/python names nothing: make it absolute here, where the user typed
    # it. Not resolved: a venv's python is a symlink, and following it leaves the venv.
    if not value or value == sys.executable:
        return value
    path = os.path.abspath(value) if os.sep in value else shutil.which(value)
    if path is None or not os.path.isfile(path):
        raise click.BadParameter(f"{value}: no such interpreter", ctx, param)
    try:  # a file that is not a Python (a library, a script of another language) fails later
        proc = subprocess.run([path, "-c", "import sys; print(sys.version_info[0])"],
                              capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise click.BadParameter(f"{value} is not a program this machine runs "
                                 f"({e.strerror})", ctx, param) from None
    except subprocess.TimeoutExpired:
        raise click.BadParameter(f"{value} did not answer as a Python in 60 s", ctx,
                                 param) from None
    if proc.returncode != 0 or proc.stdout.strip() != "3":
        raise click.BadParameter(f"{value} is not a Python 3 interpreter", ctx, param)
    return path


def python_option(help: str, dest: str = "python", default: str | None = sys.executable,
                  ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--python PATH``: the interpreter whose TVM a command looks at (default: this one)."""
    return click.option("--python", dest, default=default, metavar="PY",
                        show_default="this Python" if default else False,
                        callback=_interpreter, help=help)


def recipe_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the flags that choose a build plan (``toolkit.builds.recipes.request_flags``: the
    fragments' and the request's own; tk build, tk bisect and anything else that builds take
    the same ones); the command receives them as one ``request`` (a ``Request``)."""
    from toolkit.builds.recipes import Request, request_flags

    flags = request_flags()

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        request = Request.from_flags({f.dest: kwargs.pop(f.dest) for f in flags})
        return func(*args, request=request, **kwargs)

    for f in reversed(flags):
        if f.optional_value:
            option = click.option(f"--{f.name}", f.dest, is_flag=False, flag_value="",
                                  default=None, metavar=f.value, help=f.help)
        elif f.value is None and not f.choices:
            option = click.option(f"--{f.name}", f.dest, is_flag=True, help=f.help)
        elif f.choices:
            option = click.option(f"--{f.name}", f.dest, type=click.Choice(list(f.choices)),
                                  default=f.choices[0], show_default=True, help=f.help)
        else:
            option = click.option(f"--{f.name}", f.dest, multiple=f.multiple, metavar=f.value,
                                  help=f.help)
        wrapper = option(wrapper)
    return wrapper


def repository_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--source DIR``: the git repository a command works on (default: the one around the
    current directory); ``help`` says what it is to the command."""
    return click.option("--source", type=click.Path(file_okay=False, path_type=Path),
                        default=None, help=help)


# A fork (tk fork's commands, tk bisect upstream): its repository, only read (tk replays in
# its own repository under the cache), and its commit, whose own commits are the patches.
fork_source_option = repository_option(
    "The fork's repository (default: the one around the current directory); only read.")
fork_option = click.option(
    "--fork", "fork_rev", default="HEAD", show_default=True, metavar="REV",
    help="The fork's commit: its own commits are the patches replayed onto upstream.")


def fork_check_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What to check on a fork replayed onto upstream: a command, or a WORKLOAD's numerics on
    ``--target`` (``toolkit.fork.rebase.check_words`` makes them one check)."""
    for option in reversed([
        click.option("--check", "check_text", default=None, metavar="CMD",
                     help="The check, as tk bisect start takes it: a command run in the "
                          "replayed tree in its build's environment (exit 0 good), or a "
                          "ready-made one by name; or give a WORKLOAD: its numerics."),
        click.argument("workload", required=False, metavar="[WORKLOAD]"),
        target_option,
    ]):
        func = option(func)
    return func


# How a replayed or bisected tree is built and checked (tk bisect start, tk bisect upstream,
# tk fork rebase-check, tk fork extract); the artifact store builds TVM trees by default.
check_timeout_option = click.option("--timeout", type=POSITIVE_SECONDS, default=None,
                                    help="Seconds per check run.")
build_cmd_option = click.option(
    "--build-cmd", default=None, metavar="CMD",
    help="For a tree that is not TVM: the shell command that builds it in the worktree "
         "($TK_BISECT_BUILD_DIR is a build directory kept between steps; default for CMake "
         "projects: configure once, then cmake --build).")
no_build_option = click.option("--no-build", is_flag=True,
                               help="Build nothing: the check builds by itself.")


entry_option = click.option(
    "--entry", metavar="NAME",
    help="The function to compile and run (default: main, else forward, else the first).")

# How to compile beyond the target; the command receives them as one ``compiling`` dict, checked
# against the TVM at hand by ``toolkit.stack.compile_options(**compiling)``.
_COMPILE_OPTIONS = [
    click.option("--opt-level", type=int, default=3, show_default=True,
                 help="PassContext opt_level (0..3)."),
    click.option("--pass-config", "pass_config", multiple=True, metavar="KEY=VALUE",
                 help="A PassContext config, e.g. tirx.disable_vectorize=1 (repeatable)."),
    click.option("--pipeline", metavar="NAME",
                 help="TVM's pipeline by name (Relax: zero, default, ...; TIR: s_tir, tirx, ...)."),
    click.option("--db", "database", type=click.Path(path_type=Path), metavar="DIR",
                 help="Apply a MetaSchedule database written by 'tk tune -o DIR'."),
    click.option("--host", metavar="TARGET",
                 help="The target's host, e.g. 'llvm -mtriple=aarch64-linux-gnu'."),
]
_COMPILE_FIELDS = ("opt_level", "pass_config", "pipeline", "database", "host")


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        compiling = {name: kwargs.pop(name) for name in _COMPILE_FIELDS}
        compiling["pass_config"] = list(compiling["pass_config"])
        return func(*args, compiling=compiling, **kwargs)

    for option in reversed(_COMPILE_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


# A remote device over TVM RPC: a server directly, or one leased from a tracker by key; and the
# bounds on waiting for either (toolkit.watchdog: defaults there, docs/remote.md says more).
_REMOTE_OPTIONS = [
    click.option("--rpc", metavar="HOST:PORT", help="Run on the device of this TVM RPC server."),
    click.option("--tracker", metavar="HOST:PORT", help="Lease a device from this RPC tracker."),
    click.option("--key", metavar="KEY", help="The device key to ask the tracker for."),
    click.option("--rpc-timeout", type=POSITIVE_SECONDS, default=Bounds.timeout,
                 envvar="TK_RPC_TIMEOUT", show_default=True, show_envvar=True,
                 metavar="SECONDS",
                 help="Give up when the server or tracker sends no reply to one call for this "
                      "long (long runs are many short calls)."),
    click.option("--rpc-probe", type=POSITIVE_SECONDS, default=Bounds.probe,
                 envvar="TK_RPC_PROBE", show_default=True, show_envvar=True, metavar="SECONDS",
                 help="While waiting, check this often that the server's or tracker's port "
                      "takes connections: refused twice, it is gone."),
]
_REMOTE_FIELDS = ("rpc", "tracker", "key")


def remote_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --rpc / --tracker / --key and the bounds on waiting; the command receives
    ``remote`` (a ``toolkit.stack.remote.Remote``, or None)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        where = {name: kwargs.pop(name) for name in _REMOTE_FIELDS}
        bounds = Bounds(timeout=kwargs.pop("rpc_timeout"), probe=kwargs.pop("rpc_probe"))
        remote = None
        if any(where.values()):
            from toolkit.stack.remote import Remote

            remote = Remote(**where, bounds=bounds)
        return func(*args, remote=remote, **kwargs)

    for option in reversed(_REMOTE_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
