"""Every wait on a remote peer (a TVM RPC server or tracker) has a bound: tk never hangs on one.

TVM's RPC client waits for a reply in C++ ``recv`` with no timeout of its own, and a server
can die without that connection closing: TVM's Python server serves each session in a forked
process, which keeps the session's socket - and the listening one - open after the server is
killed. So each wait on a peer is a *step* that a watchdog thread follows, with two bounds:

- liveness: while a step waits, the peer's port is probed every ``Bounds.probe`` seconds; a
  port that refuses connections (or whose host is unreachable) twice in a row means the
  peer is gone.
- progress: a step that gets no reply for ``Bounds.timeout`` seconds has stalled. Callers
  ask for long work in short calls (a profile's time_evaluator rounds come a few seconds'
  worth at a time), so this bounds one call, never a whole run however long.

Either verdict shuts the step's connections down (``socket.shutdown`` of this process's
descriptors for them, found in /proc: the C++ ``recv`` blocked on one then returns and TVM
raises), and the step ends in ``PeerLost``: one line naming the peer, what died and what tk
was doing. A step that fails by itself is checked too: a connection the peer closed is
reported as that, with what its port says. Linux only (/proc), as tk's worker is.
Stdlib only: the CLI reads the defaults here without loading the compile stack.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from toolkit.errors import TkError

TCP_ESTABLISHED = 1  # <netinet/tcp.h>: tcp_info's first byte while the connection is up
GONE_AFTER = 2  # refused probes in a row that make a peer gone (one may be a restart's gap)
TICK_S = 0.1  # how often the watchdog looks at the step in flight


@dataclass(frozen=True)
class Bounds:
    """How long tk waits on a remote peer (``--rpc-timeout``, ``--rpc-probe``)."""

    timeout: float = 300.0  # seconds one call may go without a reply
    probe: float = 5.0  # seconds between checks that the peer's port takes connections


class PeerLost(TkError):
    """A remote peer tk was waiting on died or stopped answering: exit 1, one line."""


# What a probe of a port found, worded for the message.
REFUSED = "its port refuses connections"
UNREACHABLE = "its host is unreachable"
ACCEPTS = "its port still accepts connections"
SILENT = "its port takes no new connection"
UNREACHABLE_ERRNOS = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN}


class Watchdog:
    """Follows the steps that wait on one peer (``what``, at ``address``) and ends those
    that exceed ``bounds``. A thread of its own until ``close``."""

    def __init__(self, what: str, address: tuple[str, int], bounds: Bounds,
                 owned: set[int] | None = None, stalled: str | None = None) -> None:
        """``stalled`` names what the steps wait on when that is not the peer watched (a
        tuning's measurements wait on servers its tracker leases, in other processes)."""
        self.what, self.address, self.bounds, self.stalled = what, address, bounds, stalled
        # The conversation with the peer: its TCP sockets (inodes), those its steps opened.
        self.owned: set[int] = set(owned or ())
        self.lost: PeerLost | None = None  # what the last step that failed raised
        self._ends = _ends(*address)  # the peer's (IP, port) as getpeername gives them
        self._lock = threading.Lock()
        self._steps: list[tuple[str, set[int]]] = []  # (doing, sockets open before), nested
        self._since = 0.0  # when the step in flight began, or last made progress
        self._verdict: str | None = None
        self._who: str | None = None  # a peer the watched one handed tk to (a leased server)
        self._probes: set[int] = set()  # the watchdog's own probe sockets, open now
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tk-peer-watchdog",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._thread.join()

    @property
    def verdict(self) -> str | None:
        """Why the watchdog ended the step in flight, once it has."""
        return self._verdict

    @contextlib.contextmanager
    def step(self, doing: str) -> Iterator[None]:
        """Wait on the peer for ``doing`` (words that follow "while"); the connections the
        step opens join the conversation. A step inside another is the outer one's progress."""
        with self._lock:
            if self._verdict is not None:  # an earlier step cut the connection
                raise self._lost(doing, self._verdict)
            self._steps.append((doing, self._sockets()))
            self._since = time.monotonic()
        failed = True
        try:
            yield
            failed = False
        except (PeerLost, KeyboardInterrupt):
            raise
        except Exception:  # noqa: BLE001 - a TVM error may be the peer's death
            why = self._verdict or self._closed_by_peer()
            if why is not None:
                # TVM's error says only that its socket went (tk cut it, or the peer closed
                # it): no cause to explain or chain, and no TVM bug.
                raise self._lost(doing, why) from None
            raise
        finally:
            with self._lock:
                _, before = self._steps.pop()
                if not failed:
                    self.owned |= {ino for ino in self._sockets() - before
                                   if _peer(ino) is not None}
                self._since = time.monotonic()
        if self._verdict is not None:  # it was cut as it returned
            raise self._lost(doing, self._verdict)

    def handed(self) -> tuple[tuple[str, int], set[int]] | None:
        """The peer the watched one handed tk to (the server a tracker leased): its address
        and the conversation's sockets with it; None when there is none."""
        for ino in self.owned:
            peer = _peer(ino)
            if peer is not None and peer not in self._ends:
                return peer, {ino}
        return None

    def _lost(self, doing: str, why: str) -> PeerLost:
        self.lost = PeerLost(f"{self._who or self.what} stopped answering ({why}) while "
                             f"{doing}")
        return self.lost

    def _closed_by_peer(self) -> str | None:
        """After a failed step: why, when the peer closed the conversation (else the failure
        is the peer's answer, and its own)."""
        if all(_established(ino) for ino in self.owned):
            return None
        return f"it closed the connection; {self._probe()}"

    def _sockets(self) -> set[int]:
        return set(_sockets()) - self._probes

    # --- the watchdog's thread ----------------------------------------------------------

    def _watch(self) -> None:
        gone, next_probe = 0, 0.0
        while not self._closed.wait(TICK_S):
            with self._lock:
                waiting, since = bool(self._steps), self._since
            if not waiting or self._verdict is not None:
                gone, next_probe = 0, 0.0
                continue
            now = time.monotonic()
            if now >= next_probe:
                next_probe = now + self.bounds.probe
                port = self._probe()
                gone = gone + 1 if port.startswith((REFUSED, UNREACHABLE)) else 0
                if gone >= GONE_AFTER:
                    self._cut(port)
                    continue
            if now - since > self.bounds.timeout:
                port = self._probe() if self.stalled is None else \
                    f"{self.what}: {self._probe()}"
                self._cut(f"no reply in {self.bounds.timeout:g} s, the --rpc-timeout; {port}",
                          self.stalled)

    def _probe(self) -> str:
        """What the peer's port says to a connection attempt."""
        wait = min(self.bounds.probe, 5.0)
        try:
            family, kind, proto, _, address = socket.getaddrinfo(
                *self.address, type=socket.SOCK_STREAM)[0]
        except OSError as e:
            return f"{UNREACHABLE} ({e.strerror or e})"
        with self._lock:  # a step's listing of sockets never takes a probe's for the peer's
            sock = socket.socket(family, kind, proto)
            ino = os.fstat(sock.fileno()).st_ino
            self._probes.add(ino)
        try:
            sock.settimeout(wait)
            sock.connect(address)
        except ConnectionRefusedError:
            return REFUSED
        except TimeoutError:
            return f"{SILENT} in {wait:g} s"
        except OSError as e:
            if e.errno in UNREACHABLE_ERRNOS:
                return f"{UNREACHABLE} ({e.strerror})"
            return f"its port could not be probed ({e.strerror or e})"
        finally:
            sock.close()
            with self._lock:
                self._probes.discard(ino)
        return ACCEPTS

    def _cut(self, why: str, who: str | None = None) -> None:
        """Shut down the step's connections: whatever waits on one returns with an error.
        ``who`` stopped answering, when that is not the watched peer."""
        with self._lock:
            if not self._steps:
                return  # it ended meanwhile
            before = self._steps[0][1]
            cut = {ino for ino in self._sockets() if ino in self.owned or ino not in before}
            # A connection elsewhere than the watched peer goes to a peer it handed tk to
            # (the server a tracker leased): the step waits on that one.
            handed = [p for p in map(_peer, cut) if p is not None and p not in self._ends]
            if handed:
                who = f"the RPC server at {handed[0][0]}:{handed[0][1]} that {self.what} leased"
            self._who = who
            self._verdict = why
            for ino in cut:
                _shutdown(ino)


# --- this process's sockets, from /proc -------------------------------------------------


def _sockets() -> dict[int, int]:
    """This process's open sockets: inode -> descriptor."""
    found = {}
    try:
        names = os.listdir("/proc/self/fd")
    except FileNotFoundError:  # not Linux: nothing to cut, the bounds apply between calls
        return found
    for name in names:
        try:
            link = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor, too)
        if link.startswith("socket:["):
            found[int(link[8:-1])] = int(name)
    return found


