"""Input distributions beyond the task's own (docs/adversarial.md, "Defences").

A task's `get_inputs` may collapse what a kernel must do (non-negative inputs make
relu an identity; inputs near 1 make a missing scale invisible). The engine
therefore also runs every correctness case on inputs of the same shapes and dtypes
drawn from other distributions:

- `task`: the task's own inputs, unchanged;
- `signed`: each floating-point tensor replaced by N(0, 1) x its RMS (1 when the
  RMS is 0 or not finite), so both signs occur at the task's scale;
- `heavy_tailed`: as `signed`, but each value multiplied by exp(N(0, 1)/2)
  (a log-normal scale mixture: most values small, a few tens of times the RMS).

Both keep what the task's inputs promise of their structure, which a kernel may rely
on: exact zeros stay zeros (a triangular, banded or masked input stays so) and a
tensor symmetric in its last two dimensions stays symmetric. Integer, bool and
non-tensor inputs are kept. The draw is a function of the seed
only (a private generator on the inputs' device), so the reference and the
candidate workers make the same inputs. A task opts out with
KVAULT_META["input_distributions"] = [] (or lists the ones it accepts), e.g. when
its inputs must be positive.
"""
import torch

from kvault_worker.digest import flat_chunks

TASK = "task"
EXTRA = ("signed", "heavy_tailed")
ALL = (TASK,) + EXTRA


def transform(inputs, distribution, s):
    """`inputs` (tensors, scalars) redrawn from `distribution` with seed `s`, each
    tensor on its own device."""
    if distribution == TASK:
        return inputs
    if distribution not in EXTRA:
        raise ValueError("unknown input distribution %r" % (distribution,))
    generators = {}

    def generator_on(device):
        if device not in generators:
            g = torch.Generator(device=device)
            generators[device] = g.manual_seed((s * 1000003 + len(distribution)) % (1 << 63))
        return generators[device]

    return [_redraw(x, distribution, generator_on(x.device)) if isinstance(x, torch.Tensor) else x
            for x in inputs]


_CHUNK = 1 << 24  # elements per step over a large input: memory stays bounded


def _redraw(x, distribution, generator):
    if not x.is_floating_point() or x.numel() == 0:
        return x
    rms = _rms(x)
    if not (rms > 0 and rms < float("inf")):
        rms = 1.0
    # Drawn in float32 (twice as fast as float64 on the CPU) unless the task is float64.
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    values = torch.randn(x.shape, generator=generator, dtype=dtype, device=x.device)
    if distribution == "heavy_tailed":
        values.mul_(torch.randn(x.shape, generator=generator, dtype=dtype, device=x.device).mul_(0.5).exp_())
    if _symmetric(x):
        values = (values + values.mT).mul_(0.5 ** 0.5)
    values.mul_(rms)
    _keep_zeros(x, values)
    return values.to(x.dtype)


def _rms(x):
    """The RMS of x's values, summed in float64 a chunk at a time."""
    flat = x.detach().reshape(-1)
    total = 0.0
    for begin in range(0, flat.numel(), _CHUNK):
        total += float(flat[begin:begin + _CHUNK].double().pow(2).sum())
    return (total / flat.numel()) ** 0.5


def _symmetric(x):
    """Whether x equals its transpose in the last two dimensions (checked on the first
    row and column first: most inputs are told apart there at no cost), compared
    _CHUNK elements at a time through views (digest.flat_chunks): no x-sized
    temporary."""
    if x.dim() < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 2:
        return False
    if not torch.equal(x[..., 0, :], x[..., :, 0]):
        return False
    return all(torch.equal(a, b) for pieces in flat_chunks((x, x.mT), _CHUNK) for a, b in pieces)


def _keep_zeros(x, values):
    """Zeros where x has exact zeros, a chunk at a time."""
    source, target = x.detach().reshape(-1), values.view(-1)
    for begin in range(0, source.numel(), _CHUNK):
        chunk = source[begin:begin + _CHUNK]
        target[begin:begin + _CHUNK].masked_fill_(chunk == 0, 0)
