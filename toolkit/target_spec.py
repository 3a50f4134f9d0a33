"""Targets in either form: the old string (``"cuda -arch=sm_80"``) or the dict/JSON one.

Users have years of scripts with string targets; TVM 0.27.0.post1 refuses strings that carry
options. tk accepts both and hands the TVM at hand whichever form it understands.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from toolkit.errors import UserError

GPU_KINDS = {"cuda", "rocm", "vulkan", "metal", "opencl", "webgpu"}


def parse(spec: str | dict[str, Any]) -> dict[str, Any] | str:
    """Normalise a user's target to a dict, or a bare name/tag TVM resolves itself.

    Pure: no tvm import, so host-side code (build, bisect) can validate targets too.
    """
    if isinstance(spec, dict):
        if "kind" not in spec:
            raise UserError(f"target {spec!r} has no 'kind'; e.g. {{\"kind\": \"llvm\"}}")
        return dict(spec)
    text = spec.strip()
    if not text:
        raise UserError("empty target; pass e.g. --target llvm or --target 'cuda -arch=sm_80'")
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise UserError(f"target JSON does not parse: {e.msg} at column {e.colno}") from None
        return parse(value)
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise UserError(f"target {text!r} does not parse: {e}") from None
    kind, options = words[0], words[1:]
    if not options:
        return kind  # a kind ("llvm") or a tag ("nvidia/geforce-rtx-4090")
    result: dict[str, Any] = {"kind": kind}
    for word in options:
        if not word.startswith("-"):
            raise UserError(f"target {text!r}: option {word!r} should look like -name=value")
        name, sep, value = word.lstrip("-").partition("=")
        result[name] = value if sep else True
    return result


def kind_of(spec: str | dict[str, Any]) -> str:
    parsed = parse(spec)
    return parsed["kind"] if isinstance(parsed, dict) else parsed.split("/")[0]
