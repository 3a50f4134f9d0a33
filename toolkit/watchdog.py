"""Every wait on a remote peer (a TVM RPC server or tracker) has a bound: tk never hangs on one.

TVM's RPC client waits for a reply in C++ ``recv`` with no timeout of its own, and a server
can die without that connection closing: TVM's Python server serves each session in a forked
process, which keeps the session's socket - and the listening one - open after the server is
killed. So each wait on a peer is a *step* that a watchdog follows, with two bounds:

- liveness: while a step waits, the peer's port is probed every ``Bounds.probe`` seconds; a
  port that refuses connections (or whose host is unreachable) twice in a row means the
  peer is gone.
- progress: a step that gets no reply for ``Bounds.timeout`` seconds has stalled (once a
  session is up, bytes that go through either way count as progress: a long upload is not
  stalled). Callers ask for long work in short calls (a profile's time_evaluator rounds come
  a few seconds' worth at a time), so this bounds one call, never a whole run however long.

Either verdict shuts the step's connections down (``socket.shutdown``: the C++ ``recv``
blocked on one then returns, and TVM raises), and the step ends in ``PeerLost``: one line
naming the peer, what died and what tk was doing. A step that fails by itself is checked
too: a connection the peer closed is reported as that, with what its port says.

Two watchdogs, for two kinds of wait. ``Watchdog`` is a thread of this process: it follows
steps whose connections are made inside them (connecting, a tracker's lease), finding the
new sockets in /proc. Once a session is up, the wait can hold Python's GIL - freeing a remote
object is a remote call, made from a destructor that keeps the GIL - and no thread of this
process runs then; ``OutsideWatchdog`` is a process of its own (``python -m
toolkit.watchdog``), holding duplicates of the session's sockets, told of each step on a pipe.
Linux only (/proc), as tk's worker is. Stdlib only: the CLI reads the defaults here without
loading the compile stack.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from toolkit.errors import TkError

TCP_ESTABLISHED = 1  # <netinet/tcp.h>: tcp_info's first byte while the connection is up
# <linux/tcp.h>: tcp_info's tcpi_bytes_acked and tcpi_bytes_received (u64 each) end here
TCP_INFO_BYTES_END = 136
GONE_AFTER = 2  # refused probes in a row that make a peer gone (one may be a restart's gap)
TICK_S = 0.1  # how often a watchdog looks at the step in flight
PAUSED_S = 2.0  # a gap between a watchdog's looks that it was stopped for, not waiting
SETTLE_S = 0.5  # how long a port that answered as its peer closed is given to follow
# The outside watchdog's pipe: a step began, a step ended (progress); its one answer, the
# reason it cut the connections, is a line back.
BEGIN, END = b"b", b"e"


@dataclass(frozen=True)
class Bounds:
    """How long tk waits on a remote peer (``--rpc-timeout``, ``--rpc-probe``)."""

    timeout: float = 300.0  # seconds one call may go without a reply
    probe: float = 5.0  # seconds between checks that the peer's port takes connections

    @property
    def probe_wait(self) -> float:
        """How long one probe waits for the port to answer: the probe interval, at most 5 s."""
        return min(self.probe, 5.0)


class PeerLost(TkError):
    """A remote peer tk was waiting on died or stopped answering: exit 1, one line."""


# What a probe of a port found, worded for the message.
REFUSED = "its port refuses connections"
UNREACHABLE = "its host is unreachable"
ACCEPTS = "its port still accepts connections"
SILENT = "its port takes no new connection"
UNREACHABLE_ERRNOS = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN}


def try_connect(address: tuple[str, int], wait: float,
            opened: Callable[[socket.socket], None] = lambda sock: None) -> OSError | None:
    """Try a TCP connection to ``address`` (each of its addresses in turn, as
    ``socket.create_connection`` does), ``wait`` seconds at most each, and close it: None when
    the port took it, else the error of the last try. ``opened`` hears of each socket before
    it connects. tk's one way to ask whether a peer's port answers."""
    try:
        infos = socket.getaddrinfo(*address, type=socket.SOCK_STREAM)
    except OSError as e:
        return e
    error: OSError | None = None
    for family, kind, proto, _, where in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                opened(sock)
                sock.settimeout(wait)
                sock.connect(where)
            return None
        except OSError as e:
            error = e
    return error


def probe(address: tuple[str, int], wait: float,
          opened: Callable[[socket.socket], None] = lambda sock: None) -> str:
    """What the port at ``address`` says to a connection attempt (``try_connect``), worded for
    a verdict's message."""
    e = try_connect(address, wait, opened)
    if e is None:
        return ACCEPTS
    if isinstance(e, ConnectionRefusedError):
        return REFUSED
    if isinstance(e, TimeoutError):
        return f"{SILENT} in {wait:g} s"
    if isinstance(e, socket.gaierror) or e.errno in UNREACHABLE_ERRNOS:
        return f"{UNREACHABLE} ({e.strerror or e})"
    return f"its port could not be probed ({e.strerror or e})"


