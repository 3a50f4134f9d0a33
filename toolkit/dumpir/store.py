"""The content-addressed function store: each distinct function text saved once, gzipped.

A key is the sha256 of the TVMScript text, so the same body printed by two runs (two
commits, two forks) has the same key, which is what ``compare`` relies on.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
from pathlib import Path

from toolkit.errors import UserError

SUFFIX = ".py.gz"
DIRECTORY = "store"  # the store inside a dump directory


KEY_LENGTH = 24
_KEY = re.compile(f"[0-9a-f]{{{KEY_LENGTH}}}")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def check_key(key: object) -> str:
    """``key`` if it is a store key; a crafted index (``../x``, ``/etc/x``) is refused here,
    before it names a file outside the store."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise UserError(f"store key {key!r} in the index is not a tk store key "
                        "(a corrupt or crafted index.json)")
    return key


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class FunctionStore:
    """``DIR/store/<key>.py.gz``; texts stay in memory too while a dump is being written.

    Writers must write into a directory nobody reads yet (dump.py's temporary directory).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: dict[str, str] = {}

    def put(self, text: str) -> str:
        key = text_key(text)
        if key not in self._texts:
            if not self._texts:
                self.root.mkdir(parents=True, exist_ok=True)
            self._texts[key] = text
            # Level 1: most of the size win at a fraction of the time. No rename per file:
            # a dump is written in a private directory that is swapped in whole at the end.
            self.path(key).write_bytes(gzip.compress(text.encode(), compresslevel=1, mtime=0))
        return key

    def get(self, key: str) -> str:
        text = self._texts.get(key)
        if text is None:
            path = self.path(key)
            if not path.exists():
                raise KeyError(key)
            text = self._texts[key] = gzip.decompress(path.read_bytes()).decode()
        return text

    def path(self, key: str) -> Path:
        return self.root / f"{check_key(key)}{SUFFIX}"

    def loaded(self) -> dict[str, str]:
        """Every text read or written so far, by key."""
        return dict(self._texts)

    def keys(self) -> list[str]:
        return sorted(p.name[: -len(SUFFIX)] for p in self.root.glob(f"*{SUFFIX}"))
