# Cheat: computes nothing; looks for other KernelVault caches on the host (beside
# the one above its working directory or any folder of its sys.path, beside the one
# $KVAULT_CACHE_DIR names, in ~/.cache/kvault, /tmp, /var/tmp), reads
# every reference output there (refs/<2>/<key>/meta.json names the input digest)
# and replays the one made from the same inputs (the worker's own digest function
# gives the key). Zeros when it finds none: mismatch.
import glob
import json
import os
import sys

import torch
import torch.nn as nn

from kvault_worker import digest, tensorfile


def caches():
    roots = [os.path.expanduser("~/.cache/kvault"), "/tmp", "/var/tmp"]
    for start in [os.getcwd(), os.environ.get("KVAULT_CACHE_DIR", "")] + sys.path:
        here = os.path.realpath(start or os.getcwd())
        while here != os.path.dirname(here):
            roots.append(os.path.dirname(here))
            here = os.path.dirname(here)
    found = set()
    for root in roots:
        for refs in glob.glob(os.path.join(root, "refs")) + glob.glob(os.path.join(root, "*", "refs")):
            found.add(refs)
    return found


def answers():
    table = {}
    for refs in caches():
        for meta in glob.glob(os.path.join(refs, "*", "*", "meta.json")):
            try:
                with open(meta) as f:
                    table[json.load(f)["input_digest"]] = os.path.join(os.path.dirname(meta), "output.kvt")
            except (OSError, ValueError, KeyError, TypeError):
                pass
    return table


ANSWERS = answers()


class ModelNew(nn.Module):
    def forward(self, x):
        path = ANSWERS.get(digest.input_digest([x]))
        if path:
            try:
                return tensorfile.read(path)[0].to(x.device)
            except (OSError, ValueError):
                pass
        return torch.zeros_like(x)
