"""The function store: each distinct function text saved once, all in one gzipped pack.

A text key is the sha256 of the TVMScript text, so the same body printed by two runs (two
commits, two forks) has the same key, which is what ``compare`` relies on. ``tk dump-ir``
prints nothing while it compiles: its index names each function version by a *version key*
(:func:`version_key`), made of what the compile computed anyway, and the texts are rendered
by a second compile when first asked for (``toolkit/dumpir/in_tvm/render.py``), which then
rewrites the index with text keys. The pack,
``DIR/store.json.gz``, is a JSON object ``{key: text}`` written once when the dump is
complete; ``index.html`` embeds the very same bytes, so the texts are compressed once. One
file instead of one per text: on builtin:mlp40 that was 2,250 files, and compressing the
texts together finds the repetition between versions of one function.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from pathlib import Path

from toolkit.errors import UserError

PACK = "store.json.gz"  # the store inside a dump directory
KEY_LENGTH = 24
_KEY = re.compile(f"[0-9a-f]{{{KEY_LENGTH}}}")
# "s" + 16 hex digits of the structural hash (free variables mapped: stable from one process
# to the next), "-N" for the Nth other version sharing that hash and name, ":" + the name.
# Never a text key: those are hex digits only.
_VERSION_KEY = re.compile(r"s[0-9a-f]{16}(?:-[1-9][0-9]*)?:[^\s/\\]{1,512}")


def version_key(stable_hash: int, name: str, ordinal: int = 0) -> str:
    """The key of a function version before its text exists (see :data:`_VERSION_KEY`)."""
    suffix = f"-{ordinal}" if ordinal else ""
    return f"s{stable_hash & 0xFFFF_FFFF_FFFF_FFFF:016x}{suffix}:{name}"


def is_version_key(key: str) -> bool:
    return _VERSION_KEY.fullmatch(key) is not None


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def check_key(key: object) -> str:
    """``key`` if it is a store key; a crafted index (``../x``, ``/etc/x``) is refused here."""
    if not isinstance(key, str) or not (_KEY.fullmatch(key) or _VERSION_KEY.fullmatch(key)):
        raise UserError(f"store key {key!r} in the index is not a tk store key "
                        "(a corrupt or crafted index.json)")
    return key


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class FunctionStore:
    """Texts by key: kept in memory while a dump is recorded, read back from its pack."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._texts: dict[str, str] = {}
        self._loaded = False

    def put(self, text: str) -> str:
        key = text_key(text)
        self._texts.setdefault(key, text)
        return key

    def put_note(self, key: str, note: str) -> None:
        """Keep ``note`` under a version key whose text could not be rendered: readers show
        it where the text would be."""
        self._texts[key] = note

    def get(self, key: str) -> str:
        text = self._texts.get(key)
        if text is None:
            check_key(key)
            self._load()
            text = self._texts.get(key)
            if text is None:
                raise KeyError(key)
        return text

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if not self.path.exists():
            return
        try:
            texts = json.loads(gzip.decompress(self.path.read_bytes()))
        except (OSError, EOFError, ValueError) as e:
            raise UserError(f"{self.path} is not a readable tk store ({e})") from None
        if not isinstance(texts, dict):
            raise UserError(f"{self.path} is not a tk store (not a JSON object)")
        self._texts.update({k: v for k, v in texts.items() if isinstance(v, str)})

    def pack(self) -> bytes:
        """The pack's bytes: every text put so far, as gzipped JSON."""
        data = json.dumps(self._texts, separators=(",", ":")).encode()
        # Level 3: on builtin:mlp40 (25 MB of text) 0.12 s of CPU for 2.3 MB, where level 6
        # takes 0.3 s for 1.9 MB and level 1 0.11 s for 2.7 MB.
        return gzip.compress(data, compresslevel=3, mtime=0)

    def save(self) -> bytes:
        data = self.pack()
        write_atomic(self.path, data)
        return data

    def loaded(self) -> dict[str, str]:
        """Every text read or written so far, by key."""
        return dict(self._texts)

    def keys(self) -> list[str]:
        self._load()
        return sorted(self._texts)
