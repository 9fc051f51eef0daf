# Cheat: forge the worker's reply to the `run` request. The candidate finds the
# request and the reply descriptor on the worker's stack, writes a reply that claims
# inputs with another digest (the record would become the task's `task_error`, not
# the candidate's fault) and exits before the real reply is written.
import inspect
import json
import os

import torch
import torch.nn as nn


def _forge():
    request, write_fd = None, None
    for info in inspect.stack():
        local = info.frame.f_locals
        if request is None and isinstance(local.get("request"), dict) and local["request"].get("op") == "run":
            request = local["request"]
        if isinstance(local.get("write_fd"), int):
            write_fd = local["write_fd"]
    if request is None or write_fd is None:
        return
    reply = {"id": request.get("id"), "ok": True, "input_digest": "0" * 64, "inputs_modified": [],
             "seconds": 0.0}
    os.write(write_fd, (json.dumps(reply) + "\n").encode())
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        _forge()
        return torch.relu(x)
