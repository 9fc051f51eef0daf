"""seed(s): the one seeding rule of docs/worker-protocol.md ("Seeding")."""
import random

import torch

try:
    import numpy
except ImportError:  # numpy is optional
    numpy = None


def seed(s):
    """Seeds Python's `random`, NumPy (s mod 2**32) and torch on every device."""
    random.seed(s)
    if numpy is not None:
        numpy.random.seed(s % 2**32)
    torch.manual_seed(s)
