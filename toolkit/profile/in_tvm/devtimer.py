"""Device-side timing of the calls a VM run makes, without a sync between calls.

A ``DeviceTimer`` puts marks in the device's stream around a call (``mark``) and, once the
run has been synchronised as a whole, says how long the device spent between two marks
(``durations``). Two implementations, one interface, one caller (``timing.CallTimer``):

* ``HostTimer`` for the CPU device: kernels run on the calling thread, so a mark is a read
  of the profiling clock and the span between two marks is the kernel's time. CI runs the
  whole device-timing path with it.
* ``CudaEventTimer`` for CUDA: marks are CUDA events recorded, through the driver API of
  NVIDIA's ``cuda-bindings`` (``pip install cuda-bindings``, the package behind
  cuda-python), on the stream TVM launches on (``tvm_ffi.get_raw_stream``). TVM 0.27 has a
  CUDA-event timer (``runtime.timer.cuda``) but Python can only construct it: ``Start`` /
  ``Stop`` / ``SyncAndGetElapsedNanos`` are C++ virtuals with no FFI entry, and
  ``time_evaluator`` syncs the stream around what it times.

An event pair brackets a kernel exactly only while the stream is backed up: on an idle GPU
the start event completes as soon as it is recorded and the span also holds the host's
launch latency. So the runs that time kernels on the device (``timing.measure``) first
queue a *filler* - device memsets longer than the host takes to issue the whole run - and
check afterwards (``cuEventQuery`` on the filler's end event, taken when the run has been
issued) that the device was still in the filler: then no kernel ever waited for the host.

Other GPU runtimes get no device timer here: their calls are timed on the host with a
sync around each one, and the report says so (``describe``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

# One memset of the filler: ~40-100 us on a current GPU, so a 10 ms filler is ~150 entries
# in the stream's queue rather than thousands.
FILLER_BYTES = 128 << 20


class HostTimer:
    """Marks are clock reads: the device is the calling thread (CPU)."""

    name = "host clock (the CPU device runs each kernel on the calling thread)"

    def __init__(self, clock: Callable[[], float]) -> None:
        self.mark = clock

    def size_filler(self, host_issue_s: float) -> None:
        """No filler: CPU kernels do not wait in a stream."""

    def begin(self) -> None:
        """Nothing to queue ahead."""

    def issued(self) -> bool:
        """The run was issued with the device busy throughout (always, on the host)."""
        return True

    def durations(self, pairs: list[tuple[Any, Any]]) -> list[float]:
        return [end - start for start, end in pairs]


class CudaError(RuntimeError):
    pass


class CudaEventTimer:
    """CUDA events on TVM's stream, with a memset filler that keeps the stream backed up."""

    name = "CUDA events on TVM's stream (cuda-bindings driver API), queue backed up by a filler"

    def __init__(self, dev: Any, pool: int = 4096) -> None:
        import tvm_ffi
        from cuda.bindings import driver

        self._d = driver
        self._check(driver.cuInit(0))
        self.stream = driver.CUstream(int(tvm_ffi.get_raw_stream(dev)))
        # TVM's CUDA runtime works in the device's primary context, made current on this
        # thread when it allocated the arguments; make sure the driver API uses it too.
        if not int(self._check(driver.cuCtxGetCurrent())):
            device = self._check(driver.cuDeviceGet(dev.index))
            self._check(driver.cuCtxSetCurrent(self._check(driver.cuDevicePrimaryCtxRetain(device))))
        self._pool = [self._event() for _ in range(pool)]
        self._used = 0
        self._filler_end = self._event()
        self._buffer = self._check(driver.cuMemAlloc(FILLER_BYTES))
        self.filler_s = 0.0  # device time the filler should last; set by ``size_filler``
        self._memset_s = self._time_one_memset()

    def _check(self, result: tuple[Any, ...]) -> Any:
        err, *rest = result
        if err != self._d.CUresult.CUDA_SUCCESS:
            _, text = self._d.cuGetErrorString(err)
            raise CudaError(f"CUDA driver: {text.decode() if isinstance(text, bytes) else err}")
        return rest[0] if len(rest) == 1 else rest

    def _event(self) -> Any:
        return self._check(self._d.cuEventCreate(self._d.CUevent_flags.CU_EVENT_DEFAULT))

    def _memset(self) -> None:
        self._check(self._d.cuMemsetD32Async(self._buffer, 0, FILLER_BYTES // 4, self.stream))

    def _time_one_memset(self) -> float:
        a, b = self._pool[0], self._pool[1]
        self._check(self._d.cuStreamSynchronize(self.stream))
        self._check(self._d.cuEventRecord(a, self.stream))
        for _ in range(8):
            self._memset()
        self._check(self._d.cuEventRecord(b, self.stream))
        self._check(self._d.cuEventSynchronize(b))
        return self._check(self._d.cuEventElapsedTime(a, b)) / 1e3 / 8

    def size_filler(self, host_issue_s: float) -> None:
        """Make the filler outlast issuing a run that took ``host_issue_s`` on the host."""
        self.filler_s = max(self.filler_s, 2 * host_issue_s)

    def begin(self) -> None:
        self._used = 0
        for _ in range(max(1, math.ceil(self.filler_s / self._memset_s))):
            self._memset()
        self._check(self._d.cuEventRecord(self._filler_end, self.stream))

    def mark(self) -> Any:
        if self._used == len(self._pool):
            self._pool.append(self._event())
        event = self._pool[self._used]
        self._used += 1
        self._check(self._d.cuEventRecord(event, self.stream))
        return event

    def issued(self) -> bool:
        """Whether the device was still in the filler once the whole run was issued.

        Called after the run's last call returned and before any sync. If not, the filler
        doubles for the next run (``timing.measure`` redoes this one).
        """
        err, = self._d.cuEventQuery(self._filler_end)
        if err == self._d.CUresult.CUDA_ERROR_NOT_READY:
            return True
        self._check((err,))
        self.filler_s = max(2 * self.filler_s, self._memset_s)
        return False

    def durations(self, pairs: list[tuple[Any, Any]]) -> list[float]:
        if pairs:
            self._check(self._d.cuEventSynchronize(pairs[-1][1]))
        return [self._check(self._d.cuEventElapsedTime(a, b)) / 1e3 for a, b in pairs]

    def close(self) -> None:
        for event in [*self._pool, self._filler_end]:
            self._d.cuEventDestroy(event)
        self._d.cuMemFree(self._buffer)


def for_device(dev: Any, gpu: bool, clock: Callable[[], float]) -> tuple[Any | None, str]:
    """The device timer for ``dev`` and a sentence for the report saying what times are.

    None means there is none: the calls are timed on the host with a sync around each.
    """
    if not gpu:
        return HostTimer(clock), HostTimer.name
    if int(dev.dlpack_device_type()) != 2:  # kDLCUDA
        return None, (f"host-side: no device timer for {dev} here; each call is timed on the "
                      "host with a device sync around it, so rows include launch and sync "
                      "latency")
    try:
        return CudaEventTimer(dev), CudaEventTimer.name
    except ImportError:
        reason = "cuda-bindings is not installed (pip install cuda-bindings)"
    except (RuntimeError, OSError) as e:  # CudaError, and the binding's loader errors
        reason = f"the CUDA event timer did not start ({e})"
    return None, (f"host-side: {reason}; each call is timed on the host with a device sync "
                  "around it, so rows include launch and sync latency")
