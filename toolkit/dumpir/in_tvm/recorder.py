"""The pass instrument: what every pass of a compile did to each function, at low cost.

Change is decided per function by object identity first (a pass that did not touch a
function hands back the same object), then by the fields of a new object (a copy whose
fields are the old object's is the same function: ``compat.same_children``) and by
structural hash last. Nothing is printed while ``tk dump-ir`` compiles: printing is the cost
(on the 0.27 wheel one ``.script()`` takes 0.16 ms plus 0.09 ms a KB, about 0.56 times the
plain compile for every version of builtin:mlp40) where the field check takes microseconds
and a hash 60 us. Each version not seen before gets a version key (``store.version_key``)
from a second structural hash that maps free variables (the GlobalVars a Relax function
calls are hashed by address otherwise, which differs from one process to the next), so the
same compile run again gives the same keys. Rendering (``render.py``) runs the compile again
with ``wanted`` set: the recorder then prints each version whose key is wanted.

The hooks take a snapshot (name -> function object; read again only when the module's
function map changed) and time the pass; hashing (and printing, when rendering) are jobs run
in pass order. With more than one core to run on they run in a worker thread: TVM's FFI
releases the GIL during calls, so that work overlaps the compile (LLVM codegen alone is most
of it). On one core a thread only adds switching, so the hooks run each job themselves.
Holding the snapshots keeps the objects alive, and a live reference also stops a pass from
mutating one in place (TVM copies on write when shared).
"""

from __future__ import annotations

import fnmatch
import os
import queue
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from toolkit.dumpir.index import (
    CHANGED,
    DEVICE,
    HOST,
    MAIN,
    OWN,
    UNCHANGED,
    WRAPPER,
    FuncChange,
    PassRecord,
    Rename,
    classify,
)
from toolkit.dumpir.store import version_key, write_atomic
from toolkit.stack import compat
from toolkit.stack.compat import same_children
from toolkit.stack.numbering import Functions, PassNumbering, Snapshots

# Handles of recently seen function objects -> (object, structural hash). Keeping the object
# alive keeps its address from being reused; the bound keeps memory flat on deep models.
HANDLE_CACHE_SIZE = 8192

# The worker runs only while the compile thread sits in one C++ call (LLVM codegen, a slow
# pass), which releases the GIL: its Python frame has not moved for PARKED_SECONDS. While the
# compile runs Python (between passes, Python-level passes) the two threads would fight over
# the GIL and the compile would slow down more than the worker gains. Re-checked every
# RECHECK_SECONDS of work.
PARKED_SECONDS = 0.003
RECHECK_SECONDS = 0.02


@dataclass
class _Frame:
    record: PassRecord
    mod: Any
    funcs: Functions
    start: float
    overhead_at_start: float
    children: int = 0
    last_out: Functions | None = None  # the last nested pass's output


class StopBeforePass(Exception):
    """Raised from the hook of the pass named by ``Recorder.stop_before``: it fails there as
    a pass that raised would, with its input kept."""


