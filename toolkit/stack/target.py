"""Targets handed to the TVM at hand: typed options, the form it accepts, its device.

The parsing of either form (string or dict/JSON) is host-side and pure (``toolkit.target_spec``);
this is the half that needs tvm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolkit.errors import DeviceAbsent, UserError
from toolkit.target_spec import GPU_KINDS, parse

HOST_KINDS = ("llvm", "c")  # code generators whose code runs on the host CPU


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
            from toolkit.stack import compat

            # An older TVM may know only the string form; otherwise the dict error stands.
            if isinstance(spec, str) and compat.target_strings_with_options():
                return Target(spec)
            raise
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - TVM raises ValueError/TVMError/RuntimeError here
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "is not defined" in first:  # perhaps a device an extension brings (tk ext new)
            first += " (an extension's device? load the extension first: --ext DIR)"
        raise UserError(f"TVM rejects target {original!r}: {first}") from None


@dataclass(frozen=True)
class Target:
    """A target parsed once, at the edge: as the user spelled it (for messages and reproduce
    lines) and as the TVM at hand takes it. Model-level commands make one and pass it down."""

    spec: str  # the user's string, or the JSON of a dict target
    tvm: Any  # tvm.target.Target

    @property
    def kind(self) -> str:
        return self.tvm.kind.name

    @property
    def gpu(self) -> bool:
        return is_gpu(self.tvm)


def resolve(target: str | dict[str, Any] | Target) -> Target:
    """``target`` as a ``Target``; one already made is returned as it is, not parsed again."""
    if isinstance(target, Target):
        return target
    spec = target if isinstance(target, str) else json.dumps(target)
    return Target(spec, to_tvm(target))


def describe(target: Any) -> dict[str, Any]:
    """A JSON-able description of a Target (for reports and manifests)."""
    try:
        return json.loads(str(target))
    except (json.JSONDecodeError, TypeError):
        return {"kind": target.kind.name, "str": str(target)}


def is_gpu(target: Any) -> bool:
    return "gpu" in [str(k) for k in target.keys] or target.kind.name in GPU_KINDS


def device_kind(target: Any) -> str:
    """The runtime device type a target's code runs on: ``cpu`` for llvm and c."""
    kind = target.kind.name
    return "cpu" if kind in HOST_KINDS else kind


def device_for(target: Any, index: int = 0) -> Any:
    """The runtime device for target, or DeviceAbsent with what to do instead."""
    import tvm

    kind = target.kind.name
    dev = tvm.device(device_kind(target), index)
    if not dev.exist:
        raise DeviceAbsent(
            f"no {kind} device {index} on this machine; compile-only work still runs "
            f"('tk compile ... --target {kind}'), running needs the device"
        )
    return dev
