"""Remote devices over TVM RPC: a server named directly, or one leased from a tracker by key.

The compiled library is exported here (by a cross compiler when the target is another
architecture), uploaded, loaded by the server's runtime and run on its device; inputs and
outputs travel as tensors. Addresses are probed with a short socket connect first: TVM's
own connect retries for a minute, and a tracker request for an unknown key waits forever.
"""

from __future__ import annotations

import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.cause import one_line
from toolkit.errors import DeviceAbsent, UserError
from toolkit.stack import target as targets

CONNECT_TIMEOUT_S = 5.0


def parse_address(text: str, flag: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise UserError(f"{flag} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9190")
    return host, int(port)


def _probe(host: str, port: int, what: str) -> None:
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise UserError(f"{what} at {host}:{port} does not answer ({e.strerror or e})") from None


@dataclass
class Session:
    address: str  # what the user named: HOST:PORT, or KEY@TRACKER
    rpc: Any  # tvm.rpc.RPCSession

    def device(self, target: Any) -> Any:
        """The server's device for ``target``; refused when the server has none."""
        kind = targets.device_kind(target)
        dev = self.rpc.device(kind, 0)
        if not dev.exist:
            raise DeviceAbsent(f"the RPC server at {self.address} has no {kind} device 0")
        return dev

    def load(self, compiled: Any) -> tuple[Any, Any]:
        """Upload ``compiled``'s library, load it remotely: (remote module, remote device)."""
        from toolkit import stack

        dev = self.device(compiled.target)
        library = compiled.workload.library
        with tempfile.TemporaryDirectory(prefix="tk-rpc-") as tmp:
            if library is None:
                library = Path(tmp) / "module.so"
                stack.write_library(compiled, library)
            self.rpc.upload(str(library), "tk_module.so")
        return self.rpc.load_module("tk_module.so"), dev

    def load_kernels(self, compiled: Any) -> Any:
        """The compiled kernels alone (the library a VM executable imports), uploaded and
        loaded remotely: a loaded VM executable resolves VM functions by name, not kernels."""
        from toolkit import stack

        kernels = compiled.executable.mod.imports[0]
        with tempfile.TemporaryDirectory(prefix="tk-rpc-") as tmp:
            library = Path(tmp) / "kernels.so"
            stack.write_library(compiled, library, module=kernels)
            self.rpc.upload(str(library), "tk_kernels.so")
        return self.rpc.load_module("tk_kernels.so")


def connect(rpc: str | None = None, tracker: str | None = None, key: str | None = None,
            session_timeout: int = 600) -> Session:
    """A session with an RPC server (``rpc``), or with one the tracker leases for ``key``."""
    from tvm import rpc as tvm_rpc

    if rpc and tracker:
        raise UserError("give --rpc HOST:PORT or --tracker HOST:PORT --key KEY, not both")
    if rpc:
        if key:
            raise UserError("--key goes with --tracker; --rpc names the server itself")
        host, port = parse_address(rpc, "--rpc")
        _probe(host, port, "the RPC server")
        try:
            session = tvm_rpc.connect(host, port, session_timeout=session_timeout)
        except Exception as e:  # noqa: BLE001 - something answered, but not an RPC server
            why = one_line(e)
            if "matches key" in str(e):  # it takes only clients its tracker sends
                raise UserError(f"the RPC server at {rpc} is registered with a tracker and "
                                f"serves only through it: use --tracker HOST:PORT --key KEY"
                                ) from None
            raise UserError(f"--rpc {rpc}: not a TVM RPC server ({why})") from None
        return Session(rpc, session)
    client = _tracker(tracker, key)
    try:
        session = client.request(key, priority=1, session_timeout=session_timeout, max_retry=2)
    except Exception as e:  # noqa: BLE001 - the tracker could not lease a server
        raise UserError(f"the tracker at {tracker} could not lease a {key!r} server "
                        f"({one_line(e)})") from None
    return Session(f"{key}@{tracker}", session)


def _tracker(tracker: str | None, key: str | None) -> Any:
    """A tracker client, once the tracker answers and has a server registered for ``key``."""
    from tvm import rpc as tvm_rpc

    if not tracker:
        raise UserError("--key goes with --tracker HOST:PORT")
    if not key:
        raise UserError("--tracker needs --key (the device key servers registered with)")
    host, port = parse_address(tracker, "--tracker")
    _probe(host, port, "the RPC tracker")
    try:
        client = tvm_rpc.connect_tracker(host, port)
        queues = client.summary().get("queue_info", {})
    except Exception as e:  # noqa: BLE001
        raise UserError(f"--tracker {tracker}: not a TVM RPC tracker ({one_line(e)})"
                        ) from None
    if key not in queues:
        known = ", ".join(sorted(queues)) or "none"
        raise UserError(f"the tracker at {tracker} has no server with key {key!r} "
                        f"(keys: {known})")
    return client


def tuning_runner(rpc: str | None = None, tracker: str | None = None,
                  key: str | None = None) -> Any:
    """MetaSchedule's RPC runner, measuring on servers the tracker leases for ``key``."""
    from toolkit.stack import tune

    if rpc:
        raise UserError("tuning measures through a tracker (MetaSchedule's RPC runner leases "
                        "servers from one): use --tracker HOST:PORT --key KEY")
    _tracker(tracker, key)
    assert tracker is not None
    host, port = parse_address(tracker, "--tracker")
    ms = tune.meta_schedule()
    config = ms.runner.RPCConfig(tracker_host=host, tracker_port=port, tracker_key=key,
                                 session_timeout_sec=tune.RUN_TIMEOUT_S)
    return ms.runner.RPCRunner(rpc_config=config)
