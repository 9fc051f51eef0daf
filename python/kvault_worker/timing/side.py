"""One side (reference or candidate) of a timed case, held by a worker between
the engine's `time_start`, `time_sample` and `time_finish` requests
(docs/worker-protocol.md, docs/timing.md).

The side owns the built model, its inputs (made on the device from the timing
seed), the flush buffer and, once asked for, a CUDA graph. Failures of `fn` are
WorkerErrors of the side's kind (task_error for the reference, runtime_error for
the candidate, oom for either when memory runs out).

Every timed sample runs on inputs nobody has seen before (docs/timing.md, "What
the engine trusts"): `sample(seed)` first writes the inputs of `seed` (a number the
engine draws for this sample) into the timed buffers, so a result cached from an
earlier call is never right. A graph replays K calls, each on its own set of input
buffers; before every replay those are filled from a pool of input sets made from
the sample's seed, in an order the seed decides, so a captured call that skipped its
work leaves an output that does not fit its inputs, and nothing computed before the
request fits any of them.

The side, its flush buffer, its graph and the graph's input sets are guarded by the
harness snapshot (integrity.py): a candidate that hides one of their methods, swaps
their buffers or pool, or changes their class is a policy_violation at the next check.
"""
import gc

import torch

from kvault_worker import digest
from kvault_worker.digest import modified_inputs, same_bits, same_layout
from kvault_worker.errors import TASK_ERROR, WorkerError, attributed
from kvault_worker.integrity import SNAPSHOT
from kvault_worker.timing import timers
from kvault_worker.timing.flush import cpu_flush_bytes, gpu_flush_bytes, shared_flusher
from kvault_worker.timing.stats import median

GRAPH_TARGET_MS = 1.0  # a captured graph holds about this much work
GRAPH_MAX_CALLS = 1000
GRAPH_OUTPUT_BYTES = 1 << 30  # bound on the outputs a captured graph may hold
GRAPH_SIZING_REPLAYS = 3
BURST_TARGET_MS = 2.0  # the warm-up's back-to-back burst spans about this much
BURST_MAX_CALLS = 100
PRIME_BURST_CALLS = 20  # prime's guess of the device time per call
# A graph's calls each read their own input set, filled before every replay from a
# pool of POOL_SETS sets, made anew for every sample from its seed (pool_seed; seeds
# POOL_SEED + i for the capture); the pool and the calls' sets together hold at most
# GRAPH_INPUT_BYTES: inputs too large for the pool and one call's set are timed with
# events (the engine's memory lease counts no graph for them: TimingFootprintBytes in
# src/engine/timed_case.h; its copies of these limits, src/engine/worker_limits.h, are
# checked against these by python/tests/test_worker_limits.py).
POOL_SETS = 4
POOL_SEED = 500_000
GRAPH_INPUT_BYTES = 1 << 30