class Verdicts:
    """The two bounds, applied to what a watchdog sees of the steps in flight."""

    def __init__(self, bounds: Bounds, probing: Callable[[], str]) -> None:
        self.bounds, self._probing = bounds, probing
        self.gone, self.next_probe = 0, 0.0
        self._since = self._last = self._paused = 0.0

    def idle(self) -> None:
        self.gone, self.next_probe = 0, 0.0

    def check(self, since: float) -> tuple[bool, str] | None:
        """For a step that began or last made progress at ``since``, when it is to be cut:
        whether it stalled (else the peer is gone), and what the peer's port said."""
        now = time.monotonic()
        if since != self._since:
            self._since, self._paused = since, 0.0
        # A long gap between two looks is time this process was stopped (Ctrl-Z stops tk
        # with its watchdog) or not run, not time the peer failed to answer.
        gap = now - max(self._last, since)
        if gap > PAUSED_S:
            self._paused += gap
        try:
            if now >= self.next_probe:
                self.next_probe = now + self.bounds.probe
                port = self._probing()
                self.gone = self.gone + 1 if port.startswith((REFUSED, UNREACHABLE)) else 0
                if self.gone >= GONE_AFTER:
                    return False, port
            if now - since - self._paused > self.bounds.timeout:
                return True, self._probing()
            return None
        finally:
            self._last = time.monotonic()

    def why(self, stalled: bool, port: str, probed: str = "") -> str:
        """The verdict in words; ``probed`` names the peer whose port it was, where the
        verdict is not about that peer."""
        return f"no reply in {self.bounds.timeout:g} s, the --rpc-timeout; {probed}{port}" \
            if stalled else port


class _Watch(abc.ABC):
    """The step protocol both watchdogs keep: what a step that ends, or fails, means."""

    what: str
    address: tuple[str, int]
    bounds: Bounds
    owned: set[int]  # the conversation with the peer: its TCP sockets (inodes)
    lost: PeerLost | None  # what the last step that failed raised

    @contextlib.contextmanager
    def step(self, doing: str) -> Iterator[None]:
        """Wait on the peer for ``doing`` (words that follow "while")."""
        why = self.verdict()
        if why is not None:  # an earlier step cut the connection
            raise self._lost(doing, why)
        self._begin()
        failed = True
        try:
            yield
            failed = False
        except (PeerLost, KeyboardInterrupt):
            raise
        except Exception:  # noqa: BLE001 - a TVM error may be the peer's death
            why = self.verdict() or self._closed_by_peer()
            if why is not None:
                # TVM's error says only that its socket went (tk cut it, or the peer closed
                # it): no cause to explain or chain, and no TVM bug.
                raise self._lost(doing, why) from None
            raise
        finally:
            self._end(failed)
        why = self.verdict()
        if why is not None:  # it was cut as it returned
            raise self._lost(doing, why)

    def _lost(self, doing: str, why: str) -> PeerLost:
        self.lost = PeerLost(f"{self._who()} stopped answering ({why}) while {doing}")
        return self.lost

    def _who(self) -> str:
        return self.what

    def _closed_by_peer(self) -> str | None:
        """After a failed step: why, when the peer closed the conversation (else the failure
        is the peer's answer, and its own)."""
        fds = _sockets()
        if all(_established(ino, fds) for ino in self.owned):
            return None
        wait = self.bounds.probe_wait
        port = probe(self.address, wait)
        if not port.startswith((REFUSED, UNREACHABLE)):
            # Its other processes may be dying with the one that closed (a kill of the
            # server's group): until then the kernel still queues connections to the port.
            time.sleep(SETTLE_S)
            port = probe(self.address, wait)
        return f"it closed the connection; {port}"

    @abc.abstractmethod
    def verdict(self) -> str | None:
        """Why the watchdog cut the conversation, once it has."""

    @abc.abstractmethod
    def _begin(self) -> None:
        """A step begins."""

    @abc.abstractmethod
    def _end(self, failed: bool) -> None:
        """The step in flight ends (``failed``: by an exception)."""


