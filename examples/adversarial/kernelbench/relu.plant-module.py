# Cheat: plants modules (colorsys.py, triton.py) that raise, in its working directory,
# the folder above it (the worker zygote's, once the first entry of every worker's
# sys.path), every sys.path entry below that folder and $HOME, so that a later
# honest candidate importing one of them (relu.plant-victim.py, a Triton kernel)
# fails as `crash`, blamed on itself. (It leaves the system's own folders alone, which
# would be writable to it only without the sandbox.) Its own result is honest
# (passed); the honest candidate must still pass.
import os
import sys

import torch
import torch.nn as nn

PLANT = "raise RuntimeError('planted by relu.plant-module')\n"


def plant():
    above = os.path.dirname(os.getcwd())
    folders = {os.getcwd(), above, os.environ.get("HOME", os.getcwd())}
    folders.update(p for p in (os.path.realpath(e or os.getcwd()) for e in sys.path)
                   if p == above or p.startswith(above + "/"))
    for folder in folders:
        for name in ("colorsys.py", "triton.py"):
            try:
                with open(os.path.join(folder, name), "w") as f:
                    f.write(PLANT)
            except OSError:
                pass


plant()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
