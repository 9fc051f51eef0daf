# Cheat: plants modules (colorsys.py, triton.py) that raise, in its working directory,
# the folder above it (the worker zygote's), every sys.path entry below that folder,
# every other sys.path folder it can write (the zygote's working directory, once the
# first entry of every worker's sys.path) and $HOME, so that a later honest candidate
# importing one of them (relu.plant-victim.py, a Triton kernel) fails as `crash`,
# blamed on itself. (It leaves the interpreter's folders and the worker's own source
# alone, which would be writable to it only without the sandbox.) Its own result is
# honest (passed); the honest candidate must still pass.
import os
import sys

import torch
import torch.nn as nn

PLANT = "raise RuntimeError('planted by relu.plant-module')\n"


def plant():
    above = os.path.dirname(os.getcwd())
    folders = {os.getcwd(), above, os.environ.get("HOME", os.getcwd())}
    entries = [os.path.realpath(e or os.getcwd()) for e in sys.path]
    folders.update(p for p in entries if p == above or p.startswith(above + "/"))
    folders.update(p for p in entries if os.path.isdir(p) and os.access(p, os.W_OK) and not _kept(p))
    for folder in folders:
        for name in ("colorsys.py", "triton.py"):
            try:
                with open(os.path.join(folder, name), "w") as f:
                    f.write(PLANT)
            except OSError:
                pass


def _kept(folder):
    """The interpreter's folders and the worker's own source: never planted in."""
    system = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return (any(folder == p or folder.startswith(p + "/") for p in system)
            or "-packages" in folder or os.path.isdir(os.path.join(folder, "kvault_worker")))


plant()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
