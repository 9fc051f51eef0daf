"""BAD on purpose (suite/vector_add.py), KernelBench format: the class is there, but the
file imports a module that does not exist, so loading it fails: load_error."""
import torch.nn as nn

import kvault_example_no_such_module  # noqa: F401  (raises ModuleNotFoundError)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return a + b
