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

Integer, bool and non-tensor inputs are kept. The draw is a function of the seed
only (a private generator on the inputs' device), so the reference and the
candidate workers make the same inputs. A task opts out with
KVAULT_META["input_distributions"] = [] (or lists the ones it accepts), e.g. when
its inputs must be positive.
"""
import torch

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


def _redraw(x, distribution, generator):
    if not x.is_floating_point() or x.numel() == 0:
        return x
    wide = x.detach().to(torch.float64)
    rms = float(wide.pow(2).mean().sqrt())
    if not (rms > 0 and rms < float("inf")):
        rms = 1.0
    # Drawn in float32 (twice as fast as float64 on the CPU) unless the task is float64.
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    values = torch.randn(x.shape, generator=generator, dtype=dtype, device=x.device)
    if distribution == "heavy_tailed":
        values.mul_(torch.randn(x.shape, generator=generator, dtype=dtype, device=x.device).mul_(0.5).exp_())
    return values.mul_(rms).to(x.dtype)
