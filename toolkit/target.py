"""Targets in either form: the old string (``"cuda -arch=sm_80"``) or the dict/JSON one.

Users have years of scripts with string targets; TVM 0.27.0.post1 refuses strings that carry
options. tk accepts both and hands the TVM at hand whichever form it understands.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from toolkit.errors import DeviceAbsent, UserError

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


def _typed(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """Give string option values the types the target kind declares (int, bool, Array)."""
    from tvm.target import TargetKind

    try:
        declared = TargetKind.options_from_name(kind)
    except Exception:  # noqa: BLE001 - unknown kind: let Target() say so
        return options
    out: dict[str, Any] = {}
    for name, value in options.items():
        typ = str(declared.get(name, "str"))
        if not isinstance(value, str):
            out[name] = value
        elif typ.startswith("Array"):
            out[name] = [v for v in value.split(",") if v]
        elif typ in ("int", "IntImm", "Integer"):
            out[name] = int(value)
        elif typ in ("bool", "Bool"):
            out[name] = value.lower() in ("1", "true", "on", "yes")
        else:
            out[name] = value
    return out


def to_tvm(spec: str | dict[str, Any]) -> Any:
    """A ``tvm.target.Target`` for spec, in the form this TVM accepts."""
    from tvm.target import Target

    parsed = parse(spec)
    original = spec if isinstance(spec, str) else json.dumps(spec)
    try:
        if isinstance(parsed, str):
            return Target(parsed)
        typed = _typed(parsed["kind"], {k: v for k, v in parsed.items() if k != "kind"})
        try:
            return Target({"kind": parsed["kind"], **typed})
        except Exception:
            from toolkit import compat

            # An older TVM may know only the string form; otherwise the dict error stands.
            if isinstance(spec, str) and compat.target_strings_with_options():
                return Target(spec)
            raise
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - TVM raises ValueError/TVMError/RuntimeError here
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"TVM rejects target {original!r}: {first}") from None


def describe(target: Any) -> dict[str, Any]:
    """A JSON-able description of a Target (for reports and manifests)."""
    try:
        return json.loads(str(target))
    except (json.JSONDecodeError, TypeError):
        return {"kind": target.kind.name, "str": str(target)}


def is_gpu(target: Any) -> bool:
    return "gpu" in [str(k) for k in target.keys] or target.kind.name in GPU_KINDS


def device_for(target: Any, index: int = 0) -> Any:
    """The runtime device for target, or DeviceAbsent with what to do instead."""
    import tvm

    kind = target.kind.name
    dev = tvm.device(kind if kind != "llvm" else "cpu", index)
    if not dev.exist:
        raise DeviceAbsent(
            f"no {kind} device {index} on this machine; compile-only work still runs "
            f"('tk compile ... --target {kind}'), running needs the device"
        )
    return dev
