"""Text normalisers for comparing two dumps: what differs in print but not in substance.

Each is on by default in ``compare`` and ``diff`` and can be switched off by name:

- ``target``: target attributes (``T.target({...})``; in LLVM IR ``"target-cpu"``,
  ``"target-features"`` and the ``tvm_target`` metadata) become placeholders, so dumps for
  ``-mcpu=skylake`` and ``-mcpu=x86-64`` align past ``BindTarget``.
- ``type-keys``: the printer's type keys across TVM generations (``metadata["tirx.StringImm"]``
  in 0.26, ``metadata["ir.StringImm"]`` in 0.27; ``tir.``/``tirx.``/``s_tir.``) become one.
- ``numbering``: global numbering (``lv3``, ``x_1``, ``cse_v2``, metadata indices) is
  renumbered in order of first appearance, so one extra temporary does not shift every name.

Pure string work: linear in the text, no tvm import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from toolkit.errors import UserError


def _targets(text: str) -> str:
    out = []
    i = 0
    while (start := text.find("T.target(", i)) != -1:
        out.append(text[i:start] + "T.target(...)")
        depth, j = 0, start + len("T.target")
        in_string = False
        while j < len(text):  # to the matching parenthesis, skipping quoted text
            c = text[j]
            if in_string:
                if c == "\\":
                    j += 1
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    out.append(text[i:])
    text = _LLVM_TARGET_ATTR.sub(lambda m: f'"{m.group(1)}"="..."', "".join(out))
    return _LLVM_TVM_TARGET.sub(r'\1"..."', text)


_LLVM_TARGET_ATTR = re.compile(r'"(target-cpu|target-features)"="[^"\n]*"')
_LLVM_TVM_TARGET = re.compile(r'(!"tvm_target", !)"[^"\n]*"')  # the target, as module metadata

_TYPE_KEY = re.compile(r"\b(?:ir|tir|tirx|s_tir)\.(?=[A-Z])")
_SCRIPT_IMPORT = re.compile(r"\bimport (?:tirx|s_tir) as T\b")


def _type_keys(text: str) -> str:
    return _SCRIPT_IMPORT.sub("import tir as T", _TYPE_KEY.sub("tir.", text))


# A name ending in a number (lv3, x_1, cse_v2, matmul1), not a dtype (int64, bfloat16, LLVM's
# i32) or an architecture (sm_80, x86_64), nor a number on its own.
_NUMBERED = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*?)(\d+)\b")
_NOT_NUMBERING = re.compile(r"u?int|float|bfloat|i|sm_|x86_")
_STRING = re.compile(r'("(?:[^"\\\n]|\\.)*")')
_METADATA_INDEX = re.compile(r'(metadata\["[^"\n]+"\])\[\d+\]')


def _numbering(text: str) -> str:
    seen: dict[str, dict[str, int]] = {}

    def renumber(m: re.Match[str]) -> str:
        prefix, number = m.group(1), m.group(2)
        if _NOT_NUMBERING.fullmatch(prefix):
            return m.group(0)
        numbers = seen.setdefault(prefix, {})
        return f"{prefix}{numbers.setdefault(number, len(numbers))}"

    # Quoted text is data ("x86-64", "fc1.bias"), not numbering: only code between is touched.
    parts = _STRING.split(_METADATA_INDEX.sub(r"\1[#]", text))
    return "".join(part if i % 2 else _NUMBERED.sub(renumber, part)
                   for i, part in enumerate(parts))


NORMALISERS: dict[str, Callable[[str], str]] = {
    "target": _targets,
    "type-keys": _type_keys,
    "numbering": _numbering,
}


def chosen(off: Iterable[str]) -> tuple[str, ...]:
    """The normalisers left on when those named in ``off`` are switched off (``all``: none)."""
    off = set(off)
    unknown = off - set(NORMALISERS) - {"all"}
    if unknown:
        raise UserError(f"unknown normaliser {sorted(unknown)[0]!r}; known: "
                        f"{', '.join(NORMALISERS)}, all")
    return () if "all" in off else tuple(n for n in NORMALISERS if n not in off)


def normalise(text: str, names: Iterable[str]) -> str:
    for name in names:
        text = NORMALISERS[name](text)
    return text
