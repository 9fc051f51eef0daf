"""Outputs compared on the device (docs/device-compare.md).

For cases with inputs of several GB, writing every output to a file and comparing
on the host costs far more than the kernels. Instead:

1. the reference worker keeps its output on the device and makes an `Offer`:
   device buffers shaped like that output (one set per candidate call), exported
   as file descriptors and served once, on a Unix socket in the verification's
   scratch folder, to whoever first presents the request's secret;
2. the candidate's worker `deliver`s: it checks that its outputs have the
   reference's structure, dtypes and shapes, connects, maps the buffers and
   copies its outputs in (or declines, and the engine uses files);
3. the reference worker compares the buffers with its output on the device
   (`compare_tensor`: the rule of the engine's Compare, check/compare.h) and
   reports per-call statistics; on a mismatch it writes both sides to files so
   that the engine's Compare words the report.

Nothing of the reference's output is ever mapped into the candidate's process.
"""
import hmac
import json
import os
import secrets
import socket
import threading
import time

import torch

from kvault_worker import devmem

MAX_DESCRIPTORS = 250  # one message (SCM_MAX_FD is 253)
MAX_SOCKET_PATH = 108  # bytes of sun_path, the terminating NUL included
SERVE_SECONDS = 900  # an offer nobody takes closes itself after this
SERVED_WAIT_SECONDS = 5  # handoff_compare's wait for the serving thread to mark a delivery
_SECRET_BYTES = 128
# Elements per step of the device comparison: its float64 temporaries stay near 1 GB,
# under what a worker keeps cached (device.KEEP_CACHED_BYTES).
_CHUNK = 1 << 24


def tensors_of(value):
    """The tensors of a value shaped like an `output_layout` (one tensor or a flat
    tuple/list of tensors), else None."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in value):
        return list(value)
    return None


def layout_mismatch(value, layout):
    """Why `value` cannot be delivered into buffers of `layout` (native.OutputLayout),
    or None. The engine's Compare then words the difference from files."""
    tensors = tensors_of(value)
    if tensors is None:
        return "the output is not a tensor or a flat tuple/list of tensors"
    if (layout.kind == "tensor") != isinstance(value, torch.Tensor) or len(tensors) != len(layout.specs):
        return "the output's structure differs from the reference's"
    for t, (dtype, shape) in zip(tensors, layout.specs):
        if t.dtype != dtype or list(t.shape) != list(shape):
            return "an output's dtype or shape differs from the reference's"
    return None


class Buffer:
    """One exported device allocation of the reference side: mapped here, its
    descriptor kept to hand over again, and an `ident` the receiving worker knows it by."""

    def __init__(self, nbytes, device):
        self.nbytes = nbytes
        self.mapping, self.fd = devmem.allocate(max(nbytes, 1), device.index)
        self.ident = secrets.token_hex(8)

    def close(self):
        os.close(self.fd)
        self.mapping.close()


class BufferPool:
    """The reference side's exported buffers, kept between the offers made to one holder.

    Allocating, exporting and filling two 128 MB buffers, then unmapping them, cost
    about 50 ms of every correctness run on an H200, and mapping them as much again in
    the candidate's worker. One candidate's runs follow each other, so the buffers of
    its last offer serve its next one. The holder is the folder of the offer's socket:
    the candidate worker's own folder, or the verification's scratch folder, neither
    ever shared by two candidates. An offer for another holder releases every pooled
    buffer first: a candidate's worker (which may keep what it mapped) never sees a
    buffer into which another candidate's outputs are delivered. The pool keeps at
    most what the device lets a worker keep (device.Device.kept_bytes).
    """

    def __init__(self, limit_bytes=None):
        self.limit_bytes = limit_bytes  # None: the device's kept_bytes(), at the first take
        self.holder = None
        self.free = []

    def take(self, holder, nbytes, device):
        """A buffer of exactly `nbytes` for `holder`: a pooled one, else a new one."""
        if self.limit_bytes is None:
            self.limit_bytes = device.kept_bytes()
        if holder != self.holder:
            self.release()
            self.holder = holder
        for i, buf in enumerate(self.free):
            if buf.nbytes == nbytes:
                return self.free.pop(i)
        return Buffer(nbytes, device)

    def give_back(self, buffers):
        """Keeps `buffers` (their device work done) for the holder's next offer, up to
        limit_bytes in all; closes the rest."""
        for buf in buffers:
            if sum(b.nbytes for b in self.free) + buf.nbytes <= self.limit_bytes:
                self.free.append(buf)
            else:
                buf.close()

    def release(self):
        while self.free:
            self.free.pop().close()


