"""The candidate's correctness run (the `run` request): three calls that probe for
the cheats of docs/adversarial.md, then the outputs for the engine to compare.

    inputs  = the case's inputs for (seed, distribution); pristine = a private copy
    decoy   = the case's inputs for (seed + DECOY_SEED_OFFSET, distribution)
    1. call on the decoy buffers; its outputs are overwritten with NaN (integers:
       a fixed pattern) and freed, so a buffer handed back uninitialised holds
       garbage, never a plausible answer;
    2. the same buffers are refilled in place with the real inputs - on a GPU
       behind a ~5 ms sleep on the current stream - and the candidate is called
       again: a cache keyed by input address or shape replays the decoy's answer,
       and work launched on another stream without waiting for the current one
       reads the decoy values. This output is `out`;
    3. a call on fresh copies of the real inputs: `repeat_out`, compared as well
       (work skipped on repeated calls, nondeterminism).
The outputs of calls 2 and 3 are copied as soon as each call returns (on the host, or
on the device), so work a thread of the candidate's finishes afterwards does not count.
After every call: the inputs must equal the pristine copy (bitwise, NaN-aware),
the outputs must be plain tensors (a subclass can defer its work past the timed
region), the outputs of calls 2 and 3 that share memory with an input are
reported (aliasing.py; the engine allows them only where the reference's output
aliases an input too), the harness must be intact (integrity.py), and under the
`custom_kernel` policy no computing PyTorch operator may have been dispatched,
on any thread, and on a GPU the checked call must launch a kernel of the
candidate's own (op_policy.py). The decoy call is skipped when the decoy inputs differ in shape
or dtype from the real ones.
"""
import time

import torch

from kvault_worker import execution, op_policy
from kvault_worker.aliasing import output_aliases
from kvault_worker.digest import modified_inputs, pristine_copy, reported_input_digest, same_layout
from kvault_worker.errors import (INTERNAL, MISMATCH, POLICY_VIOLATION, RUNTIME_ERROR, WorkerError,
                                  attributed)
from kvault_worker.integrity import SNAPSHOT
from kvault_worker.handoff import tensors_of
from kvault_worker.tensorfile import Captured, capture

DECOY_SEED_OFFSET = 7919
# About 5 ms at 2 GHz: far longer than a launch, short enough that 15 runs of 14
# lanes do not keep the GPU (time-sliced between processes) busy.
GATE_CYCLES = 10_000_000
_sleep = getattr(torch.cuda, "_sleep", None)


class RunResult:
    def __init__(self, digest, output, repeat, modified, seconds, aliases):
        self.digest = digest
        self.output = output  # captured (tensorfile.capture), or a device copy (keep_on_device)
        self.repeat = repeat  # the same, or None
        self.modified = modified
        self.seconds = seconds
        self.aliases = aliases  # output_aliases of the checked and the repeated call


def checked_run(task, candidate, case, s, distribution, device, forward_options, repeat=True,
                keep_on_device=False, policy=None):
    """`forward_options`: extra arguments of execution.candidate_forward (native format).
    keep_on_device: outputs come back as private device copies (handoff.py), not captured.
    policy: the op_policy.Enforcer of the attempt (None: the task's policy)."""
    grab = device_copy if keep_on_device else captured
    fn = execution.candidate_forward(task, candidate, case, s, device, **forward_options)
    inputs = execution.make_inputs(case, s, device, distribution)
    pristine = pristine_copy(inputs)
    digest = reported_input_digest(pristine)
    caller = _Caller(fn, s, device, policy or op_policy.Enforcer(task.meta.policy, device))

    decoy = execution.make_inputs(case, s + DECOY_SEED_OFFSET, device, distribution)
    decoy_fits = same_layout(decoy, inputs)
    del inputs  # pristine holds their values: one copy fewer while the candidate runs
    if decoy_fits:
        _poison(caller.call(decoy))
        buffers = decoy
        _refill(buffers, pristine, device)
    else:
        buffers, decoy = pristine_copy(pristine), None
    started = time.perf_counter()
    output = caller.call(buffers, kernels=True)
    seconds = time.perf_counter() - started
    first = grab(output)  # right when the call returns: no work after it counts
    aliases = output_aliases(output, buffers)
    modified = set(_modified(pristine, buffers))
    del output
    repeated = None
    if repeat:
        fresh = pristine_copy(pristine)
        second = caller.call(fresh)
        repeated = grab(second)
        aliases += [a for a in output_aliases(second, fresh) if a not in aliases]
        modified.update(_modified(pristine, fresh))
        del second
    return RunResult(digest, first, repeated, sorted(modified), seconds, aliases)