@dataclass
class Recorder:
    """Receives the instrument's hooks and builds the pass records of one compile.

    Call :meth:`finish` once the compile returned or raised: it waits for the worker.
    """

    modules_dir: Path | None = None  # --all: every leaf's full module goes here too
    pass_glob: str | None = None
    func_glob: str | None = None
    journal: TextIO | None = None  # pass starts and ends, flushed: survives a crash
    records: list[PassRecord] = field(default_factory=list)
    input: dict[str, str | None] | None = None
    overhead: float = 0.0  # seconds spent in the hooks, on the compile's own thread
    worker_seconds: float = 0.0  # hashing, printing, writing: in the worker, or in the hooks
    internal_error: BaseException | None = None
    # (seq, name): raise StopBeforePass when that pass starts, its module snapshotted, the
    # pass not run. The second run after a crash stops there, before the pass that crashed.
    stop_before: tuple[int, str] | None = None
    stopped: PassRecord | None = None  # the pass it stopped before
    # Rendering: the version keys whose texts to print (an index's), and the texts printed.
    wanted: frozenset[str] | None = None
    texts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._hash: Callable[..., int] = compat.structural_hash()
        self._print: Callable[[Any, str], str] = compat.script_printer()
        self._stack: list[_Frame] = []
        self._numbering = PassNumbering(self._hash)
        self._snapshot = Snapshots()
        self._by_handle: OrderedDict[int, tuple[Any, int]] = OrderedDict()
        self._keys: dict[tuple[int, str], str] = {}
        self._ordinals: dict[tuple[int, str], int] = {}  # versions per (stable hash, name)
        self._last_funcs: Functions | None = None  # the last leaf's output and its hashes
        self._last_output: dict[str, int] | None = None
        self._lane: tuple[str, str | None] | None = None
        self._inputs: list[tuple[PassRecord, dict[str, int]]] = []
        self._jobs: queue.SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._compile_thread = threading.get_ident()
        self._compile_done = False
        self._checked = 0.0
        self._worker: threading.Thread | None = None
        if _cores() > 1:
            self._worker = threading.Thread(target=self._work, name="tk-dump-ir", daemon=True)
            self._worker.start()

    # -- hooks (compile thread) --------------------------------------------------------

    def before(self, mod: Any, name: str) -> None:
        t0 = time.perf_counter()
        parent = self._stack[-1] if self._stack else None
        funcs = self._snapshot(mod)
        own, seq = self._numbering.start(funcs)
        if parent is not None:
            if own is not None:  # the wrapper changed the module before its first nested pass
                self._own_work(own, parent.record, parent.funcs, funcs, mod)
            parent.children += 1
        record = PassRecord(
            seq=seq, name=name, depth=len(self._stack),
            parent=parent.record.seq if parent else None,
            stored=self.pass_glob is None or fnmatch.fnmatchcase(name, self.pass_glob),
        )
        self.records.append(record)
        if self.journal is not None:
            self.journal.write(f"+{record.seq} {name}\n")
            self.journal.flush()
        if record.seq == 0:
            self._submit(self._input, funcs, mod)
        now = time.perf_counter()
        self.overhead += now - t0
        self._stack.append(_Frame(record, mod, funcs, now, self.overhead))
        if self.stop_before == (record.seq, name):
            self.stopped = record
            raise StopBeforePass(f"tk stopped the compile before pass {name} (#{record.seq})")

    def after(self, mod: Any, name: str) -> None:
        t0 = time.perf_counter()
        frame = self._stack.pop()
        record = frame.record
        if self.journal is not None:
            self.journal.write(f"-{record.seq}\n")
            self.journal.flush()
        record.seconds = round(t0 - frame.start - (self.overhead - frame.overhead_at_start), 6)
        funcs = self._snapshot(mod)
        record.functions = len(funcs)
        own = self._numbering.end(funcs)
        if frame.children:
            record.kind = WRAPPER
            self._submit(self._wrapper, record, frame.funcs, funcs)
            if own is not None:  # the wrapper changed the module after its last nested pass
                assert frame.last_out is not None
                self._own_work(own, record, frame.last_out, funcs, mod)
        else:
            self._submit(self._leaf, record, frame.funcs, funcs, mod)
        if self._stack:
            self._stack[-1].last_out = funcs
        self.overhead += time.perf_counter() - t0

    def _own_work(self, seq: int, wrapper: PassRecord, before: Functions,
                  after: Functions, mod: Any) -> None:
        """A record for what a wrapper did itself, between two of its module snapshots."""
        record = PassRecord(
            seq=seq, name=wrapper.name, depth=wrapper.depth + 1,
            parent=wrapper.seq, kind=OWN, stored=wrapper.stored, functions=len(after),
        )
        self.records.append(record)
        self._submit(self._leaf, record, before, after, mod)

    # -- after the compile -------------------------------------------------------------

    def finish(self) -> None:
        """Wait until every snapshot is hashed, printed and stored."""
        self._compile_done = True
        if self._worker is not None:
            self._jobs.put(None)
            self._worker.join()
        if self.internal_error is not None:
            raise self.internal_error

    def inputs_of(self, name: str) -> list[tuple[PassRecord, dict[str, int]]]:
        """(record, structural hash of each function it received) of every leaf so named."""
        return [(r, vids) for r, vids in self._inputs if r.name == name]

    def fail(self, error: str, at: float) -> _Frame | None:
        """Mark the passes still open (the one that raised and its wrappers) as failed.

        ``at`` is when the compile raised (``time.perf_counter()``): the passes ran until then.
        Returns the innermost one: its ``mod`` is the module as the failing pass received it.
        """
        for frame in self._stack:
            frame.record.status = "failed"
            if frame.children:
                frame.record.kind = WRAPPER  # it never reached after(), which says so otherwise
            frame.record.seconds = round(
                at - frame.start - (self.overhead - frame.overhead_at_start), 6)
        if not self._stack:
            return None
        innermost = self._stack[-1]
        innermost.record.error = error
        self._stack.clear()
        self._numbering.abandon()
        return innermost

    # -- jobs: in the worker thread, or in the hooks on one core ----------------------

    def _submit(self, job: Callable[..., None], *args: Any) -> None:
        if self._worker is not None:
            self._jobs.put((job, args))
            return
        start = time.perf_counter()
        try:
            job(*args)
        finally:
            self.worker_seconds += time.perf_counter() - start

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            if self.internal_error is not None:
                continue  # drain: the compile thread learns of the error in finish()
            start = time.perf_counter()
            try:
                job[0](*job[1])
            except BaseException as e:  # noqa: BLE001 - handed to the compile thread
                self.internal_error = e
            self.worker_seconds += time.perf_counter() - start

    def _wait_for_compile_to_park(self) -> None:
        """Return once the compile thread is parked in C++ (or finished); at once when the
        jobs run on the compile thread itself."""
        if (self._worker is None or self._compile_done
                or time.perf_counter() - self._checked < RECHECK_SECONDS):
            return
        while not self._compile_done:
            first = _position(self._compile_thread)
            time.sleep(PARKED_SECONDS)
            if first is not None and first == _position(self._compile_thread):
                break
        self._checked = time.perf_counter()

    def _input(self, funcs: Functions, mod: Any) -> None:
        self.input = {n: self._key(f, n) for n, f in funcs.items()}
        if self.modules_dir is not None:
            self._write_module("input", mod)

    def _vid(self, func: Any, like: Any = None) -> int:
        """The function's structural hash, skipped when this very object was hashed before
        or when it holds the very children of ``like`` (the version it replaces)."""
        handle = compat.object_handle(func)
        hit = self._by_handle.get(handle)
        if hit is not None and hit[0].same_as(func):
            self._by_handle.move_to_end(handle)
            return hit[1]
        vid = self._vid(like) if like is not None and same_children(like, func) else self._hash(func)
        self._by_handle[handle] = (func, vid)
        if len(self._by_handle) > HANDLE_CACHE_SIZE:
            self._by_handle.popitem(last=False)
        return vid

    @property
    def versions(self) -> int:
        """Distinct function versions keyed so far."""
        return len(self._keys)

    def _key(self, func: Any, name: str) -> str | None:
        """Version key of the function, made once per version; when rendering, the version's
        text is printed then if its key is wanted."""
        if self.func_glob is not None and not fnmatch.fnmatchcase(name, self.func_glob):
            return None
        cache = (self._vid(func), name)
        key = self._keys.get(cache)
        if key is None:
            self._wait_for_compile_to_park()
            # Versions that differ only in which free variables they use share the stable
            # hash; they are told apart by the order they first appear in, which the same
            # compile repeats.
            stable = (self._hash(func, map_free_vars=True), name)
            ordinal = self._ordinals.get(stable, 0)
            self._ordinals[stable] = ordinal + 1
            key = self._keys[cache] = version_key(stable[0], name, ordinal)
            if self.wanted is not None and key in self.wanted:
                self.texts[key] = self._print(func, name)
        return key

    def _leaf(self, record: PassRecord, before: Functions, after: Functions, mod: Any) -> None:
        stored = record.stored
        if before is self._last_funcs:  # the snapshot of the last output, not read again
            assert self._last_output is not None
            vids_before = self._last_output
        else:
            vids_before = {n: self._vid(f) for n, f in before.items()}
        self._inputs.append((record, vids_before))
        if self._last_output is not None and vids_before != self._last_output:
            record.received = {n: self._key(f, n) if stored else None for n, f in before.items()}
        if after is before:  # the module's function map did not change
            vids_after = vids_before
        else:
            vids_after = {}
            for n, f in after.items():
                old = before.get(n)
                vids_after[n] = (vids_before[n] if old is not None and old.same_as(f)
                                 else self._vid(f, old))
        self._last_funcs, self._last_output = after, vids_after

        def key(funcs: Functions, n: str) -> str | None:
            return self._key(funcs[n], n) if stored else None

        added = [n for n in after if n not in before]
        removed = [n for n in before if n not in after]
        for old in list(removed):
            new = next((n for n in added if vids_after[n] == vids_before[old]), None)
            if new is not None:
                removed.remove(old)
                added.remove(new)
                record.renamed.append(Rename(old, new, key(after, new)))
        record.added = {n: key(after, n) for n in added}
        record.removed = {n: key(before, n) for n in removed}
        for n in after:
            if n in before and vids_after[n] != vids_before[n]:
                # Whether the two print the same is known once the texts are rendered.
                record.changed.append(FuncChange(n, key(before, n), key(after, n)))
        if (self._lane is None or record.received is not None or record.added or record.removed
                or record.renamed):
            self._lane = _lane(after)  # only a new function set can change the module's lane
        record.lane, record.lane_target = self._lane
        record.change = classify(record)
        if self.modules_dir is not None and stored:
            record.module = self._write_module(f"{record.seq:03d}_{record.name}", mod)

    def _wrapper(self, record: PassRecord, before: Functions, after: Functions) -> None:
        same = before is after or before.keys() == after.keys() and all(
            f.same_as(after[n]) or self._vid(f) == self._vid(after[n], f)
            for n, f in before.items()
        )
        record.change = UNCHANGED if same else CHANGED

    def _write_module(self, stem: str, mod: Any) -> str:
        assert self.modules_dir is not None
        self.modules_dir.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in stem)
        path = self.modules_dir / f"{safe}.py"
        write_atomic(path, mod.script().encode())
        return f"{self.modules_dir.name}/{path.name}"


