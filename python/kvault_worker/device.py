"""The device a worker runs on (chosen once, by `hello`) and what `hello` reports.

Functions that later guard candidate code (device synchronisation) are looked up
here at import time, before any task or candidate code runs, so a candidate that
reassigns e.g. `torch.cuda.synchronize` does not change what the worker calls.
"""
import importlib.metadata
import importlib.util
import os
import platform
import sys

import torch

from kvault_worker.errors import INTERNAL, WorkerError

BACKENDS = ("cpu", "cuda", "hip")
# Device memory a worker may keep between requests, for each thing it keeps (PyTorch's
# cache; the reference's hand-over buffers): at most this, and at most this share of
# the device's memory, so that the lanes of a smaller GPU leave its candidates room.
KEEP_CACHED_BYTES = 2 << 30
KEEP_CACHED_SHARE = 1 / 32
_cuda_synchronize = getattr(torch._C, "_cuda_synchronize", None)


class Device:
    """One backend and device index; `torch_device` is what tensors are moved to."""

    def __init__(self, backend, index):
        self.backend = backend
        self.index = index
        self.is_gpu = backend != "cpu"
        self.torch_device = torch.device("cuda", index) if self.is_gpu else torch.device("cpu")
        self._kept_bytes = None  # kept_bytes(), once asked

    def synchronize(self):
        """Waits for all work on the device, so asynchronous errors surface here."""
        if self.is_gpu:
            _cuda_synchronize()

    def kept_bytes(self):
        """How much device memory each of the worker's caches may keep between requests
        (KEEP_CACHED_BYTES, KEEP_CACHED_SHARE); 0 on the CPU."""
        if not self.is_gpu:
            return 0
        if self._kept_bytes is None:
            total = torch.cuda.get_device_properties(self.index).total_memory
            self._kept_bytes = int(min(KEEP_CACHED_BYTES, total * KEEP_CACHED_SHARE))
        return self._kept_bytes

    def release_memory(self, everything=False):
        """Gives the device memory PyTorch keeps cached but unused back to the device
        when it is more than kept_bytes(): a long-lived worker (the reference's)
        then stays small beside other processes, yet its next run of the same sizes
        reuses its blocks instead of paying a device allocation and an emptying (about
        60 ms together per correctness run of a 128 MB output on an H200) every time.
        `everything`: all of it, whatever the amount (after running out of memory)."""
        if not self.is_gpu:
            return
        unused = torch.cuda.memory_reserved(self.index) - torch.cuda.memory_allocated(self.index)
        if everything or unused > self.kept_bytes():
            torch.cuda.empty_cache()


def open_device(backend, index):
    """Checks that the backend is usable and makes the device current.

    Raises WorkerError(internal) with the reason when it is not usable.
    """
    if backend not in BACKENDS:
        raise WorkerError(INTERNAL, "unknown backend %r (expected cpu, cuda or hip)" % (backend,))
    if backend == "cpu":
        return Device(backend, index)
    _check_backend(backend, index)
    torch.cuda.set_device(index)
    # fp32 means fp32: references must not silently run in TF32 (cuDNN convolutions
    # default to it), or correct fp32 kernels would be compared against a lossy answer.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return Device(backend, index)


def _check_backend(backend, index):
    """Raises WorkerError(internal) unless GPU `backend` is usable at `index`."""
    hip = getattr(torch.version, "hip", None)
    if backend == "cuda" and torch.version.cuda is None:
        raise WorkerError(INTERNAL, "backend cuda requested but this PyTorch (%s) is not a CUDA build%s"
                          % (torch.__version__, " (it is a ROCm build: use backend hip)" if hip else ""))
    if backend == "hip" and hip is None:
        raise WorkerError(INTERNAL, "backend hip requested but this PyTorch (%s) is not a ROCm build"
                          % torch.__version__)
    if not torch.cuda.is_available():
        raise WorkerError(INTERNAL, "backend %s requested but torch.cuda.is_available() is False" % backend)
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise WorkerError(INTERNAL, "device_index %d requested but only %d device(s) are visible"
                          % (index, count))


def backend_availability(index=0):
    """Which backends this PyTorch can use, and why the others are not usable.

    Returns (available, reasons): a list such as ["cpu", "cuda"] and a dict from
    each unusable backend to a one-line reason.
    """
    available, reasons = ["cpu"], {}
    for backend in ("cuda", "hip"):
        try:
            _check_backend(backend, index)
            available.append(backend)
        except WorkerError as e:
            reasons[backend] = e.message
    return available, reasons


def device_info(device):
    """The `device` object of the hello response."""
    if not device.is_gpu:
        return {"backend": "cpu", "index": device.index, "name": _cpu_name(),
                "arch": platform.machine(), "count": 1, "l2_bytes": 0, "memory_bytes": 0, "driver": None}
    props = torch.cuda.get_device_properties(device.index)
    if device.backend == "hip":
        arch = str(getattr(props, "gcnArchName", "") or "").split(":")[0]
    else:
        arch = "sm_%d%d" % (props.major, props.minor)
    return {"backend": device.backend, "index": device.index, "name": props.name, "arch": arch,
            "count": torch.cuda.device_count(), "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
            "memory_bytes": int(props.total_memory), "driver": _driver_version(device.backend)}


def l2_bytes(device):
    if not device.is_gpu:
        return 0
    props = torch.cuda.get_device_properties(device.index)
    return int(getattr(props, "L2_cache_size", 0) or 0)


def _cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _driver_version(backend):
    """The driver API version, read cheaply: from PyTorch when it exposes it, else
    (CUDA) from cuDriverGetVersion in the already loaded libcuda. Never nvidia-smi."""
    value = None
    for owner, name in ((torch.cuda, "driver_version"), (torch._C, "_cuda_getDriverVersion")):
        fn = getattr(owner, name, None)
        if callable(fn):
            try:
                value = fn()
            except Exception:
                value = None
            if isinstance(value, int) and value > 0:
                break
    if not (isinstance(value, int) and value > 0) and backend == "cuda":
        value = _libcuda_driver_version()
    if not (isinstance(value, int) and value > 0):
        return None
    if backend == "cuda":  # CUDA encodes 13.0 as 13000
        return "%d.%d" % (value // 1000, value % 1000 // 10)
    return str(value)


def _libcuda_driver_version():
    try:
        import ctypes

        version = ctypes.c_int(0)
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return version.value
    except (OSError, AttributeError):
        pass
    return None


def _source_digest():
    """SHA-256 over the worker package's Python sources: the engine keys cached
    reference outputs on it, since the worker's code makes the inputs."""
    import hashlib
    package = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(package)):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, package).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


SOURCE_DIGEST = _source_digest()


def triton_version():
    """Triton's version where this Python can import it (found without importing it:
    a second's work), else None. The engine reads it from hello, before any candidate
    code runs, to tell a machine without Triton from a candidate that failed."""
    if importlib.util.find_spec("triton") is None:
        return None
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def python_info():
    return {"python": platform.python_version(), "executable": sys.executable,
            "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "torch_hip": getattr(torch.version, "hip", None), "triton": triton_version(),
            "worker_source": SOURCE_DIGEST}
