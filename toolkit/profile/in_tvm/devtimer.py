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
queue a *filler* that holds the stream until the host has issued the whole run, and check
afterwards (``cuEventQuery`` on the filler's end event, taken when the run has been issued)
that the device was still in the filler: then no kernel ever waited for the host.

The filler is a one-thread kernel (``HOLD_SOURCE``, compiled once with NVRTC) that spins
until the host sets a flag in mapped host memory, or until a timeout: it touches no device
memory, so the run behind it finds the caches as the run before left them, as a real run
does (tk's first filler, 128 MiB memsets, flushed the L2 before every timed run). The
timeout keeps a full launch queue from deadlocking the host (it blocks in a launch and
never gets to set the flag); a run that outgrows the queue times the hold out twice and
the timer falls back to the memsets (``MemsetFiller``), which a full queue does not harm,
and says so in its name.

Other GPU runtimes get no device timer here: their calls are timed on the host with a
sync around each one, and the report says so (``describe``).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from typing import Any

# One memset of the memset filler: ~40-100 us on a current GPU, so a 10 ms filler is ~150
# entries in the stream's queue rather than thousands.
FILLER_BYTES = 128 << 20

# The hold filler: spins on a flag the host sets once the run is issued. globaltimer is in
# nanoseconds whatever the SM clock does; the flag is read through a volatile pointer to
# mapped host memory, so every read sees the host's write.
HOLD_SOURCE = r"""
extern "C" __global__ void tk_hold(volatile unsigned int* flag, unsigned long long timeout_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (*flag == 0u && now - start < timeout_ns);
}
"""
HOLD_MIN_TIMEOUT_S = 0.005
# A hold times out after this many times the filler's length; it costs nothing unless the
# host stalls, since the host releases it as soon as the run is issued.
HOLD_SLACK = 4
HOLD_MISSES = 2  # holds timed out before the timer falls back to memsets


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


class _Driver:
    """cuda-bindings' driver API with its (error, result...) tuples turned into raises."""

    def __init__(self) -> None:
        from cuda.bindings import driver

        self.d = driver

    def __call__(self, result: tuple[Any, ...]) -> Any:
        err, *rest = result
        if err != self.d.CUresult.CUDA_SUCCESS:
            _, text = self.d.cuGetErrorString(err)
            raise CudaError(f"CUDA driver: {text.decode() if isinstance(text, bytes) else err}")
        return rest[0] if len(rest) == 1 else rest


class MemsetFiller:
    """Device memsets of a 128 MiB buffer, as many as last ``seconds``."""

    what = "queue backed up by device memsets"

    def __init__(self, check: _Driver, stream: Any, timing: tuple[Any, Any]) -> None:
        self._check, self._d, self._stream = check, check.d, stream
        self._buffer = check(self._d.cuMemAlloc(FILLER_BYTES))
        a, b = timing
        check(self._d.cuStreamSynchronize(stream))
        check(self._d.cuEventRecord(a, stream))
        for _ in range(8):
            self._memset()
        check(self._d.cuEventRecord(b, stream))
        check(self._d.cuEventSynchronize(b))
        self.unit_s = check(self._d.cuEventElapsedTime(a, b)) / 1e3 / 8

    def _memset(self) -> None:
        self._check(self._d.cuMemsetD32Async(self._buffer, 0, FILLER_BYTES // 4, self._stream))

    def queue(self, seconds: float) -> None:
        for _ in range(max(1, math.ceil(seconds / self.unit_s))):
            self._memset()

    def release(self) -> None:
        """Memsets end by themselves."""

    def close(self) -> None:
        self._d.cuMemFree(self._buffer)


class HoldFiller:
    """``HOLD_SOURCE``'s kernel, holding the stream until ``release`` or its timeout."""

    what = "stream held by a spinning kernel until the run is issued"
    unit_s = HOLD_MIN_TIMEOUT_S  # the least a hold lasts when nobody releases it

    def __init__(self, check: _Driver, stream: Any, device: Any) -> None:
        from cuda.bindings import nvrtc

        self._check, self._d, self._stream = check, check.d, stream
        attr = self._d.CUdevice_attribute
        major = check(self._d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
        minor = check(self._d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
        err, prog = nvrtc.nvrtcCreateProgram(HOLD_SOURCE.encode(), b"tk_hold.cu", 0, [], [])
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CudaError(f"NVRTC: {err}")
        try:
            opts = [f"--gpu-architecture=sm_{major}{minor}".encode()]
            err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                _, size = nvrtc.nvrtcGetProgramLogSize(prog)
                log = b" " * size
                nvrtc.nvrtcGetProgramLog(prog, log)
                raise CudaError(f"NVRTC: {log.decode(errors='replace').strip()}")
            _, size = nvrtc.nvrtcGetCUBINSize(prog)
            cubin = b" " * size
            nvrtc.nvrtcGetCUBIN(prog, cubin)
        finally:
            nvrtc.nvrtcDestroyProgram(prog)
        self._module = check(self._d.cuModuleLoadData(cubin))
        self._kernel = check(self._d.cuModuleGetFunction(self._module, b"tk_hold"))
        self._host = check(self._d.cuMemHostAlloc(4, self._d.CU_MEMHOSTALLOC_DEVICEMAP))
        self._flag = ctypes.c_uint32.from_address(int(self._host))
        self._flag.value = 0
        # The kernel's two arguments, kept alive here: cuLaunchKernel takes their addresses.
        self._arg_flag = ctypes.c_uint64(int(check(self._d.cuMemHostGetDevicePointer(self._host, 0))))
        self._arg_timeout = ctypes.c_uint64(0)
        self._args = (ctypes.c_void_p * 2)(ctypes.addressof(self._arg_flag),
                                           ctypes.addressof(self._arg_timeout))

    def queue(self, seconds: float) -> None:
        self._flag.value = 0  # the previous run was synchronised: no kernel reads it now
        self._arg_timeout.value = int(max(HOLD_SLACK * seconds, self.unit_s) * 1e9)
        self._check(self._d.cuLaunchKernel(self._kernel, 1, 1, 1, 1, 1, 1, 0, self._stream,
                                           ctypes.addressof(self._args), 0))

    def release(self) -> None:
        self._flag.value = 1

    def close(self) -> None:
        self._flag.value = 1
        self._d.cuModuleUnload(self._module)
        self._d.cuMemFreeHost(self._host)


class CudaEventTimer:
    """CUDA events on TVM's stream, behind a filler that keeps the stream backed up."""

    def __init__(self, dev: Any, pool: int = 4096, filler: str = "hold") -> None:
        """``filler``: "hold" (the default, memsets where it cannot start) or "memset"."""
        import tvm_ffi

        self._check = check = _Driver()
        driver = self._d = check.d
        check(driver.cuInit(0))
        self.stream = driver.CUstream(int(tvm_ffi.get_raw_stream(dev)))
        device = check(driver.cuDeviceGet(dev.index))
        # TVM's CUDA runtime works in the device's primary context, made current on this
        # thread when it allocated the arguments; make sure the driver API uses it too.
        if not int(check(driver.cuCtxGetCurrent())):
            check(driver.cuCtxSetCurrent(check(driver.cuDevicePrimaryCtxRetain(device))))
        self._pool = [self._event() for _ in range(pool)]
        self._used = 0
        self._filler_end = self._event()
        self.filler_s = 0.0  # device time the filler should last; set by ``size_filler``
        self._why = ""  # why the memsets serve where the hold was asked for
        self._misses = 0
        self.filler: HoldFiller | MemsetFiller
        if filler == "hold":
            try:
                self.filler = HoldFiller(check, self.stream, device)
            except (ImportError, RuntimeError, OSError) as e:  # no NVRTC, or it failed
                self._memsets(f"the hold kernel did not start: {e}")
        else:
            self._memsets("")

    def _memsets(self, why: str) -> None:
        """Hold the stream with memsets from now on; ``why`` the hold gave way ("" if asked)."""
        self._why = why
        self.filler = MemsetFiller(self._check, self.stream, (self._pool[0], self._pool[1]))

    @property
    def name(self) -> str:
        """What the report says device times are."""
        why = f" ({self._why})" if self._why else ""
        return (f"CUDA events on TVM's stream (cuda-bindings driver API), "
                f"{self.filler.what}{why}")

    def _event(self) -> Any:
        return self._check(self._d.cuEventCreate(self._d.CUevent_flags.CU_EVENT_DEFAULT))

    def size_filler(self, host_issue_s: float) -> None:
        """Make the filler outlast issuing a run that took ``host_issue_s`` on the host."""
        self.filler_s = max(self.filler_s, 2 * host_issue_s)

    def begin(self) -> None:
        self._used = 0
        self.filler.queue(self.filler_s)
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

        Called after the run's last call returned and before any sync; releases the hold.
        If not, the filler doubles for the next run (``timing.measure`` redoes this one),
        and a hold that timed out ``HOLD_MISSES`` times gives way to memsets.
        """
        err, = self._d.cuEventQuery(self._filler_end)
        self.filler.release()
        if err == self._d.CUresult.CUDA_ERROR_NOT_READY:
            return True
        self._check((err,))
        self.filler_s = max(2 * self.filler_s, self.filler.unit_s)
        if isinstance(self.filler, HoldFiller):
            self._misses += 1
            if self._misses >= HOLD_MISSES:
                self._check(self._d.cuStreamSynchronize(self.stream))
                self.filler.close()
                self._memsets(f"the hold timed out {self._misses} times: the run outgrows the "
                              "launch queue")
        return False

    def durations(self, pairs: list[tuple[Any, Any]]) -> list[float]:
        if pairs:
            self._check(self._d.cuEventSynchronize(pairs[-1][1]))
        return [self._check(self._d.cuEventElapsedTime(a, b)) / 1e3 for a, b in pairs]

    def close(self) -> None:
        self.filler.close()
        for event in [*self._pool, self._filler_end]:
            self._d.cuEventDestroy(event)


def for_device(dev: Any, gpu: bool, clock: Callable[[], float],
               filler: str = "hold") -> tuple[Any | None, str]:
    """The device timer for ``dev`` and a sentence for the report saying what times are.

    None means there is none: the calls are timed on the host with a sync around each.
    ``filler`` is CudaEventTimer's (benchmarks/profile_accuracy.py compares the two).
    """
    if not gpu:
        return HostTimer(clock), HostTimer.name
    if int(dev.dlpack_device_type()) != 2:  # kDLCUDA
        return None, (f"host-side: no device timer for {dev} here; each call is timed on the "
                      "host with a device sync around it, so rows include launch and sync "
                      "latency")
    try:
        timer = CudaEventTimer(dev, filler=filler)
        return timer, timer.name
    except ImportError:
        reason = "cuda-bindings is not installed (pip install cuda-bindings)"
    except (RuntimeError, OSError) as e:  # CudaError, and the binding's loader errors
        reason = f"the CUDA event timer did not start ({e})"
    return None, (f"host-side: {reason}; each call is timed on the host with a device sync "
                  "around it, so rows include launch and sync latency")
