"""Options shared by several commands, so each is spelled and documented once."""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from toolkit.cli.terminal import Terminal


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
                      f"{self.min:g}", param, ctx)
        if self.max is not None and number > self.max:
            self.fail(f"{value!r} must be at most {self.max:g}", param, ctx)
        return number


POSITIVE_SECONDS = Number(float, min=0, min_open=True)
TOLERANCE = Number(float, min=0)
COUNT = Number(int, min=1)
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
    return os.path.abspath(value) if value and os.sep in value else value


def python_option(help: str, dest: str = "python", default: str | None = sys.executable,
                  ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--python PATH``: the interpreter whose TVM a command looks at (default: this one)."""
    return click.option("--python", dest, default=default, metavar="PY",
                        show_default="this Python" if default else False,
                        callback=_interpreter, help=help)


# The flags that choose a build plan (fields of toolkit.build.recipes.Request); tk build, tk bisect
# and anything else that builds take the same ones.
_RECIPE_OPTIONS = [
    click.option("--llvm", "llvm", is_flag=False, flag_value="", default=None, metavar="[VER]",
                 help="Build with LLVM; --llvm 16 uses llvm-config-16."),
    click.option("--no-llvm", is_flag=True,
                 help="No LLVM, not even the one a GPU backend brings (codegen-only work)."),
    click.option("--cuda", is_flag=True, help="Build with CUDA, and LLVM for the host side "
                 "(see --cuda-arch, --no-llvm)."),
    click.option("--cuda-arch", metavar="LIST",
                 help="CMAKE_CUDA_ARCHITECTURES, e.g. 80 or '80;90'."),
    click.option("--debug", is_flag=True, help="Debug build (-O0 -g)."),
    click.option("--ccache", is_flag=True, help="Compile through ccache."),
    click.option("--runtime-only", is_flag=True, help="Build the runtime library alone."),
    click.option("--recipe", "recipe_files", multiple=True, metavar="FILE",
                 help="Add your own recipe (TOML), after the built-in ones."),
    click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
                 help="Override one option (USE_X=VALUE, or CMAKE_X=VALUE for a CMake argument)."),
    click.option("--backend", type=click.Choice(["native", "docker"]), default="native",
                 show_default=True, help="Where the build runs."),
]
_RECIPE_FIELDS = ("llvm", "no_llvm", "cuda", "cuda_arch", "debug", "ccache", "runtime_only",
                  "recipe_files", "sets", "backend")


def recipe_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the build-plan flags; the command receives them as one JSON-able ``recipe`` dict."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        recipe = {name: kwargs.pop(name) for name in _RECIPE_FIELDS}
        recipe["recipe_files"] = list(recipe["recipe_files"])
        recipe["sets"] = list(recipe["sets"])
        return func(*args, recipe=recipe, **kwargs)

    for option in reversed(_RECIPE_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


entry_option = click.option(
    "--entry", metavar="NAME",
    help="The function to compile and run (default: main, else forward, else the first).")

# How to compile beyond the target; the command receives them as one ``build`` dict, checked
# against the TVM at hand by ``toolkit.tvm_side.stack.build_options(**build)``.
_BUILD_OPTIONS = [
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
_BUILD_FIELDS = ("opt_level", "pass_config", "pipeline", "database", "host")


def build_options(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        build = {name: kwargs.pop(name) for name in _BUILD_FIELDS}
        build["pass_config"] = list(build["pass_config"])
        return func(*args, build=build, **kwargs)

    for option in reversed(_BUILD_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


# A remote device over TVM RPC: a server directly, or one leased from a tracker by key.
_REMOTE_OPTIONS = [
    click.option("--rpc", metavar="HOST:PORT", help="Run on the device of this TVM RPC server."),
    click.option("--tracker", metavar="HOST:PORT", help="Lease a device from this RPC tracker."),
    click.option("--key", metavar="KEY", help="The device key to ask the tracker for."),
]
_REMOTE_FIELDS = ("rpc", "tracker", "key")


def remote_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --rpc / --tracker / --key; the command receives ``remote`` (a dict, or None)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        remote = {name: kwargs.pop(name) for name in _REMOTE_FIELDS}
        return func(*args, remote=remote if any(remote.values()) else None, **kwargs)

    for option in reversed(_REMOTE_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