class _Caller:
    """Calls the candidate and applies the per-call checks."""

    def __init__(self, fn, s, device, policy):
        self.fn, self.s, self.device = fn, s, device
        self.policy = policy

    def call(self, inputs, kernels=False):
        """kernels: on a GPU under custom_kernel, the call must launch a kernel of its own."""
        try:
            output = self.policy.call(
                lambda: execution.call_candidate(self.fn, inputs, self.s, self.device), kernels=kernels)
        except op_policy.Violation as e:
            raise WorkerError(POLICY_VIOLATION, str(e))
        except op_policy.Blind as e:
            raise WorkerError(INTERNAL, str(e))
        check_integrity("calling the candidate")
        subclass = _subclass_in(output)
        if subclass:
            raise WorkerError(MISMATCH, "the candidate returned a tensor subclass (%s); outputs must "
                              "be plain tensors, whose work is done when forward returns" % subclass)
        return output


def check_integrity(when, kernels=False):
    """A policy_violation when the harness changed; with `kernels` (True: every
    operator, or a list of operators' names), also when a kernel was registered for
    one of PyTorch's operators (integrity.Snapshot.kernel_changes)."""
    changed = SNAPSHOT.changes()
    if kernels:
        changed += SNAPSHOT.kernel_changes(None if kernels is True else kernels)
    if changed:
        SNAPSHOT.restore_switches()
        raise WorkerError(POLICY_VIOLATION, "the harness was patched while %s: %s changed"
                          % (when, ", ".join(changed[:8])))


def _subclass_in(value, depth=0):
    if depth > 64:
        return None
    if isinstance(value, torch.Tensor):
        kind = type(value)
        return None if kind in (torch.Tensor, torch.nn.Parameter) else kind.__name__
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return None
    for item in items:
        found = _subclass_in(item, depth + 1)
        if found:
            return found
    return None


def _refill(buffers, inputs, device):
    """buffers[i] <- inputs[i] in place; on a GPU queued behind a sleep on the current stream."""
    with torch.no_grad():
        if device.is_gpu and _sleep is not None:
            _sleep(GATE_CYCLES)
        for i, (b, x) in enumerate(zip(buffers, inputs)):
            if isinstance(b, torch.Tensor):
                b.copy_(x)
            else:
                buffers[i] = x


def _poison(value, depth=0):
    """Overwrites the tensors of a returned value (its memory is freed next)."""
    if depth > 64:
        return
    if isinstance(value, torch.Tensor):
        if isinstance(value, torch.nn.Parameter) or value.requires_grad:
            return  # the model's own weights, returned as they are: never overwrite them
        try:
            with torch.no_grad():
                value.detach().fill_(float("nan") if value.is_floating_point() or value.is_complex() else 0x5A)
        except RuntimeError:
            pass  # read-only or overlapping memory (an expanded view): nothing to poison
    elif isinstance(value, (list, tuple)):
        for item in value:
            _poison(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _poison(item, depth + 1)


def captured(output):
    """The candidate's output captured (tensorfile.capture; already captured: as is)."""
    if isinstance(output, Captured):
        return output
    with attributed(RUNTIME_ERROR, "the candidate's output cannot be captured"):
        return capture(output)


def device_copy(output, kind=RUNTIME_ERROR, label="the candidate"):
    """A copy that later calls cannot change (a candidate may hand back one buffer
    twice): tensors cloned where they are, containers kept; anything else captured
    on the host (not deliverable: written to files). Failures blame `kind`."""
    tensors = tensors_of(output)
    if tensors is None:
        if isinstance(output, Captured):
            return output
        with attributed(kind, "the output of %s cannot be captured" % label):
            return capture(output)
    with attributed(kind, "the output of %s cannot be copied" % label):
        copies = [t.detach().clone() for t in tensors]
    if isinstance(output, torch.Tensor):
        return copies[0]
    return tuple(copies) if isinstance(output, tuple) else copies


def _modified(pristine, current):
    with attributed(RUNTIME_ERROR, "the candidate left its inputs unreadable"):
        return modified_inputs(pristine, current)
