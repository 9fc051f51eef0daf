"""Where the `kvault` binary and its worker Python are, on whichever node asks.

`kvault` is `$KVAULT_BIN` when set; else `build/kvault` of the source tree this
package lives in, when it lives in one (run from a checkout with
`PYTHONPATH=<tree>/python`, or installed editable) and that file exists; else `kvault`
on PATH (an installed package has no tree). A node that finds none raises
FileNotFoundError saying what it tried: its service cannot start, and the router
reports the node instead of starting it again (router.py). Node services are Ray
workers, so these variables come from the environment `ray start` ran in.

The worker's Python is `$KVAULT_PYTHON` when set, else the tree's `.venv/bin/python`
when there is one (what scripts/env.sh picks on a machine made by scripts/setup.sh),
else kvault's own default (`python3`).
"""
import os
import shutil
from pathlib import Path

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
# The checkout holding this package (`<tree>/python/kernelvault`), or None when the
# package was installed: only the tree has the project file beside the package.
SOURCE_ROOT = _PACKAGE_PARENT.parent if (_PACKAGE_PARENT / "pyproject.toml").is_file() else None


def kvault_binary():
    """The `kvault` to run on this node (module doc); FileNotFoundError naming what
    was tried and how to fix it when there is none."""
    given = os.environ.get("KVAULT_BIN")
    if given:
        if shutil.which(given) is None:
            raise FileNotFoundError("KVAULT_BIN=%s is not an executable file on this node" % given)
        return given
    tried = ["$KVAULT_BIN (not set)"]
    if SOURCE_ROOT is not None:
        built = SOURCE_ROOT / "build" / "kvault"
        if built.is_file():
            return str(built)
        tried.append(str(built))
    on_path = shutil.which("kvault")
    if on_path:
        return on_path
    tried.append("kvault on PATH")
    raise FileNotFoundError("no kvault binary on this node (tried %s): set KVAULT_BIN to its path, or put it on "
                            "PATH, in the environment Ray's workers start with (`ray start`'s on this node)"
                            % ", ".join(tried))


def kvault_env():
    """The environment of a kvault process started on this node."""
    env = dict(os.environ)
    if not env.get("KVAULT_PYTHON") and SOURCE_ROOT is not None:
        venv = SOURCE_ROOT / ".venv" / "bin" / "python"
        if venv.exists():
            env["KVAULT_PYTHON"] = str(venv)
    return env
