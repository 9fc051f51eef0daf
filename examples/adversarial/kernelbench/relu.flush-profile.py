# Cheat: a profile function (sys.setprofile, and threading.setprofile for later
# threads) runs the candidate's code on every Python call of the worker, the flush
# between samples included, where no clock looks. Here it only notes the flush.
import sys
import threading

import torch
import torch.nn as nn

SEEN = []


def _profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "flush":
        SEEN.append(frame.f_code.co_filename)


class ModelNew(nn.Module):
    def forward(self, x):
        if sys.getprofile() is not _profile:
            sys.setprofile(_profile)
            threading.setprofile(_profile)
        return torch.relu(x)
