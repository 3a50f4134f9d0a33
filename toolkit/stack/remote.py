"""Remote devices over TVM RPC: a server named directly, or one leased from a tracker by key.

The compiled library is exported here (by a cross compiler when the target is another
architecture), uploaded, loaded by the server's runtime and run on its device; inputs and
outputs travel as tensors. Addresses are probed with a short socket connect first: TVM's
own connect retries for a minute. Every wait on a server or tracker after that is a step of
a ``toolkit.watchdog.Watchdog``, so a peer that dies or stops answering ends the command with
one line (``PeerLost``), within ``Remote.bounds``; tk asks the server for no session time
limit of its own, which would cut a long run short.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.cause import one_line
from toolkit.errors import DeviceAbsent, TvmFailure, UserError
from toolkit.stack import target as targets
from toolkit.watchdog import Bounds, OutsideWatchdog, PeerLost, Watchdog, try_connect

CONNECT_TIMEOUT_S = 5.0
POLL_S = 0.1  # how often a wait for a tuning measurement looks at its watchdog


@dataclass(frozen=True)
class Remote:
    """Where a command's device is - an RPC server (``rpc``), or a tracker and the key its
    servers registered - and how long tk waits on them."""

    rpc: str | None = None
    tracker: str | None = None
    key: str | None = None
    bounds: Bounds = field(default_factory=Bounds)

    def flags(self) -> list[str]:
        """The command-line options that name this remote (for reproduce lines)."""
        words = ["--rpc", self.rpc] if self.rpc else \
            ["--tracker", str(self.tracker), "--key", str(self.key)]
        if self.bounds.timeout != Bounds.timeout:
            words += ["--rpc-timeout", f"{self.bounds.timeout:g}"]
        if self.bounds.probe != Bounds.probe:
            words += ["--rpc-probe", f"{self.bounds.probe:g}"]
        return words


def parse_address(text: str, flag: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise UserError(f"{flag} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9190")
    return host, int(port)


def _probe(host: str, port: int, what: str) -> None:
    error = try_connect((host, port), CONNECT_TIMEOUT_S)
    if error is not None:
        raise UserError(f"{what} at {host}:{port} does not answer ({error.strerror or error})")


@dataclass
class Session:
    address: str  # what the user named: HOST:PORT, or KEY@TRACKER
    rpc: Any  # tvm.rpc.RPCSession
    remote: Remote
    watch: OutsideWatchdog  # every call on ``rpc`` waits in one of its steps

    def step(self, doing: str) -> contextlib.AbstractContextManager[None]:
        """Wait on the server for ``doing`` (words that follow "while"), within the bounds."""
        return self.watch.step(doing)

    def close(self) -> None:
        self.watch.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def device(self, target: Any) -> Any:
        """The server's device for ``target``; refused when the server has none."""
        kind = targets.device_kind(target)
        with self.step(f"asking for its {kind} device"):
            dev = self.rpc.device(kind, 0)
            exists = dev.exist
        if not exists:
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
            return self._upload(library, "tk_module.so"), dev

    def load_kernels(self, compiled: Any) -> Any:
        """The compiled kernels alone (the library a VM executable imports), uploaded and
        loaded remotely: a loaded VM executable resolves VM functions by name, not kernels."""
        from toolkit import stack

        kernels = compiled.executable.mod.imports[0]
        with tempfile.TemporaryDirectory(prefix="tk-rpc-") as tmp:
            library = Path(tmp) / "kernels.so"
            stack.write_library(compiled, library, module=kernels)
            return self._upload(library, "tk_kernels.so")

    def _upload(self, library: Path, name: str) -> Any:
        with self.step(f"uploading {name}"):
            self.rpc.upload(str(library), name)
        with self.step(f"loading {name}"):
            return self.rpc.load_module(name)


