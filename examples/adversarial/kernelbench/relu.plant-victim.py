# Honest control for relu.plant-module.py: imports a standard-library module that
# the worker has not imported yet, then computes relu. A module planted where it
# would be found first would make it fail (crash, blamed on it).
import colorsys  # noqa: F401

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