class Offer:
    """The reference side: kept output, exported buffers, and the serving thread."""

    def __init__(self, value, sets, socket_path, secret, device, pool):
        self.value = value  # the reference's output: one tensor or a flat tuple/list of them
        self.kept = tensors_of(value)  # its tensors, on the device
        self.device = device
        self.nbytes = [t.numel() * t.element_size() for t in self.kept]
        self.secret = secret.encode()
        self.path = socket_path
        self.served = threading.Event()
        self._stop = threading.Event()
        self._pool = pool
        self.buffers, self._listener, self._thread = [], None, None
        holder = os.path.dirname(socket_path)  # whose buffers these are (BufferPool)
        try:
            for _ in range(sets):
                row = []
                self.buffers.append(row)
                for n in self.nbytes:
                    buf = pool.take(holder, n, device)
                    row.append(buf)
                    # New device memory may hold an earlier allocation's bytes (an
                    # earlier reference output), a pooled buffer the holder's last
                    # output: all ones (NaN, -1) until delivered.
                    buf.mapping.tensor(torch.uint8, (max(n, 1),), device.torch_device).fill_(0xFF)
            # The fills are queued on this process's stream, maybe behind other work: one
            # still pending when the candidate's copy lands would overwrite it.
            torch.cuda.synchronize(device.torch_device)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener = listener
            listener.bind(socket_path)
            listener.listen(4)
            listener.settimeout(0.05)
            self._thread = threading.Thread(target=self._serve, name="kvault-handoff", daemon=True)
            self._thread.start()
        except BaseException:
            self.close()
            raise

    def _all(self):
        return [buf for row in self.buffers for buf in row]

    def header(self):
        return json.dumps({"sets": len(self.buffers), "nbytes": self.nbytes,
                           "ids": [buf.ident for buf in self._all()]}).encode()

    def _serve(self):
        deadline = time.monotonic() + SERVE_SECONDS
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(1)  # a stranger that says nothing holds the offer up only briefly
                    presented = _read_line(conn, _SECRET_BYTES)
                    if not hmac.compare_digest(presented, self.secret):
                        continue  # not the candidate this offer is for: keep waiting
                    devmem.send_fds(conn, [buf.fd for buf in self._all()], self.header())
                    self.served.set()
                    return
                except OSError:
                    continue

    def views(self, row):
        return [b.mapping.tensor(t.dtype, t.shape, self.device.torch_device)
                for b, t in zip(self.buffers[row], self.kept)]

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            try:
                os.unlink(self.path)
            except OSError:
                pass
        torch.cuda.synchronize(self.device.torch_device)  # no comparison still reads them
        self._pool.give_back(self._all())
        self.buffers = []
        self.value, self.kept = None, []


def _read_line(conn, limit):
    data = b""
    while not data.endswith(b"\n") and len(data) <= limit:
        chunk = conn.recv(limit + 1 - len(data))
        if not chunk:
            break
        data += chunk
    return data.rstrip(b"\n")


# The candidate side's mappings of offered buffers, by the ident the offer gave each:
# a buffer the reference pooled (BufferPool) and offers again is not mapped again.
_MAPPED = {}


def deliver(values, layout, socket_path, secret, device, timeout_s=30):
    """The candidate side: copies each of `values` (one per set) into the offered
    buffers. Returns None when delivered, else why not (then nothing was written)."""
    for value in values:
        why = layout_mismatch(value, layout)
        if why is not None:
            return why
    expected = len(values) * len(layout.specs)
    if expected > MAX_DESCRIPTORS:
        return "the output has too many tensors to hand over"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fds, transient, delivered = [], [], False
    try:
        sock.settimeout(timeout_s)
        sock.connect(socket_path)
        sock.sendall(secret.encode() + b"\n")
        header, fds = devmem.receive_fds(sock, expected, timeout_s)
        offered = json.loads(header.decode())
        nbytes = offered["nbytes"]
        if offered["sets"] != len(values) or len(nbytes) != len(layout.specs):
            raise devmem.DevmemError("the offer does not fit the request (%s)" % header[:200])
        ids = offered.get("ids")
        if not (isinstance(ids, list) and len(ids) == len(fds) and all(isinstance(i, str) and i for i in ids)):
            ids = [None] * len(fds)
        mappings = [_mapping(ident, fd, max(nbytes[i % len(nbytes)], 1), device.index, transient)
                    for i, (ident, fd) in enumerate(zip(ids, fds))]
        k = 0
        for value in values:
            for t in tensors_of(value):
                if t.numel():
                    mappings[k].tensor(t.dtype, t.shape, device.torch_device).copy_(t)
                k += 1
        torch.cuda.synchronize(device.torch_device)
        delivered = True
        _forget_mapped(keep=set(ids))
    finally:
        if transient or not delivered:
            try:  # no copy may still be writing when the buffers are unmapped
                torch.cuda.synchronize(device.torch_device)
            except RuntimeError:
                pass
        for m in transient:
            m.close()
        if not delivered:
            _forget_mapped(keep=set())
        for fd in fds:
            os.close(fd)
        sock.close()
    return None