@contextlib.contextmanager
def _tcp(ino: int) -> Iterator[socket.socket | None]:
    """This process's TCP socket ``ino`` (through a duplicate descriptor: closing it leaves
    the socket open), or None when it is not open or not TCP."""
    fd = _sockets().get(ino)
    try:
        dup = os.dup(fd) if fd is not None else None
    except OSError:
        dup = None
    if dup is None:
        yield None
        return
    try:
        if os.fstat(dup).st_ino != ino:  # the descriptor was reused meanwhile
            raise OSError
        sock = socket.socket(fileno=dup)
    except OSError:
        os.close(dup)
        yield None
        return
    with sock:
        tcp = sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
        yield sock if tcp else None


def _peer(ino: int) -> tuple[str, int] | None:
    """Where TCP socket ``ino`` is connected to."""
    with _tcp(ino) as sock:
        if sock is None:
            return None
        try:
            host, port = sock.getpeername()[:2]
        except OSError:  # not connected
            return None
        return host, port


def _established(ino: int) -> bool:
    with _tcp(ino) as sock:
        return sock is not None and \
            sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_ESTABLISHED


def _shutdown(ino: int) -> None:
    with _tcp(ino) as sock:
        if sock is not None:
            with contextlib.suppress(OSError):  # not connected (yet, or any more)
                sock.shutdown(socket.SHUT_RDWR)


def _ends(host: str, port: int) -> set[tuple[str, int]]:
    """The (IP address, port) pairs ``host:port`` stands for, as getpeername gives them."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return {(host, port)}
    return {(info[4][0], port) for info in infos}
