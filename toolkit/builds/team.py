"""What this machine shares with its team: the OCI registry that holds built TVMs and the
remote storage of the compile cache, read from where a user sets them.

Each setting comes, first found wins, from the command line (``tk build --registry``,
``--ccache-remote``), the environment (``TK_REGISTRY``, ``TK_CCACHE_REMOTE``), then the
``[team]`` table of tk's config file (``$TK_CONFIG``, else ``$XDG_CONFIG_HOME/tk/config.toml``,
else ``~/.config/tk/config.toml``)::

    [team]
    registry = "registry.example.com:5000/team/tvm"
    ccache-remote = "redis://cache.example.com:6379"

An empty value at any level turns the setting off for what comes after it
(``TK_REGISTRY= tk build`` builds without looking in the configured registry). Credentials
are not settings: a registry's come from Docker's config and credential helpers (see
``toolkit.builds.oci``), a redis password may sit in its URL, which tk never prints whole
(``redact``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import UserError, suggest

# setting -> (environment variable, key in the [team] table)
SOURCES = {"registry": ("TK_REGISTRY", "registry"),
           "ccache_remote": ("TK_CCACHE_REMOTE", "ccache-remote")}


def config_path() -> Path:
    if os.environ.get("TK_CONFIG"):
        return Path(os.environ["TK_CONFIG"])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tk" / "config.toml"


@dataclass
class TeamSettings:
    registry: str | None = None  # REGISTRY/REPOSITORY builds are looked up in and pushed to
    ccache_remote: str | None = None  # ccache's remote storage URL (redis://, http://, ...)

    @classmethod
    def load(cls, registry: str | None = None, ccache_remote: str | None = None) -> TeamSettings:
        """The settings in force: the arguments (the command line's; None: not given), then
        the environment, then the config file."""
        given = {"registry": registry, "ccache_remote": ccache_remote}
        table: dict[str, object] | None = None
        found: dict[str, str | None] = {}
        for name, (variable, key) in SOURCES.items():
            value = given[name]
            if value is None:
                value = os.environ.get(variable)
            if value is None:
                if table is None:
                    table = read_config()
                raw = table.get(key)
                if raw is not None and not isinstance(raw, str):
                    raise UserError(f"{config_path()}: [team] {key} must be a string")
                value = raw
            found[name] = (value or "").strip() or None
        return cls(**found)


def read_config() -> dict[str, object]:
    """The ``[team]`` table of the config file (empty without a file); a file that is not
    TOML, or a key tk does not know, is the user's mistake to fix."""
    path = config_path()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise UserError(f"{path}: cannot read tk's config file: {e.strerror}") from None
    try:  # imported here: most machines have no config file, and every build reads it
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not a TOML file: {e}") from None
    known_tables = {"team"}
    for name in data:
        if name not in known_tables:
            raise UserError(f"{path}: unknown table [{name}]{suggest(name, known_tables)}")
    table = data.get("team", {})
    if not isinstance(table, dict):
        raise UserError(f"{path}: team must be a table ([team])")
    keys = {key for _, key in SOURCES.values()}
    for key in table:
        if key not in keys:
            raise UserError(f"{path}: [team] has no setting {key!r}{suggest(key, keys)}")
    return table


USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][\w+.-]*://)(?P<user>[^@/]*)@")


def redact(url: str) -> str:
    """A URL as tk may print or record it: a password in it (``redis://:secret@host``,
    ``redis://user:secret@host``) replaced by ``***``."""
    m = USERINFO.match(url)
    if not m:
        return url
    name = m.group("user").split(":", 1)[0] if ":" in m.group("user") else ""
    shown = f"{name}:***" if name else "***"
    return f"{m.group('scheme')}{shown}@{url[m.end():]}"
