"""Where the `kvault` binary and its worker Python are, on whichever node asks.

Every node runs the same checkout or installation: `$KVAULT_BIN` when set, else
`build/kvault` of the source tree this package lives in. The worker's Python is
`$KVAULT_PYTHON` when set, else the tree's `.venv/bin/python` (what scripts/env.sh
picks on a machine made by scripts/setup.sh).
"""
import os
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[3]


def kvault_binary():
    return os.environ.get("KVAULT_BIN") or str(SOURCE_ROOT / "build" / "kvault")


def kvault_env():
    """The environment of a kvault process started on this node."""
    env = dict(os.environ)
    if not env.get("KVAULT_PYTHON"):
        venv = SOURCE_ROOT / ".venv" / "bin" / "python"
        if venv.exists():
            env["KVAULT_PYTHON"] = str(venv)
    return env
