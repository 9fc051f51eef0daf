"""Cache flushing before cold samples (docs/timing.md, "Cold and warm").

A flush writes a buffer at least twice the size of the device's last-level cache,
so no line of the timed call's inputs or outputs survives in it:
- NVIDIA: 2 x L2 (read from the device), at least 256 MiB.
- AMD Instinct: 2 x (L2 + Infinity Cache); gfx94x/gfx95x (MI300, MI325, MI350,
  MI355) carry a 256 MiB Infinity Cache behind L2 that PyTorch does not report.
- CPU: 2 x the largest cache in /sys, at least 64 MiB.
On NVIDIA devices the flush first returns every persisting L2 line to normal and
sets the persisting set-aside to 0 (cuCtxResetPersistingL2Cache, cuCtxSetLimit):
a candidate that marked its data persisting (an access policy window on its stream)
would otherwise keep it in L2 through the flush.
"""
import ctypes
import glob

import torch

from kvault_worker.integrity import SNAPSHOT

MIB = 1 << 20
GPU_MIN_FLUSH_BYTES = 256 * MIB
CPU_MIN_FLUSH_BYTES = 64 * MIB
INFINITY_CACHE_BYTES = {"gfx940": 256 * MIB, "gfx941": 256 * MIB, "gfx942": 256 * MIB,
                        "gfx950": 256 * MIB}


def infinity_cache_bytes(arch):
    return INFINITY_CACHE_BYTES.get(str(arch or "").split(":")[0], 0)


def gpu_flush_bytes(backend, l2_bytes, arch):
    extra = infinity_cache_bytes(arch) if backend == "hip" else 0
    return max(2 * (int(l2_bytes) + extra), GPU_MIN_FLUSH_BYTES)


def cpu_flush_bytes():
    return max(2 * largest_cpu_cache_bytes(), CPU_MIN_FLUSH_BYTES)


def largest_cpu_cache_bytes():
    """The largest cache size in /sys/devices/system/cpu/cpu0/cache (0 if unknown)."""
    largest = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path, encoding="ascii").read().strip().upper()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if text[-1:] in "KMG" else text
        if digits.isdigit():
            largest = max(largest, int(digits) * scale)
    return largest


class Flusher:
    """Owns a flush buffer; `flush()` overwrites all of it (a fresh byte value each
    time, so no write can be skipped as redundant)."""

    def __init__(self, nbytes, torch_device):
        self.nbytes = nbytes
        self._buffer = torch.empty(nbytes, dtype=torch.uint8, device=torch_device)
        self._value = 0
        # The flush runs between samples, where no clock looks: a candidate that makes
        # it evict nothing (the buffer swapped or shrunk in place, `flush` hidden by an
        # instance attribute) gets warm caches in its cold samples (integrity.py).
        self._guard = "flush buffer %d %s" % (nbytes, torch_device)
        SNAPSHOT.guard(self._guard, self, ("_buffer", "nbytes"))

    def flush(self):
        self._value = (self._value + 1) % 251
        if self._buffer.is_cuda and torch.version.cuda:
            reset_persisting_l2()
        self._buffer.fill_(self._value)

    def release(self):
        SNAPSHOT.unguard(self._guard)
        self._buffer = None


CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


def _persisting_l2_api():
    """libcuda's cuCtxResetPersistingL2Cache and cuCtxSetLimit, or (None, None) without
    a driver or with one before CUDA 11. Bound at import, before candidate code runs,
    so that the harness snapshot covers them (integrity.py)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        reset, set_limit = lib.cuCtxResetPersistingL2Cache, lib.cuCtxSetLimit
    except (OSError, AttributeError):
        return None, None
    reset.restype = set_limit.restype = ctypes.c_int
    set_limit.argtypes = [ctypes.c_int, ctypes.c_size_t]
    return reset, set_limit


_cu_reset_persisting_l2, _cu_set_limit = _persisting_l2_api() if torch.version.cuda else (None, None)


def reset_persisting_l2():
    """Persisting L2 lines of the current context back to normal, the set-aside to 0.
    Returns whether the driver did both (False without the driver's functions:
    nothing persists there)."""
    if _cu_reset_persisting_l2 is None:
        return False
    return _cu_set_limit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0) == 0 and _cu_reset_persisting_l2() == 0


_shared = {}  # (nbytes, device) -> Flusher: one buffer per worker process and size


def shared_flusher(nbytes, torch_device):
    """The worker's flusher of this size on this device, made at first use. The sides
    a worker holds (a reference worker keeps some between candidates) take turns, so
    one buffer serves them all instead of one each."""
    key = (int(nbytes), str(torch_device))
    flusher = _shared.get(key)
    if flusher is None:
        flusher = _shared[key] = Flusher(nbytes, torch_device)
    return flusher


def release_shared_flushers():
    """Forgets the worker's flushers: their buffers are freed once no side uses them."""
    _shared.clear()
