"""The one way results reach the driver's store: rows of `kvault export` (JSON Lines)
handed to `kvault import` (docs/export.md, "Import"). Python never writes the store."""
import subprocess

from .paths import kvault_binary, kvault_env

IMPORT_TIMEOUT_S = 600


def import_rows(db, rows):
    """Puts the export rows into the store `db` -> None, or why they could not be."""
    if not rows:
        return None
    try:
        run = subprocess.run([kvault_binary(), "import", "--db", db, "-"], input="\n".join(rows) + "\n",
                             capture_output=True, text=True, env=kvault_env(), timeout=IMPORT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "recording into the driver's store %s: %s" % (db, e)
    if run.returncode != 0:
        return "recording into the driver's store %s: %s" % (db, run.stderr.strip())
    return None