def _cores() -> int:
    """The cores this process may run on (``taskset``, a container's cpuset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _position(thread: int) -> tuple[int, int] | None:
    """Where a thread's Python code is (frame, instruction); unchanged while it is in C."""
    frame = sys._current_frames().get(thread)
    return None if frame is None else (id(frame), frame.f_lasti)


# Target kinds whose functions run on the host (tirx.build's own test, split_host_device_mods).
HOST_KINDS = ("llvm", "c", "cuda_host")


def _lane(funcs: Functions) -> tuple[str, str | None]:
    """(lane, target) of a module: MAIN while it holds Relax functions, functions without a
    target or both sides, HOST when every function is host code, DEVICE when every function
    is for one device and kernels are among them (before the split there are none)."""
    targets = set()
    kernels = False
    for f in funcs.values():
        attrs = getattr(f, "attrs", None)
        is_tir = type(f).__name__ == "PrimFunc"  # Relax functions carry no target
        target = attrs.get("target") if attrs is not None and is_tir else None
        if target is None:
            return MAIN, None
        arch = target.attrs.get("arch") if hasattr(target, "attrs") else None
        targets.add(f"{target.kind.name} -arch={arch}" if arch else str(target.kind.name))
        kernels = kernels or int(attrs.get("calling_conv", 0)) == 2
    if len(targets) != 1:
        return MAIN, None
    target = targets.pop()
    if target.split()[0] in HOST_KINDS:
        return HOST, target
    return (DEVICE, target) if kernels else (MAIN, target)


def instrument(recorder: Recorder) -> Any:
    """A TVM PassInstrument feeding ``recorder``; attach it to the compile's PassContext."""
    from tvm.ir.instrument import pass_instrument

    @pass_instrument
    class DumpIrInstrument:
        def run_before_pass(self, mod: Any, info: Any) -> None:
            _guarded(recorder, recorder.before, mod, info.name)

        def run_after_pass(self, mod: Any, info: Any) -> None:
            _guarded(recorder, recorder.after, mod, info.name)

    return DumpIrInstrument()


def _guarded(recorder: Recorder, hook: Callable[[Any, str], None], mod: Any, name: str) -> None:
    # TVM reports an exception from a hook as a failure of the pass; remember that it was
    # ours so the dump does not blame the pass.
    try:
        hook(mod, name)
    except StopBeforePass:
        raise
    except BaseException as e:
        recorder.internal_error = e
        raise
