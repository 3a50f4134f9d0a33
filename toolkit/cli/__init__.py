"""The ``tk`` command line: a thin click layer over the toolkit library."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

import click

from toolkit import __version__
from toolkit.cli.lazy import LazyGroup
from toolkit.cli.terminal import Terminal

if TYPE_CHECKING:
    from toolkit.errors import TkError

COMMANDS: dict[str, tuple[str, str]] = {
    "compile": ("toolkit.cli.compile:compile_cmd", "Compile a workload for a target."),
    "run": ("toolkit.cli.run:run_cmd", "Run a workload on a target's device, optionally checked."),
    "tune": ("toolkit.cli.tune:tune_cmd", "Tune a workload's kernels with MetaSchedule."),
    "doctor": ("toolkit.cli.doctor:doctor_cmd", "Check a TVM install and explain what is wrong."),
    "dump-ir": ("toolkit.cli.dumpir:dumpir_group", "Record the IR after every pass of a compile."),
    "profile": ("toolkit.cli.profile:profile_group", "Time every operator of a compiled workload."),
    "trace": ("toolkit.cli.trace:trace_cmd", "Trace where one compile spends its time."),
    "build": ("toolkit.cli.build:build_group", "Build TVM from recipes, natively or in a container."),
    "env": ("toolkit.cli.build:env_cmd", "Print shell exports that put a stored build in use."),
    "image": ("toolkit.cli.image:image_group", "Make offline base images for container builds."),
    "bisect": ("toolkit.cli.bisect:bisect_group", "Find the commit, then the pass, that broke a check."),
    "fork": ("toolkit.cli.fork:fork_group", "Keep a fork alive: its changes, rebases, out-of-tree moves."),
    "ext": ("toolkit.cli.ext:ext_group", "Scaffold, build, check and load TVM extensions."),
    "explain": ("toolkit.cli.explain:explain_cmd", "Explain TVM failure messages in a log."),
}


# The distribution that brings each module tk or TVM imports (the names differ for some).
INSTALLED_BY = {
    "cloudpickle": "cloudpickle", "psutil": "psutil", "tornado": "tornado", "onnx": "onnx",
    "onnxruntime": "onnxruntime", "cuda": "cuda-bindings", "docker": "docker",
    "git": "gitpython", "pandas": "pandas", "numpy": "numpy", "tvm": "apache-tvm",
    "tvm_ffi": "apache-tvm-ffi",
}


def debug_enabled() -> bool:
    return os.environ.get("TK_DEBUG", "") not in ("", "0")


@click.group(
    cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Manual: docs/README.md, and a page per command (docs/tk-COMMAND.md).",
)
@click.version_option(__version__, prog_name="tk")
@click.option("--debug", is_flag=True, help="Show Python tracebacks on failure.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """tk: build, load, dump, profile and bisect Apache TVM and its forks."""
    ctx.obj = Terminal()  # every command writes through it (toolkit.cli.terminal)
    if debug:
        os.environ["TK_DEBUG"] = "1"


def main(argv: list[str] | None = None) -> None:
    """Entry point: the work runs in a guarded worker process where the OS allows it."""
    from toolkit import process

    if os.environ.get("TK_NO_FORK") or not hasattr(os, "fork"):
        process.stop_on_signals()
        _main(argv)
    process.guard(lambda: _main(argv), list(sys.argv[1:] if argv is None else argv))


def _stopped() -> None:
    """Exit as a process stopped by the signal that stopped it (Ctrl-C: 130)."""
    import signal

    from toolkit import process

    sig = process.stopped_by() or signal.SIGINT
    click.echo("tk: interrupted" if sig == signal.SIGINT else
               f"tk: stopped by {process.signal_name(sig)}", err=True)
    sys.exit(128 + sig)


def _main(argv: list[str] | None) -> None:
    """One line and exit 2 for user mistakes, exit 1 for failures."""
    from toolkit import process
    from toolkit.errors import TkError

    prog = "tk"
    try:
        rv = cli.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:  # click's word for KeyboardInterrupt, and EOF at a prompt
        if process.stopped_by():
            _stopped()
        click.echo("tk: aborted", err=True)
        sys.exit(process.INTERRUPTED)
    except click.UsageError as e:
        where = e.ctx.command_path if e.ctx else prog
        click.echo(f"{where}: error: {e.format_message()} (see '{where} --help')", err=True)
        sys.exit(2)
    except click.ClickException as e:
        click.echo(f"{prog}: error: {e.format_message()}", err=True)
        sys.exit(e.exit_code)
    except TkError as e:
        _failed(argv, e, e)
    except KeyboardInterrupt:
        _stopped()
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        known = _environment_error(e)
        if known is not None:
            _failed(argv, known, e)
        if process.stopped_by():
            _stopped()
        _internal_error(argv, e)
    sys.exit(rv if isinstance(rv, int) else 0)


def _environment_error(e: Exception) -> TkError | None:
    """What the user's machine is missing or refused, said as their mistake (exit 2): a module
    tk installs that is not here (a venv that lost it, an older tk's), a write the machine
    refused wherever it happened (full disk, read-only, no right)."""
    from toolkit.errors import UserError
    from toolkit.outputs import ENVIRONMENT, refused

    if isinstance(e, ModuleNotFoundError):
        dist = INSTALLED_BY.get((e.name or "").split(".")[0])
        return None if dist is None else UserError(
            f"Python module {e.name!r} is missing here: pip install {dist}")
    if isinstance(e, OSError) and e.errno in ENVIRONMENT:
        return refused(e)
    return None


def _failed(argv: list[str] | None, error: TkError, cause: BaseException) -> NoReturn:
    """One line (and, for a failure, where its explanation is), its exit code."""
    from toolkit import process

    if process.stopped_by():  # a Ctrl-C inside TVM comes back as a TVM error
        _stopped()
    _record_failure(argv, f"tk: error: {error}", cause)
    if debug_enabled():
        raise cause
    click.echo(f"tk: error: {error}", err=True)
    if error.exit_code == 1 and "explain:" not in str(error):
        click.echo(f"  {_explain_hint(error)}", err=True)
    sys.exit(error.exit_code)


def _internal_error(argv: list[str] | None, e: Exception) -> NoReturn:
    """A failure of tk itself: its type and message, the known TVM failure it may be."""
    prog = "tk"
    _record_failure(argv, f"{prog}: internal error: {type(e).__name__}: {e}", e)
    if debug_enabled():
        raise e
    click.echo(f"{prog}: internal error: {type(e).__name__}: {e} (rerun with --debug)",
               err=True)
    from toolkit.explain import hint

    known = hint(e)  # a TVM failure that reached tk unwrapped is still a known one
    if known:
        click.echo(f"  {known}", err=True)
    sys.exit(1)


def _record_failure(argv: list[str] | None, message: str, exc: BaseException) -> None:
    """Keep the failure's log for ``tk explain --last`` (the exception chain, TVM's frames)."""
    from toolkit.cause import exception_text
    from toolkit.explain import last
    from toolkit.paths import cache_root

    args = list(sys.argv[1:] if argv is None else argv)
    if next((a for a in args if not a.startswith("-")), None) == "explain":
        return  # explaining must not replace the failure being explained
    chain = exception_text(exc.__cause__) if exc.__cause__ is not None else ""
    last.save(cache_root(), args, message, chain if chain else exception_text(exc))


def _explain_hint(exc: BaseException) -> str:
    """What the failure is known as, else where its whole log went."""
    from toolkit.explain import hint

    return hint(exc.__cause__ or exc) or "explain: tk explain --last"