def connect(remote: Remote) -> Session:
    """A session with the RPC server ``remote.rpc``, or with one the tracker leases for
    ``remote.key``."""
    from tvm import rpc as tvm_rpc

    if remote.rpc and remote.tracker:
        raise UserError("give --rpc HOST:PORT or --tracker HOST:PORT --key KEY, not both")
    if remote.rpc:
        if remote.key:
            raise UserError("--key goes with --tracker; --rpc names the server itself")
        host, port = parse_address(remote.rpc, "--rpc")
        _probe(host, port, "the RPC server")
        what = f"the RPC server at {remote.rpc}"
        watch = Watchdog(what, (host, port), remote.bounds)
        try:
            with watch.step("connecting"):
                session = tvm_rpc.connect(host, port)
        except PeerLost:
            raise
        except Exception as e:  # noqa: BLE001 - something answered, but not an RPC server
            why = one_line(e)
            if "matches key" in str(e):  # it takes only clients its tracker sends
                raise UserError(f"the RPC server at {remote.rpc} is registered with a tracker "
                                f"and serves only through it: use --tracker HOST:PORT --key KEY"
                                ) from None
            raise UserError(f"--rpc {remote.rpc}: not a TVM RPC server ({why})") from None
        finally:
            watch.close()
        return Session(remote.rpc, session, remote,
                       OutsideWatchdog(what, (host, port), remote.bounds, watch.owned))
    with _tracker(remote) as (client, watch):
        try:
            with watch.step(f"leasing a {remote.key!r} server"):
                # One try: a retry reconnects with TVM's own minute of retries.
                session = client.request(remote.key, priority=1, max_retry=1)
        except PeerLost:
            raise
        except Exception as e:  # noqa: BLE001 - the tracker could not lease a server
            raise UserError(f"the tracker at {remote.tracker} could not lease a "
                            f"{remote.key!r} server ({one_line(e)})") from None
        client.close()
        handed = watch.handed()
    assert handed is not None, "a leased session is a connection to the server"
    (host, port), owned = handed
    server = OutsideWatchdog(f"the RPC server at {host}:{port} (key {remote.key!r}, leased "
                             f"from the tracker at {remote.tracker})", (host, port),
                             remote.bounds, owned)
    return Session(f"{remote.key}@{remote.tracker}", session, remote, server)


@contextlib.contextmanager
def _tracker(remote: Remote) -> Iterator[tuple[Any, Watchdog]]:
    """A tracker client, once the tracker answers and has a server registered for the key,
    and the watchdog its steps wait in."""
    from tvm import rpc as tvm_rpc

    if not remote.tracker:
        raise UserError("--key goes with --tracker HOST:PORT")
    if not remote.key:
        raise UserError("--tracker needs --key (the device key servers registered with)")
    host, port = parse_address(remote.tracker, "--tracker")
    _probe(host, port, "the RPC tracker")
    watch = Watchdog(f"the RPC tracker at {remote.tracker}", (host, port), remote.bounds)
    try:
        try:
            with watch.step("asking for its servers"):
                client = tvm_rpc.connect_tracker(host, port)
                queues = client.summary().get("queue_info", {})
        except PeerLost:
            raise
        except Exception as e:  # noqa: BLE001
            raise UserError(f"--tracker {remote.tracker}: not a TVM RPC tracker "
                            f"({one_line(e)})") from None
        if remote.key not in queues:
            known = ", ".join(sorted(queues)) or "none"
            raise UserError(f"the tracker at {remote.tracker} has no server with key "
                            f"{remote.key!r} (keys: {known})")
        yield client, watch
    finally:
        watch.close()


@contextlib.contextmanager
def tuning_runner(remote: Remote) -> Iterator[Any]:
    """MetaSchedule's RPC runner, measuring on servers the tracker leases for the key, for
    ``tune.tune(runner=...)`` inside this block. Each measurement is waited for in a step of
    a watchdog on the tracker: the runner's own workers wait on a dead tracker for a minute a
    candidate, and on a dead server for ever. A tuning that fails once the watchdog gave up
    ends in its ``PeerLost``."""
    from toolkit.stack import tune

    if remote.rpc:
        raise UserError("tuning measures through a tracker (MetaSchedule's RPC runner leases "
                        "servers from one): use --tracker HOST:PORT --key KEY")
    with _tracker(remote) as (client, checked):
        client.close()
    host, port = checked.address  # parsed and probed by _tracker
    ms = tune.meta_schedule()
    config = ms.runner.RPCConfig(tracker_host=host, tracker_port=port, tracker_key=remote.key,
                                 session_timeout_sec=tune.RUN_TIMEOUT_S)
    runner = ms.runner.RPCRunner(rpc_config=config)
    watch = Watchdog(f"the RPC tracker at {remote.tracker}", (host, port), remote.bounds,
                     stalled=f"a {remote.key!r} server leased from the RPC tracker at "
                             f"{remote.tracker}")
    doing = f"measuring tuning candidates on {remote.key!r} servers"

    @tune.derived_object(ms)
    class WatchedFuture(ms.runner.PyRunnerFuture):
        def __init__(self, future: Any) -> None:
            super().__init__()
            self.future = future

        def done(self) -> bool:
            return self.future.done()

        def result(self) -> Any:
            with watch.step(doing):
                while not self.future.done() and watch.verdict() is None:
                    time.sleep(POLL_S)
            return self.future.result()

    @tune.derived_object(ms)
    class WatchedRunner(ms.runner.PyRunner):
        def run(self, runner_inputs: Any) -> list[Any]:
            return [WatchedFuture(f) for f in runner.run(runner_inputs)]

    try:
        yield WatchedRunner()
    except TvmFailure:
        if watch.lost is None:
            raise
        # PeerLost, raised in a wait above, came back through TVM's C++ as its own error.
        raise watch.lost from None
    finally:
        watch.close()