class Watchdog(_Watch):
    """A thread of this process that follows the steps waiting on one peer (``what``, at
    ``address``); its cut reaches the connections the step made, found in /proc. For waits
    that leave the GIL free: connecting, a tracker's answers, a sleep."""

    def __init__(self, what: str, address: tuple[str, int], bounds: Bounds,
                 stalled: str | None = None) -> None:
        """``stalled`` names what the steps wait on when that is not the peer watched (a
        tuning's measurements wait on servers its tracker leases, in other processes)."""
        self.what, self.address, self.bounds, self.stalled = what, address, bounds, stalled
        self.owned: set[int] = set()
        self.lost: PeerLost | None = None
        self._ends = _ends(*address)  # the peer's (IP, port) as getpeername gives them
        self._lock = threading.Lock()
        self._steps: list[set[int]] = []  # the sockets open before each step in flight
        self._since = 0.0  # when the step in flight began, or last made progress
        self._verdict: str | None = None
        self._blamed: str | None = None  # who stopped answering, when not the peer watched
        self._probes: set[int] = set()  # the thread's own probe sockets, open now
        self._verdicts = Verdicts(bounds, self._probe)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tk-peer-watchdog",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._thread.join()

    def verdict(self) -> str | None:
        return self._verdict

    def handed(self) -> tuple[tuple[str, int], set[int]] | None:
        """The peer the watched one handed tk to (the server a tracker leased): its address
        and the conversation's sockets with it; None when there is none."""
        fds = _sockets()
        for ino in self.owned:
            peer = _peer(ino, fds)
            if peer is not None and peer not in self._ends:
                return peer, {ino}
        return None

    def _who(self) -> str:
        return self._blamed or self.what

    def _begin(self) -> None:
        with self._lock:
            self._steps.append(set(self._sockets()))
            self._since = time.monotonic()

    def _end(self, failed: bool) -> None:
        with self._lock:
            before = self._steps.pop()
            if not failed:  # the connections it made join the conversation
                fds = self._sockets()
                self.owned |= {ino for ino in fds.keys() - before
                               if _peer(ino, fds) is not None}
            self._since = time.monotonic()

    def _sockets(self) -> dict[int, int]:
        return {ino: fd for ino, fd in _sockets().items() if ino not in self._probes}

    def _probe(self) -> str:
        def opened(sock: socket.socket) -> None:  # never taken for a step's connection
            with self._lock:
                self._probes.add(os.fstat(sock.fileno()).st_ino)

        try:
            return probe(self.address, self.bounds.probe_wait, opened)
        finally:
            with self._lock:
                self._probes.clear()

    def _watch(self) -> None:
        while not self._closed.wait(TICK_S):
            with self._lock:
                waiting, since = bool(self._steps), self._since
            if not waiting or self._verdict is not None:
                self._verdicts.idle()
                continue
            verdict = self._verdicts.check(since)
            if verdict is not None:
                self._cut(*verdict)

    def _cut(self, stalled: bool, port: str) -> None:
        """Shut down the step's connections: whatever waits on one returns with an error."""
        with self._lock:
            if not self._steps:
                return  # it ended meanwhile
            fds = self._sockets()
            cut = {ino for ino in fds if ino in self.owned or ino not in self._steps[0]}
            # A connection elsewhere than the watched peer goes to a peer it handed tk to
            # (the server a tracker leased): the step waits on that one.
            handed = [p for p in (_peer(ino, fds) for ino in cut)
                      if p is not None and p not in self._ends]
            why = self._verdicts.why(stalled, port)
            if handed:
                self._blamed = f"the RPC server at {handed[0][0]}:{handed[0][1]} that " \
                               f"{self.what} leased"
            elif stalled and self.stalled is not None:
                self._blamed = self.stalled
                why = self._verdicts.why(stalled, port, f"{self.what}: ")
            self._verdict = why
            for ino in cut:
                _shutdown(ino, fds)


