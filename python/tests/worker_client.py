"""A small client for tests: runs `python -m kvault_worker` as a real process
with the protocol on fds 3 (requests) and 4 (responses), as the engine does."""
import fcntl
import json
import os
import select
import subprocess
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]
HIGH = 20  # the test process keeps its pipe ends above the fds the child uses


def _high(fd):
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH)
    os.close(fd)
    return moved


class WorkerClient:
    def __init__(self, log_path, extra_env=None, timeout=120.0):
        self.timeout = timeout
        self.log_path = Path(log_path)
        req_r, req_w = (_high(fd) for fd in os.pipe())
        resp_r, resp_w = (_high(fd) for fd in os.pipe())
        self.pipe_inodes = {os.fstat(req_r).st_ino, os.fstat(resp_r).st_ino}

        def wire_fds():  # in the child, before exec: requests on 3, responses on 4
            os.dup2(req_r, 3)
            os.dup2(resp_w, 4)

        env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), KVAULT_WORKER_FDS="3,4",
                   PYTHONDONTWRITEBYTECODE="1")
        env.update(extra_env or {})
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kvault_worker"], stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, env=env, close_fds=False,
            preexec_fn=wire_fds, cwd=str(self.log_path.parent))
        os.close(req_r)
        os.close(resp_w)
        self._requests = os.fdopen(req_w, "wb")
        self._responses = os.fdopen(resp_r, "rb")
        self._next_id = 0

    def send_raw(self, line):
        self._requests.write(line if line.endswith(b"\n") else line + b"\n")
        self._requests.flush()

    def read_response(self):
        ready, _, _ = select.select([self._responses], [], [], self.timeout)
        if not ready:
            raise TimeoutError("worker gave no answer in %.0f s; log:\n%s" % (self.timeout, self.log()))
        line = self._responses.readline()
        if not line:
            raise EOFError("worker closed its response pipe; log:\n%s" % self.log())
        assert line.endswith(b"\n")
        return json.loads(line)

    def call(self, op, **fields):
        self._next_id += 1
        request = {"id": self._next_id, "op": op, **fields}
        self.send_raw(json.dumps(request).encode())
        response = self.read_response()
        assert response["id"] == self._next_id, response
        return response

    def log(self):
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def close(self):
        if self.process.poll() is None:
            try:
                self._requests.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._responses.close()
        self._log.close()