def _mapping(ident, fd, nbytes, index, transient):
    """The mapping of offered buffer `ident`: the one made for an earlier offer of it,
    else a new one (kept by ident; without an ident, added to `transient`)."""
    known = _MAPPED.get(ident) if ident else None
    if known is not None and known.nbytes == nbytes:
        return known
    mapping = devmem.import_fd(fd, nbytes, index)
    if ident:
        if known is not None:
            known.close()
        _MAPPED[ident] = mapping
    else:
        transient.append(mapping)
    return mapping


def _finite_rms(flat):
    """The RMS of a flat floating tensor's finite values (0 when there are none), in
    float64 and in chunks, as the engine's Compare computes it."""
    total = torch.zeros((), dtype=torch.float64, device=flat.device)
    count = torch.zeros((), dtype=torch.int64, device=flat.device)
    for begin in range(0, flat.numel(), _CHUNK):
        r = flat[begin:begin + _CHUNK].double()
        finite = torch.isfinite(r)
        total += torch.where(finite, r * r, torch.zeros((), dtype=torch.float64, device=r.device)).sum()
        count += finite.sum()
    n = int(count)
    return (float(total) / n) ** 0.5 if n else 0.0


def _forget_mapped(keep):
    """Unmaps the buffers not offered again (their device work done)."""
    for ident in [i for i in _MAPPED if i not in keep]:
        _MAPPED.pop(ident).close()


def compare_tensor(reference, candidate, rtol, atol, forbid_non_finite, atol_by_rms=False):
    """Compare's element rule and statistics (check/elementwise.h) on one pair of
    equally shaped tensors, wherever they live: {match, compared, mismatched,
    max_abs, max_rel}. Floating values are compared in float64, as the engine does; the
    golden vectors of tests/golden/compare.json hold both to the same statistics.
    `atol_by_rms`: atol times max(1, the RMS of the reference's finite values), as
    Tolerance::atol_by_rms (check/compare.h)."""
    n = reference.numel()
    ref, cand = reference.reshape(-1), candidate.reshape(-1)
    stats = {"compared": n, "mismatched": 0, "max_abs": 0.0, "max_rel": 0.0}
    if not reference.is_floating_point():
        return _compare_exact(ref, cand, stats)
    if atol_by_rms:
        atol *= max(1.0, _finite_rms(ref))
    mismatched = torch.zeros((), dtype=torch.int64, device=ref.device)
    max_abs = torch.zeros((), dtype=torch.float64, device=ref.device)
    max_rel = torch.zeros((), dtype=torch.float64, device=ref.device)
    for begin in range(0, n, _CHUNK):
        r = ref[begin:begin + _CHUNK].double()
        c = cand[begin:begin + _CHUNK].double()
        finite = torch.isfinite(r) & torch.isfinite(c)
        diff = (c - r).abs()
        mag = r.abs()
        ok = finite & (diff <= atol + rtol * mag)
        if not forbid_non_finite:
            # NaN only where the reference has NaN; an infinity only where it has the same one.
            ok |= (torch.isnan(c) & torch.isnan(r)) | (torch.isinf(c) & (c == r))
        mismatched += (~ok).sum()
        zero = torch.zeros((), dtype=torch.float64, device=ref.device)
        max_abs = torch.maximum(max_abs, torch.where(finite, diff, zero).max())
        rel = torch.where(finite & (mag > 0), diff / torch.where(mag > 0, mag, 1.0), zero)
        max_rel = torch.maximum(max_rel, rel.max())
    stats["mismatched"] = int(mismatched.item())
    stats["max_abs"] = float(max_abs.item())
    stats["max_rel"] = float(max_rel.item())
    stats["match"] = stats["mismatched"] == 0
    return stats


def _compare_exact(ref, cand, stats):
    """Integer and bool elements: equal or not; max_abs and max_rel over the unequal
    ones, in float64 (check/elementwise.cc CompareExact)."""
    max_abs = max_rel = 0.0
    for begin in range(0, ref.numel(), _CHUNK):
        r, c = ref[begin:begin + _CHUNK], cand[begin:begin + _CHUNK]
        unequal = r != c
        count = int(unequal.sum().item())
        if not count:
            continue
        stats["mismatched"] += count
        rd, cd = r[unequal].double(), c[unequal].double()
        diff, mag = (cd - rd).abs(), rd.abs()
        max_abs = max(max_abs, float(diff.max().item()))
        rel = torch.where(mag > 0, diff / torch.where(mag > 0, mag, torch.ones_like(mag)), torch.zeros_like(mag))
        max_rel = max(max_rel, float(rel.max().item()))
    stats.update(max_abs=max_abs, max_rel=max_rel, match=stats["mismatched"] == 0)
    return stats
