"""Building and calling the reference and the candidate for one input case.

The seeding order is the same for both so that their weights and inputs match:

    seed(s); init = get_init_inputs()
    seed(s); model = ModelClass(*init).to(device)
    seed(s); with device: inputs = [x.to(device) for x in get_inputs()]
    seed(s); output = forward(inputs); device.synchronize()

Errors are attributed by who wrote the code that failed: task code -> task_error,
ModelNew's constructor -> load_error, the candidate's forward -> runtime_error,
memory exhaustion anywhere -> oom (errors.attributed).
"""
import contextlib

import torch

from kvault_worker.candidates import NATIVE
from kvault_worker.errors import LOAD_ERROR, RUNTIME_ERROR, TASK_ERROR, attributed
from kvault_worker import distributions, native
from kvault_worker.seeding import seed
from kvault_worker.tasks import check_init_inputs, check_inputs

def init_inputs(case, s):
    seed(s)
    with attributed(TASK_ERROR, "get_init_inputs of case %s raised" % case.name):
        return check_init_inputs(case.get_init_inputs())


def make_inputs(case, s, device, distribution=distributions.TASK):
    """The case's inputs for seed `s`, redrawn from `distribution` (distributions.py),
    made where they are used: on a GPU, PyTorch's default device is the worker's
    device while get_inputs runs, so tensors it creates without naming a device are
    drawn on the GPU (no host generation, no transfer; KernelBench-sized inputs of
    several GB take seconds to draw on the CPU). Tensors it puts elsewhere are moved.
    Reference and candidate workers do the same on the same device, so their inputs
    (and digests) are equal."""
    seed(s)
    on_device = device.torch_device if device.is_gpu and hasattr(torch.device, "__enter__") \
        else contextlib.nullcontext()
    with attributed(TASK_ERROR, "get_inputs of case %s raised" % case.name), on_device:
        inputs = check_inputs(case.get_inputs())
    inputs = distributions.transform(inputs, distribution, s)
    with attributed(TASK_ERROR, "moving the inputs of case %s to %s" % (case.name, device.backend)):
        return [x.to(device.torch_device) if isinstance(x, torch.Tensor) else x for x in inputs]


def build_model(model_class, init, s, torch_device, kind, label):
    seed(s)
    with attributed(kind, "constructing %s raised" % label):
        return model_class(*init).to(torch_device)


def count_parameters(model):
    """Elements in the parameters and buffers of `model`."""
    return sum(t.numel() for t in model.parameters()) + sum(t.numel() for t in model.buffers())


def reference_forward(task, case, s, device):
    """Builds Model for the case; returns fn(inputs) -> output."""
    model = build_model(task.model_class, init_inputs(case, s), s, device.torch_device,
                        TASK_ERROR, "Model")
    return lambda inputs: model(*inputs)


def candidate_forward(task, candidate, case, s, device, output_layout=None, fill_outputs=False):
    """Builds whatever the candidate needs for the case; returns fn(inputs) -> output.

    A function entry (an extension's or Triton's forward) gets the twin's arguments
    through `model(*inputs, fn=forward)`; without a twin, what a twin would give:
    the inputs, then the Model's parameters (named_parameters() order), then its
    buffers, as the native format does. Native candidates get outputs of `output_layout` (native.OutputLayout; None =
    take it from the reference's output on this case's inputs, which only the
    `time` request may do), garbage-filled when `fill_outputs`.
    """
    if candidate.format == NATIVE:
        return _native_forward(task, candidate, case, s, device, output_layout, fill_outputs)
    init = init_inputs(case, s)
    if candidate.model_new is not None:  # kernelbench, or triton with ModelNew
        model = build_model(candidate.model_new, init, s, device.torch_device, LOAD_ERROR, "ModelNew")
        return lambda inputs: model(*inputs)
    return _function_forward(task, candidate.forward, init, s, device)


def _function_forward(task, forward, init, s, device):
    """model(*inputs, fn=forward) with a twin; else forward(*inputs, *weights)."""
    model = build_model(task.model_class, init, s, device.torch_device, TASK_ERROR, "Model")
    if task.has_twin:
        return lambda inputs: model(*inputs, fn=forward)
    weights = model_weights(model)
    return lambda inputs: forward(*inputs, *weights)


def model_weights(model):
    """What a functional twin would take besides the inputs: the parameters, then the buffers."""
    return list(model.parameters()) + list(model.buffers())


def _native_forward(task, candidate, case, s, device, layout, fill):
    """Native format: with a twin, model(*inputs, fn=kvault_forward); without one,
    kvault_forward(*inputs, *parameters, *buffers) (docs/native-format.md)."""
    if layout is None:
        reference = reference_forward(task, case, s, device)
        output = call_reference(reference, make_inputs(case, s, device), s, device)
        layout = native.OutputLayout.of_output(output)
        del output, reference
    forward = candidate.library.bind(layout, device, fill)
    return _function_forward(task, forward, init_inputs(case, s), s, device)


def call(fn, inputs, s, device, kind, label):
    """seed(s), fn(inputs) without autograd, then a device synchronisation, all
    attributed to `kind`, so asynchronous device errors count against `fn`."""
    seed(s)
    with attributed(kind, "%s raised" % label):
        with torch.no_grad():
            output = fn(inputs)
        device.synchronize()
    return output


def call_candidate(fn, inputs, s, device):
    return call(fn, inputs, s, device, RUNTIME_ERROR, "the candidate's forward")


def call_reference(fn, inputs, s, device):
    return call(fn, inputs, s, device, TASK_ERROR, "the reference forward")