class OutsideWatchdog(_Watch):
    """A process that follows the steps waiting on an established conversation (``owned``,
    with ``what`` at ``address``): it holds duplicates of those sockets, so its cut needs
    nothing of this process - a wait that holds the GIL included."""

    def __init__(self, what: str, address: tuple[str, int], bounds: Bounds,
                 owned: set[int]) -> None:
        from toolkit import process

        self.what, self.address, self.bounds, self.owned = what, address, bounds, owned
        self.lost: PeerLost | None = None
        self._verdict: str | None = None
        fds = [fd for ino, fd in _sockets().items() if ino in owned]
        # It leaves when this process does (its pipe closes), and lives in this session:
        # tk's sweeper finds it however tk ends.
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "toolkit.watchdog", address[0], str(address[1]),
             repr(bounds.timeout), repr(bounds.probe), *map(str, fds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=fds,
            env=process.with_toolkit(dict(os.environ)))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        self._proc.wait()
        assert self._proc.stdout is not None
        self._proc.stdout.close()

    def verdict(self) -> str | None:
        if self._verdict is None:
            out = self._proc.stdout
            assert out is not None
            if select.select([out], [], [], 0)[0]:
                self._verdict = out.readline().decode().strip() or None
        return self._verdict

    def _begin(self) -> None:
        self._tell(BEGIN)

    def _end(self, failed: bool) -> None:
        self._tell(END)

    def _tell(self, what: bytes) -> None:
        with contextlib.suppress(OSError):  # it has cut and left: verdict() says why
            assert self._proc.stdin is not None
            self._proc.stdin.write(what)
            self._proc.stdin.flush()


def _outside(host: str, port: str, timeout: str, probe_s: str, *fds: str) -> None:
    """The outside watchdog's process: steps come as bytes on stdin; a verdict goes out as a
    line on stdout, then every connection it was given is shut down."""
    # A Ctrl-C is tk's to handle (with TK_NO_FORK=1 the terminal sends it here too): this
    # process leaves when tk closes the pipe, whatever tk does with the signal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    address = (host, int(port))
    bounds = Bounds(float(timeout), float(probe_s))
    verdicts = Verdicts(bounds, lambda: probe(address, bounds.probe_wait))
    socks = [socket.socket(fileno=int(fd)) for fd in fds]
    depth, since, moved = 0, 0.0, _traffic(socks)
    stdin = sys.stdin.fileno()
    while True:
        if select.select([stdin], [], [], TICK_S)[0]:
            told = os.read(stdin, 4096)
            if not told:
                return  # tk closed the session, or is gone
            depth += told.count(BEGIN) - told.count(END)
            since = time.monotonic()
        # Bytes that went through count as progress: a large upload on a slow link is a
        # call without a reply for as long as it takes, and never stalled.
        now_moved = _traffic(socks)
        if now_moved != moved:
            since, moved = time.monotonic(), now_moved
        if depth <= 0:
            verdicts.idle()
            continue
        verdict = verdicts.check(since)
        if verdict is not None:
            sys.stdout.write(verdicts.why(*verdict) + "\n")
            sys.stdout.flush()
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            while os.read(stdin, 4096):  # until tk is done with the session
                pass
            return


def _traffic(socks: list[socket.socket]) -> int | None:
    """Bytes the peer acknowledged and sent on ``socks`` so far; None where the kernel does
    not count them (before Linux 4.2)."""
    total = 0
    for sock in socks:
        try:
            info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES_END)
        except OSError:
            return None
        if len(info) < TCP_INFO_BYTES_END:
            return None
        total += sum(struct.unpack_from("=QQ", info, TCP_INFO_BYTES_END - 16))
    return total


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


# Each function below takes ``fds``, one listing of _sockets() made by its caller for all the
# sockets it looks at: listing /proc/self/fd per socket made a cut quadratic in descriptors.

@contextlib.contextmanager
def _tcp(ino: int, fds: dict[int, int]) -> Iterator[socket.socket | None]:
    """This process's TCP socket ``ino`` (through a duplicate descriptor: closing it leaves
    the socket open), or None when it is not open or not TCP."""
    fd = fds.get(ino)
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


def _peer(ino: int, fds: dict[int, int]) -> tuple[str, int] | None:
    """Where TCP socket ``ino`` is connected to."""
    with _tcp(ino, fds) as sock:
        if sock is None:
            return None
        try:
            host, port = sock.getpeername()[:2]
        except OSError:  # not connected
            return None
        return host, port


def _established(ino: int, fds: dict[int, int]) -> bool:
    with _tcp(ino, fds) as sock:
        return sock is not None and \
            sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_ESTABLISHED


def _shutdown(ino: int, fds: dict[int, int]) -> None:
    with _tcp(ino, fds) as sock:
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


if __name__ == "__main__":
    _outside(*sys.argv[1:])
