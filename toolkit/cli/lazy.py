"""A click group that imports a subcommand's module only when that command runs.

The command table carries each command's one-line help, so ``tk --help`` can list every
command without importing any of them (and with them tvm, pandas or docker). Each command's
help ends with its manual page, ``docs/tk-<command>.md``: named here, once, for all of them.
"""

from __future__ import annotations

import importlib

import click


class LazyGroup(click.Group):
    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str]] | None = None, **kw):
        super().__init__(*args, **kw)
        # name -> ("package.module:attr", one-line help)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy_commands:
            target, _ = self.lazy_commands[name]
            module_name, attr = target.split(":")
            command = getattr(importlib.import_module(module_name), attr)
            _end_help_with(command, f"Manual: {manual(name)}")
            return command
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy_commands[name][1]) for name in sorted(self.lazy_commands)]
        rows += [
            (name, cmd.get_short_help_str())
            for name, cmd in sorted(self.commands.items())
            if name not in self.lazy_commands
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def manual(command: str) -> str:
    """The manual page of a top-level command, relative to tk's repository."""
    return f"docs/tk-{command}.md"


def _end_help_with(command: click.Command, line: str) -> None:
    """Make ``line`` the last of ``command``'s help and of its subcommands' (once: a command
    is looked up again on every call)."""
    epilog = command.epilog or ""
    if not epilog.endswith(line):
        command.epilog = f"{epilog}\n\n{line}" if epilog else line
    for sub in getattr(command, "commands", {}).values():
        _end_help_with(sub, line)


class DefaultGroup(click.Group):
    """A group whose first argument, when it names no subcommand, goes to ``default_command``.

    ``tk dump-ir builtin:mlp -o out`` runs ``dump`` and ``tk dump-ir show out`` runs ``show``;
    ``tk profile builtin:mlp`` runs ``run`` and ``tk profile compare a b`` compares. With no
    argument at all the user gets one usage line naming both forms.
    """

    def __init__(self, *args, default_command: str, **kw):
        super().__init__(*args, **kw)
        self.default_command = default_command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            others = ", ".join(n for n in self.list_commands(ctx) if n != self.default_command)
            raise click.UsageError(f"missing WORKLOAD (or a subcommand: {others})", ctx)
        if args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)
