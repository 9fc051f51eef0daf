# A degenerate reference, as some public benchmark tasks are: the operations leave
# outputs within the tolerance of zero whatever the inputs (here a relu of a negated
# absolute value, scaled), so a kernel that returns zeros would pass. The engine
# makes such a task its own error (task_error: no reward for anyone) instead of
# grading candidates on it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(-torch.abs(x)) + 1e-6 * torch.tanh(x)


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