class TimedSide:
    def __init__(self, fn, inputs, device, kind, label, flush, l2_bytes=0, arch="", make_inputs=None):
        """`make_inputs(seed)`: the case's inputs for `seed`, like `inputs`; without it
        (in-process drivers) every sample and graph call reuses `inputs`."""
        self.fn, self.inputs, self.device = fn, inputs, device
        self.make_inputs = make_inputs
        self.kind, self.label = kind, label
        if flush:
            nbytes = gpu_flush_bytes(device.backend, l2_bytes, arch) if device.is_gpu else cpu_flush_bytes()
            with attributed(kind, "allocating the flush buffer"):
                self.flusher = shared_flusher(nbytes, device.torch_device)
        else:
            self.flusher = None
        self.graph = None
        self.graph_sized = False  # sized on a quiet device (prepare_graph)
        self.graph_failure = None  # why capture failed, once it has
        self.last_output = None
        self.call_ms = None
        self.device_call_ms = None
        self.graph_inputs = None  # GraphInputs of the current graph
        self.pristine = True  # the timed buffers hold the timing seed's inputs
        self._guards = tuple("%s %x" % (what, id(self)) for what in ("timed side", "timed graph", "graph inputs"))
        SNAPSHOT.guard(self._guards[0], self, ("fn", "flusher", "make_inputs", "device"))

    @property
    def flush_bytes(self):
        return self.flusher.nbytes if self.flusher else 0

    def held_bytes(self):
        """Device memory this side holds: its inputs and, with a graph, the outputs of
        the graph's calls (the flush buffer is the worker's, shared_flusher)."""
        graph = self.graph.calls * _nbytes(self.last_output) if self.graph is not None else 0
        sets = self.graph_inputs.nbytes if self.graph_inputs is not None else 0
        return _nbytes(list(self.inputs or [])) + graph + sets

    def _call(self):
        with torch.no_grad():
            return self.fn(self.inputs)

    def call_on(self, fresh, into_timed_buffers=True):
        """One untimed call after `fresh` (same structure as the timed inputs) is
        copied into the timed input buffers; returns its output, synchronised.
        Without `into_timed_buffers` the call takes `fresh` itself and the timed
        inputs stay as they are (a trusted side kept for the next timing)."""
        if into_timed_buffers:
            self._write_inputs(fresh)
        self.device.synchronize()
        with torch.no_grad():
            output = self.fn(self.inputs if into_timed_buffers else list(fresh))
        self.device.synchronize()
        return output

    def _write_inputs(self, fresh):
        """Copies `fresh` into the timed input buffers (a graph keeps reading them)."""
        self.inputs = list(self.inputs)
        with torch.no_grad():
            for i, (held, new) in enumerate(zip(self.inputs, fresh)):
                if torch.is_tensor(held) and torch.is_tensor(new) and held.shape == new.shape \
                        and held.dtype == new.dtype:
                    held.copy_(new)
                else:
                    self.inputs[i] = new

    def _sample(self):
        if self.device.is_gpu:
            return timers.event_sample(self._call, self.device.synchronize)
        return timers.clock_sample(self._call)

    def warm_up(self, warmup_ms):
        """Calls (timed, unflushed) until warmup_ms has passed, at least two; sets
        call_ms to the median of all but the first, and device_call_ms (below).
        Returns the number of calls."""
        times = []
        with attributed(self.kind, "%s raised" % self.label):
            deadline = timers.now_ms() + warmup_ms
            while len(times) < 2 or timers.now_ms() < deadline:
                sample = self._sample()
                times.append(sample.ms)
                self.last_output = sample.output
            self.call_ms = median(times[1:])
            self.device_call_ms = self._burst_ms()
        return len(times)

    def _burst_ms(self):
        """Device time per call of a burst of back-to-back calls between two events
        on the current stream (no host round trip per call): what the engine picks
        the method by. call_ms carries a device-wide synchronisation per call, tens
        of microseconds that would hide a kernel of a few. Work left on other
        streams is not in it; it only chooses the method, and such work cannot be
        captured into a graph (events are used then)."""
        if not self.device.is_gpu:
            return self.call_ms
        calls = max(2, min(BURST_MAX_CALLS, int(BURST_TARGET_MS / max(self.call_ms, 1e-3))))
        return timers.burst_ms(self._call, calls, self.device.synchronize)

    def prime(self, graph_below_ms=0.0):
        """What can run before the device is this side's alone (docs/timing.md,
        "Preparation"): two untimed calls (kernel loading, JIT, autotuning, the
        allocator's first blocks) and, on a GPU, when a burst says a call takes less
        device time than `graph_below_ms`, a graph captured ahead. The burst runs
        beside other work, so it only guesses: warm_up measures again on the quiet
        device, and the first graph batch checks the graph's size there."""
        with attributed(self.kind, "%s raised" % self.label):
            for _ in range(2):
                self.last_output = self._call()
            self.device.synchronize()
            if not self.device.is_gpu or graph_below_ms <= 0 or self.graph is not None:
                return
            guess = timers.burst_ms(self._call, PRIME_BURST_CALLS, self.device.synchronize)
        if guess < graph_below_ms:
            self._capture(guess)

    def prepare_graph(self, calls=None):
        """The graph for graph samples; returns None, or why graphs cannot be used.

        With `calls` (the engine's choice: both sides replay the same number of calls,
        so the per-call time is the engine's division, not a side's claim) the graph
        holds exactly that many, captured again when it holds another number.
        Without, the side sizes it on the device as it is now: the first capture's
        size comes from the warm-up's burst, which for a launch-bound call measures
        the launch interval, not the kernel, and so undercounts the calls that fit in
        GRAPH_TARGET_MS of device work. Back-to-back replays of it measure the device
        time per call; a graph holding less than half the target is captured again
        with as many calls as the target holds (within max_graph_calls), at most
        twice. A graph sized once keeps its size (a reference side kept between
        candidates)."""
        if not self.device.is_gpu:
            return "no graphs on the cpu backend"
        if calls is not None:
            calls = max(1, min(int(calls), self.max_graph_calls()))
            if self.graph_failure is None and (self.graph is None or self.graph.calls != calls):
                self._release_graph()
                self._capture_calls(calls)
            self.graph_sized = self.graph_failure is None
            return self.graph_failure
        if self.graph is None and self.graph_failure is None:
            self._capture(self.device_call_ms or self.call_ms or 1.0)
        if self.graph_failure is not None:
            return self.graph_failure
        if self.graph_sized:
            return None
        sync = self.device.synchronize
        for _ in range(2):
            with attributed(self.kind, "%s raised" % self.label):
                self.graph.replay_ms(1, sync)  # the first replay uploads the graph
                per_call = self.graph.replay_ms(GRAPH_SIZING_REPLAYS, sync)
            wanted = min(self.max_graph_calls(), int(GRAPH_TARGET_MS / max(per_call, 1e-5)))
            if per_call * self.graph.calls >= GRAPH_TARGET_MS / 2 or wanted <= self.graph.calls:
                break
            self._release_graph()
            self._capture_calls(wanted)
            if self.graph_failure is not None:
                return self.graph_failure
        self.graph_sized = True
        return None

    def _capture(self, per_call_ms):
        """A first graph of as many calls as GRAPH_TARGET_MS holds at `per_call_ms`."""
        self._capture_calls(max(1, min(self.max_graph_calls(), int(GRAPH_TARGET_MS / max(per_call_ms, 1e-4)))))
        self.graph_sized = False

    def _capture_calls(self, calls):
        """Captures `calls` calls into self.graph, call i on its own input set
        (GraphInputs). A capture that fails (GraphReplay turns whatever the call
        raised while captured into GraphUnavailable) is remembered in graph_failure,
        not retried: both sides then use events."""
        self.graph = None
        try:
            if self.make_inputs is not None:
                unfit = None  # no graph, not the side's error: out of `attributed`
                with attributed(self.kind, "making the input sets of a graph"):
                    try:
                        self.graph_inputs = GraphInputs(self.inputs, self.make_inputs, calls, self.device)
                    except GraphInputsUnfit as e:
                        unfit = e
                if unfit is not None:
                    raise unfit
            sets = self.graph_inputs
            call = (lambda i: self._call_on_set(sets.call_inputs[i])) if sets is not None else (lambda i: self._call())
            self.graph = timers.GraphReplay(call, calls, self.device.synchronize)
            with attributed(self.kind, "%s raised" % self.label):
                escaped = work_outside_graph(self.graph, call, self.device.synchronize)
            if escaped:
                self._release_graph()
                raise timers.GraphUnavailable(escaped)
            SNAPSHOT.guard(self._guards[1], self.graph, ("_graph", "outputs", "calls"))
            if sets is not None:
                SNAPSHOT.guard(self._guards[2], sets, ("pool", "stacked", "positions", "make_inputs"))
        except timers.GraphUnavailable as e:
            self.graph_failure = str(e)
            self.graph_inputs = None
        except GraphInputsUnfit as e:
            self.graph_failure = str(e)
            self.graph_inputs = None

    def _call_on_set(self, inputs):
        with torch.no_grad():
            return self.fn(inputs)

    def _release_graph(self):
        for name in self._guards[1:]:
            SNAPSHOT.unguard(name)
        if self.graph is not None:
            self.graph.release()
        self.graph = self.graph_inputs = None

    def max_graph_calls(self):
        """GRAPH_MAX_CALLS, or fewer when that many calls' outputs would pass
        GRAPH_OUTPUT_BYTES (a captured graph may keep every call's output) or their
        input sets, with the pool's, GRAPH_INPUT_BYTES."""
        limit = GRAPH_MAX_CALLS
        per_call = _nbytes(self.last_output)
        if per_call > 0:
            limit = min(limit, GRAPH_OUTPUT_BYTES // per_call)
        per_set = _nbytes(list(self.inputs or []))
        if self.make_inputs is not None and per_set > 0:
            limit = min(limit, GRAPH_INPUT_BYTES // per_set - POOL_SETS)
        return max(1, limit)


    def flush(self):
        """Overwrites the flush buffer (before a cold sample). The garbage collector
        stays paused from here until the next sample's clock starts (sample): a
        collection runs the finalizers (`__del__`) of whatever cyclic garbage the
        candidate left, wherever it happens to run, and one run between the flush and
        the clock could warm what the flush evicted (`relu.gc-finalizer`)."""
        gc.disable()
        if self.flusher is not None:
            self.flusher.flush()

    def sample(self, method, seed=None, check_call=0):
        """One timed sample by `method` on fresh inputs: those of `seed` written into the
        timed buffers (events, clock), or, for a graph, every call's input set filled
        from the pool in the order `seed` decides. Returns (Sample, the output to hand
        to the engine, the inputs that output was made from, whether the call changed
        its inputs): for a graph, the output of call `check_call` (modulo the calls).
        Without `seed` or make_inputs, the inputs stay as they are."""
        fresh = seed is not None and self.make_inputs is not None
        modified = False
        # No collection, and so no finalizer of the candidate's garbage, between the
        # request and the clock: one that ran while the fresh inputs are drawn and copied
        # took them from the worker's frame and computed the answer before the clock
        # started (`relu.gc-finalizer`). Collections inside the call are clocked.
        gc.disable()
        with attributed(self.kind, "%s raised" % self.label):
            if method == timers.GRAPH:
                try:
                    if fresh and self.graph_inputs is not None:
                        self._refresh_graph_inputs(seed)  # the call sets, not self.inputs
                finally:
                    gc.enable()
                sample = self.graph.sample(self.device.synchronize)
                call = check_call % self.graph.calls
                output = self.graph.outputs[call]
                inputs = self.graph_inputs.call_inputs[call] if self.graph_inputs is not None else self.inputs
            else:
                source = None
                try:
                    if fresh:
                        source = self.make_inputs(seed)
                        self._write_inputs(source)
                        self.pristine = False
                finally:
                    gc.enable()
                sample = self._sample()
                output, inputs = sample.output, self.inputs
                if source is not None:
                    modified = bool(modified_inputs(source, self.inputs))
        self.last_output = sample.output
        return sample, output, inputs, modified

    def _refresh_graph_inputs(self, seed):
        try:
            self.graph_inputs.refresh(seed)
        except GraphInputsUnfit as e:  # the task's inputs, not the side's code
            raise WorkerError(TASK_ERROR, "making the input sets of a graph sample: %s" % e) from None

    def burst(self, method, replays):
        """`replays` graph replays (`cuda_graph`) or calls, back to back on the inputs
        as they are, then one synchronisation (time_burst)."""
        with attributed(self.kind, "%s raised" % self.label):
            if method == timers.GRAPH:
                self.graph.replay(replays)
            else:
                for _ in range(replays):
                    self.last_output = self._call()
            self.device.synchronize()

    def batch(self, method, cold, warm):
        """`cold` flushed samples then `warm` back-to-back ones, by `method`, on the
        inputs as they are (in-process drivers: timing/rounds.py). Returns lists of ms."""
        out = {"cold_ms": [], "warm_ms": [], "wall_ms": []}
        for flushed in [True] * cold + [False] * warm:
            if flushed:
                self.flush()
            sample, _, _, _ = self.sample(method)
            out["cold_ms" if flushed else "warm_ms"].append(sample.ms)
            out["wall_ms"].append(sample.wall_ms)
        return out

    def restore_inputs(self, timing_seed):
        """Puts the timing seed's inputs back into the timed buffers after samples
        wrote others (a kept reference side is taken up again with them)."""
        if not self.pristine and self.make_inputs is not None:
            with attributed(self.kind, "remaking the timing inputs"):
                self._write_inputs(self.make_inputs(timing_seed))
            self.pristine = True

    def release(self):
        gc.enable()  # paused by a flush with no sample after it
        self._release_graph()
        SNAPSHOT.unguard(self._guards[0])
        self.fn = self.inputs = self.graph = self.flusher = self.last_output = None
        self.make_inputs = None


class GraphInputsUnfit(Exception):
    pass


class GraphInputs:
    """One input set per captured call, stacked per input position ([calls, ...] on
    the device), and a pool of POOL_SETS sets they are filled from before every
    replay: refresh(seed) makes the pool's sets of pool_seed(seed, i) in place, then
    call i reads pool set assignment(seed)[i]. Inputs that are not tensors are shared
    by every call. A pool of fixed seeds would let a candidate compute its answers
    for them ahead (between samples, where no clock looks) and a captured kernel find
    its call's among them by a few of its input's values."""

    def __init__(self, inputs, make_inputs, calls, device):
        self.make_inputs = make_inputs
        per_set = _nbytes(list(inputs))
        if (POOL_SETS + calls) * per_set > GRAPH_INPUT_BYTES:
            raise GraphInputsUnfit("the input sets of a graph of %d call(s) and its pool of %d (%d bytes a set) "
                                   "would pass %d bytes" % (calls, POOL_SETS, per_set, GRAPH_INPUT_BYTES))
        pool = [make_inputs(POOL_SEED + i) for i in range(POOL_SETS)]
        for other in pool:
            if not same_layout(other, inputs):
                raise GraphInputsUnfit("the case's inputs differ in shape or dtype between seeds: "
                                       "no graph of input sets")
        self.calls, self.device = calls, device
        self.positions = [i for i, x in enumerate(inputs) if torch.is_tensor(x)]
        with torch.no_grad():
            self.pool = {i: torch.stack([p[i] for p in pool]) for i in self.positions}
            self.stacked = {i: torch.empty((calls,) + tuple(inputs[i].shape), dtype=inputs[i].dtype,
                                           device=inputs[i].device) for i in self.positions}
        self.call_inputs = [[self.stacked[j][k] if j in self.stacked else x for j, x in enumerate(inputs)]
                            for k in range(calls)]
        self.nbytes = sum(t.numel() * t.element_size() for t in list(self.pool.values()) + list(self.stacked.values()))
        self.refresh(0, remake=False)

    def refresh(self, seed, remake=True):
        """Fills every call's input set for `seed`; with `remake`, the pool's sets are
        first made anew from `seed` (pool_seed), written into the pool in place."""
        if remake:
            for k in range(POOL_SETS):
                fresh = self.make_inputs(pool_seed(seed, k))
                with torch.no_grad():
                    for i in self.positions:
                        if not torch.is_tensor(fresh[i]) or fresh[i].shape != self.pool[i].shape[1:] \
                                or fresh[i].dtype != self.pool[i].dtype:
                            raise GraphInputsUnfit("the case's inputs differ in shape or dtype between seeds")
                        self.pool[i][k].copy_(fresh[i])
        order = assignment(seed, self.calls)
        with torch.no_grad():
            index = order.to(self.device.torch_device) if self.device.is_gpu else order
            for i in self.positions:
                torch.index_select(self.pool[i], 0, index, out=self.stacked[i])


def pool_seed(seed, k):
    """The seed of pool set `k` for the sample of `seed` (the same on both sides)."""
    return (int(seed) + (k + 1) * 0x9E3779B97F4A7C15) % (1 << 62)


def assignment(seed, calls):
    """Which pool set each of a graph's first `calls` calls reads for `seed` (the same
    for any graph size: call i's set does not depend on how many calls follow)."""
    generator = torch.Generator().manual_seed(int(seed))
    return torch.randint(POOL_SETS, (GRAPH_MAX_CALLS,), generator=generator)[:calls]


# How far a replay's output may be from an eager call's on the same inputs and still
# count as the same work: kernels that reduce with atomics differ in the last bits
# from run to run; work left out of the graph leaves what the captured part wrote
# (the zeros of torch::zeros, or the poison below).
REPLAY_RTOL = 1e-3


def work_outside_graph(graph, call, synchronize):
    """Why `graph` does not do call 0's work, or None when it does. Kernels launched on
    the legacy default stream (`<<<grid, block>>>` with no stream: what most
    LLM-written kernels do) are not captured: they run once while the graph is made,
    and a replay leaves their outputs as the captured part wrote them. So the graph's
    outputs are poisoned (NaN, or -1 for integers), the graph replayed once, and
    call 0's output compared with an eager call's on the same inputs. The side then
    uses events, which time such kernels like any other (docs/timing.md, "Graphs")."""
    with torch.no_grad():
        for outputs in graph.outputs:
            for t in _tensors_in(outputs):
                t.fill_(float("nan") if t.is_floating_point() or t.is_complex() else -1)
        graph.replay()
        synchronize()
        replayed = [t.clone() for t in _tensors_in(graph.outputs[0])]
        eager = _tensors_in(call(0))
        synchronize()
    if len(replayed) != len(eager) or not all(_same_work(r, e) for r, e in zip(replayed, eager)):
        return ("a graph replay does not reproduce an eager call on the same inputs (kernels launched "
                "outside the captured stream, e.g. on the legacy default stream, are not in the graph)")
    return None


def _same_work(replayed, eager):
    """Whether a replay's output is an eager call's: the same shape and dtype; for
    integers and bools the same values; for floating point (a complex number as its
    two real parts) NaNs at the same places, the same infinities where the eager
    output has them, and elsewhere no value further from the eager one than
    REPLAY_RTOL times the largest finite eager magnitude. Read a chunk of
    digest.CHUNK elements at a time (digest.flat_chunks): the float64 temporaries
    stay a few chunks, however large the output. The two maxima are exact, so the
    answer is the one a whole-tensor comparison gives."""
    if replayed.shape != eager.shape or replayed.dtype != eager.dtype:
        return False
    if not (replayed.is_floating_point() or replayed.is_complex()):
        return same_bits(replayed, eager)
    if replayed.is_complex():
        replayed, eager = torch.view_as_real(replayed), torch.view_as_real(eager)
    scale = error = 0.0
    any_finite = False
    for pieces in digest.flat_chunks((replayed, eager), digest.CHUNK):
        for r, e in pieces:
            r, e = r.double(), e.double()
            r_nan, e_nan = torch.isnan(r), torch.isnan(e)
            if not torch.equal(r_nan, e_nan):
                return False
            finite = torch.isfinite(e)
            infinite = ~(finite | e_nan)  # infinities where the eager call has them
            if not torch.equal(r[infinite], e[infinite]):
                return False
            if bool(finite.any()):
                r, e = r[finite], e[finite]
                scale = max(scale, float(e.abs().max()))
                error = max(error, float((r - e).abs().max()))
                any_finite = True
    return not any_finite or error <= REPLAY_RTOL * scale + 1e-30


def _nbytes(value):
    """Bytes of the tensors in `value` (a tensor, or tuples/lists of them)."""
    return sum(t.numel() * t.element_size() for t in _tensors_in(value))


def _tensors_in(value, depth=0):
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 8 or not isinstance(value, (tuple, list)):
        return []
    return [t for item in value for t in _tensors_in(item, depth + 1)]


def output_layout(value):
    """The `output_layout` of docs/native-format.md for a tensor or a flat
    tuple/list of tensors (dtypes and shapes, no values, no copy); None for
    anything else."""
    from kvault_worker.tensorbytes import SUPPORTED
    items = [value] if isinstance(value, torch.Tensor) else value
    if not isinstance(items, (tuple, list)) or not all(
            isinstance(t, torch.Tensor) and t.dtype in SUPPORTED for t in items):
        return None
    tensors = [{"dtype": SUPPORTED[t.dtype][0], "shape": list(t.shape)} for t in items]
    if isinstance(value, torch.Tensor):
        tree = {"kind": "tensor", "index": 0}
    else:
        tree = {"kind": "tuple" if isinstance(value, tuple) else "list",
                "items": [{"kind": "tensor", "index": i} for i in range(len(items))]}
    return {"tree": tree, "tensors": tensors}
