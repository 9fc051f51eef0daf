"""The one way results reach the driver's store: rows of `kvault export` (JSON Lines)
handed to `kvault import` (docs/export.md, "Import"). Python never writes the store.

A Recorder keeps one `kvault import --ack` process open and feeds it rows as groups
finish; the process answers "ok <line>" once each row is stored, so a row is known to
be recorded before its result is delivered, without a process start per group.

Thread safety: record() may be called from any thread; calls run one at a time.
"""
import subprocess
import threading

from .paths import kvault_binary, kvault_env


class Recorder:
    """Records export rows into the store `db`."""

    def __init__(self, db):
        self.db = db
        self._lock = threading.Lock()
        self._process = None    # guarded by _lock

    def record(self, rows):
        """Stores the rows -> None, or why they could not be (the import process is
        then started afresh at the next call)."""
        if not rows:
            return None
        with self._lock:
            try:
                process = self._open()
                process.stdin.write("".join(row.rstrip("\n") + "\n" for row in rows))
                process.stdin.flush()
                for _ in rows:
                    if not process.stdout.readline().startswith("ok "):
                        raise OSError(self._ended(process))
            except OSError as e:
                self._close()
                return "recording into the driver's store %s: %s" % (self.db, e)
        return None

    def close(self):
        with self._lock:
            self._close()

    def _open(self):
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen([kvault_binary(), "import", "--ack", "--db", self.db, "-"],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True, env=kvault_env())
        return self._process

    def _close(self):
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            process.wait()

    @staticmethod
    def _ended(process):
        """Why the import process stopped answering (its stderr)."""
        if process.poll() is None:
            process.kill()
        process.wait()
        return (process.stderr.read().strip() or "kvault import ended (exit %s)" % process.returncode)[-2000:]
