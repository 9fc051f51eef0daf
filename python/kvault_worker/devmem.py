"""Device memory that two processes share without the host (docs/device-compare.md).

The trusted reference worker allocates a candidate's output buffers with the CUDA
driver's virtual memory calls (cuMemCreate), exports them as POSIX file
descriptors, and hands the descriptors to the candidate's worker over a Unix socket
(SCM_RIGHTS). The candidate's worker maps them and copies its outputs in; the
reference worker then compares them on the device with its own outputs. Descriptors
are namespace-agnostic: this works between the sandbox's PID namespaces, where the
legacy CUDA IPC handles (which name a process) do not.

Only the CUDA driver is wrapped (ctypes, libcuda.so.1); elsewhere `available()`
says why not and the engine uses output files.
"""
import ctypes
import os
import socket

import torch

_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_LOCATION_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
_READ_WRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
_GRANULARITY_MINIMUM = 0


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", _Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class DevmemError(RuntimeError):
    pass


_driver = None
_unavailable = None


def _lib():
    global _driver, _unavailable
    if _driver is not None or _unavailable is not None:
        if _driver is None:
            raise DevmemError(_unavailable)
        return _driver
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        for name in ("cuMemCreate", "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
                     "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "cuMemUnmap",
                     "cuMemAddressFree", "cuMemRelease", "cuMemGetAllocationGranularity"):
            getattr(lib, name)
        status = lib.cuInit(0)
    except (OSError, AttributeError) as e:
        _unavailable = "the CUDA driver's virtual memory calls are missing (%s)" % e
        raise DevmemError(_unavailable) from None
    if status != 0:
        _unavailable = "cuInit failed with CUDA driver error %d" % status
        raise DevmemError(_unavailable)
    _driver = lib
    return lib


def _ensure_context(index):
    """The device's primary context current on this thread (PyTorch's, once it has
    touched the device); the mapping calls need one."""
    lib = _lib()
    ctx = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if ctx.value:
        return
    dev = ctypes.c_int()
    _check(lib.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def available(device):
    """(True, "") when outputs of `device` can be shared this way, else (False, why)."""
    if device.type != "cuda" or torch.version.hip is not None:
        return False, "device outputs are shared on CUDA devices only"
    try:
        _lib()
    except DevmemError as e:
        return False, str(e)
    return True, ""


def _check(result, what):
    if result != 0:
        raise DevmemError("%s failed with CUDA driver error %d" % (what, result))


def _prop(index):
    prop = _AllocationProp()
    prop.type = _PINNED
    prop.requestedHandleTypes = _POSIX_FD
    prop.location = _Location(_LOCATION_DEVICE, index)
    return prop


def _granularity(index):
    gran = ctypes.c_size_t()
    _check(_lib().cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(_prop(index)),
                                                _GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity")
    return gran.value


class _Array:
    """A __cuda_array_interface__ over raw device bytes (what torch.as_tensor takes)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


class Mapping:
    """One allocation mapped into this process: `tensor(dtype, shape)` views it."""

    def __init__(self, handle, size, index, nbytes):
        lib = _lib()
        self.handle, self.size, self.nbytes, self.ptr = handle, size, nbytes, 0
        ptr = ctypes.c_uint64()
        try:
            _check(lib.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                           ctypes.c_uint64(0), ctypes.c_uint64(0)), "cuMemAddressReserve")
            self.ptr = ptr.value
            _check(lib.cuMemMap(ctypes.c_uint64(self.ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                ctypes.c_uint64(handle), ctypes.c_uint64(0)), "cuMemMap")
            self.mapped = True
            access = _AccessDesc(_Location(_LOCATION_DEVICE, index), _READ_WRITE)
            _check(lib.cuMemSetAccess(ctypes.c_uint64(self.ptr), ctypes.c_size_t(size),
                                      ctypes.byref(access), ctypes.c_size_t(1)), "cuMemSetAccess")
        except BaseException:
            self.close()
            raise

    def tensor(self, dtype, shape, device):
        raw = torch.as_tensor(_Array(self.ptr, self.nbytes), device=device)
        return raw.view(dtype).view(shape) if self.nbytes else torch.empty(shape, dtype=dtype, device=device)

    def close(self):
        lib = _lib()
        if getattr(self, "mapped", False):
            lib.cuMemUnmap(ctypes.c_uint64(self.ptr), ctypes.c_size_t(self.size))
            self.mapped = False
        if self.ptr:
            lib.cuMemAddressFree(ctypes.c_uint64(self.ptr), ctypes.c_size_t(self.size))
            self.ptr = 0
        if self.handle:
            lib.cuMemRelease(ctypes.c_uint64(self.handle))
            self.handle = 0


def _rounded(nbytes, index):
    gran = _granularity(index)
    return max(gran, (nbytes + gran - 1) // gran * gran)


def allocate(nbytes, index):
    """A new exportable allocation of at least `nbytes`, mapped here: (Mapping, fd)."""
    lib = _lib()
    _ensure_context(index)
    size = _rounded(nbytes, index)
    handle = ctypes.c_uint64()
    _check(lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(_prop(index)),
                           ctypes.c_uint64(0)), "cuMemCreate")
    fd = ctypes.c_int(-1)
    try:
        _check(lib.cuMemExportToShareableHandle(ctypes.byref(fd), ctypes.c_uint64(handle.value), _POSIX_FD,
                                                ctypes.c_uint64(0)), "cuMemExportToShareableHandle")
        mapping = Mapping(handle.value, size, index, nbytes)
    except BaseException:
        if fd.value >= 0:
            os.close(fd.value)
        lib.cuMemRelease(ctypes.c_uint64(handle.value))
        raise
    return mapping, fd.value


def import_fd(fd, nbytes, index):
    """Maps another process's exported allocation of `nbytes` (its size rounded as
    `allocate` rounds it); the fd stays the caller's to close."""
    lib = _lib()
    _ensure_context(index)
    handle = ctypes.c_uint64()
    _check(lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd), _POSIX_FD),
           "cuMemImportFromShareableHandle")
    try:
        return Mapping(handle.value, _rounded(nbytes, index), index, nbytes)
    except BaseException:
        lib.cuMemRelease(ctypes.c_uint64(handle.value))
        raise


def send_fds(sock, fds, message=b"kvault-devmem"):
    socket.send_fds(sock, [message], fds)


def receive_fds(sock, count, timeout_s):
    sock.settimeout(timeout_s)
    msg, fds, _, _ = socket.recv_fds(sock, 1024, count)
    if len(fds) != count:
        for fd in fds:
            os.close(fd)
        raise DevmemError("expected %d descriptors, got %d" % (count, len(fds)))
    return msg, fds
