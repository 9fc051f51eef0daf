"""Cost of the custom-kernel policy's observation (python/kvault_worker/op_policy.py)
per candidate call, on this machine's GPU or else its CPU.

usage: python3 bench/policy_cost.py      (from the repository root)
Prints milliseconds per call: a plain call, under the operator observer, under the
operator and kernel observers (GPU), and the observer's cost per operator.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kvault_worker import op_policy  # noqa: E402
from kvault_worker.device import Device  # noqa: E402


def per_call_ms(fn, n, device):
    fn()
    device.synchronize()
    started = time.perf_counter()
    for _ in range(n):
        fn()
    device.synchronize()
    return (time.perf_counter() - started) / n * 1e3


def main():
    gpu = torch.cuda.is_available()
    device = Device("hip" if torch.version.hip else "cuda", 0) if gpu else Device("cpu", 0)
    x = torch.randn(1 << 20, device=device.torch_device)
    enforcer = op_policy.Enforcer("custom_kernel", device, {"not_launched"})
    one_copy = lambda: x.clone()  # noqa: E731
    print("torch %s on %s" % (torch.__version__, torch.cuda.get_device_name(0) if gpu else "cpu"))
    print("plain call (one copy): %.3f ms" % per_call_ms(one_copy, 50, device))
    print("under the operator observer: %.3f ms" % per_call_ms(lambda: enforcer.call(one_copy), 50, device))
    if gpu:
        def with_kernels():
            try:
                enforcer.call(one_copy, kernels=True)
            except op_policy.Violation:
                pass  # PyTorch's copy kernel is not "its own": expected here
        print("under the operator and kernel observers: %.3f ms" % per_call_ms(with_kernels, 20, device))
    views = lambda: [x.view(-1) for _ in range(1000)]  # noqa: E731
    plain = per_call_ms(views, 5, device)
    empty = per_call_ms(lambda: enforcer.call(lambda: None), 20, device)
    observed = per_call_ms(lambda: enforcer.call(views), 5, device)
    print("per operator: %.1f us observed, %.2f us plain" % (observed - empty, plain))


if __name__ == "__main__":
    main()
