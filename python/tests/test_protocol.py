"""The request loop: hello, bad requests, fd hygiene, shutdown."""
import importlib.util
import json
import os

from conftest import write_file
from kvault_worker import PROTOCOL_VERSION
from worker_client import PYTHON_DIR

PYTHON_DIR_STR = str(PYTHON_DIR)

RELU = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8, 16)]
"""


def test_hello_reports_environment_and_build(start_worker):
    client = start_worker(backend=None)
    hello = client.call("hello", backend="cpu", device_index=0)
    assert hello["ok"] and hello["protocol"] == PROTOCOL_VERSION == 9
    assert hello["torch"] and hello["python"].count(".") == 2
    assert hello["device"]["backend"] == "cpu" and hello["device"]["arch"] == os.uname().machine
    # Triton's version, or None where this Python has none (the engine then says so
    # for a Triton candidate instead of blaming it).
    has_triton = importlib.util.find_spec("triton") is not None
    assert (hello["triton"] is not None) == has_triton and (hello["triton"] is None or hello["triton"])
    build = hello["build"]
    assert any(os.path.isfile(os.path.join(p, "torch", "extension.h")) for p in build["include_paths"])
    assert build["libraries"][:4] == ["c10", "torch", "torch_cpu", "torch_python"]
    assert isinstance(build["cxx11_abi"], bool)
    assert build["cxx_standard"] in ("c++17", "c++20", "c++23")
    assert build["ext_suffix"].endswith(".so")
    assert os.path.isfile(os.path.join(build["python_include"], "Python.h"))


def test_hello_rejects_unusable_backend(start_worker):
    import torch

    client = start_worker(backend=None)
    response = client.call("hello", backend="hip", device_index=0)
    if getattr(torch.version, "hip", None) is None:
        assert response == {"id": 1, "ok": False, "kind": "internal", "message": response["message"]}
        assert "hip" in response["message"]
    assert client.call("hello", backend="tpu")["kind"] == "bad_request"


def test_bad_requests_get_one_answer_each(start_worker):
    client = start_worker(backend=None)
    client.send_raw(b"{not json")
    response = client.read_response()
    assert response["id"] is None and response["kind"] == "bad_request" and response["ok"] is False
    client.send_raw(b"[1, 2]")
    assert client.read_response()["kind"] == "bad_request"
    client.send_raw(b"\xff\xfe\n")
    assert client.read_response()["kind"] == "bad_request"
    unknown = client.call("frobnicate")
    assert unknown["ok"] is False and unknown["kind"] == "bad_request" and "frobnicate" in unknown["message"]
    assert client.call("run", case=0, seed=1, out="/tmp/x.kvt")["kind"] == "bad_request"  # before hello
    assert client.call("describe")["kind"] == "bad_request"  # no task
    assert client.call("describe", task="relative/task.py")["kind"] == "bad_request"
    client.send_raw(b'{"id": 40, "op": ["hello"]}')
    assert client.read_response()["kind"] == "bad_request"
    client._next_id = 40
    assert client.call("hello", backend="cpu", device_index=0)["ok"]
    assert client.call("hello", backend="cpu", device_index=1)["kind"] == "bad_request"
    for seed in (-1, 2**64, 1.5, "1"):
        response = client.call("reference", task="/nonexistent.py", case=0, seed=seed, out="/tmp/x.kvt")
        assert response["kind"] == "bad_request", (seed, response)
    assert client.call("run", case=0, seed=1, out="/tmp/x.kvt")["kind"] == "bad_request"  # nothing loaded
    assert client.call("shutdown")["ok"]


def test_malformed_json_answer_is_exactly_one_line(start_worker):
    client = start_worker()
    client.send_raw(b'{"id": 5, "op": ')
    response = client.read_response()
    assert response["id"] is None and response["kind"] == "bad_request"
    assert "\n" not in response["message"]
    assert client.call("unload")["ok"]  # still in step: the next id matches


def test_ids_are_echoed_in_order(start_worker):
    client = start_worker()
    for request_id in ("abc", 17, None):
        client.send_raw(json.dumps({"id": request_id, "op": "unload"}).encode())
        assert client.read_response() == {"id": request_id, "ok": True}


def test_shutdown_exits_zero(start_worker):
    client = start_worker()
    assert client.call("shutdown") == {"id": 2, "ok": True}
    assert client.process.wait(timeout=30) == 0


def test_end_of_input_exits_zero(start_worker):
    client = start_worker()
    client._requests.close()
    assert client.process.wait(timeout=30) == 0


def test_bad_fd_environment_is_refused(tmp_path):
    import subprocess
    import sys

    from worker_client import PYTHON_DIR

    result = subprocess.run([sys.executable, "-m", "kvault_worker"], capture_output=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(PYTHON_DIR), KVAULT_WORKER_FDS="3"))
    assert result.returncode == 2
    assert b"KVAULT_WORKER_FDS" in result.stderr


def test_task_code_cannot_reach_the_protocol_fds(worker, tmp_path):
    """Prints, writes to fds 3/4 and child processes must not disturb the protocol."""
    report = tmp_path / "fds.json"
    task = write_file(tmp_path, "noisy.py", RELU + f"""
import os, stat, json, sys
print('{{"id": 999, "ok": true}}')
sys.stdout.flush()
seen = {{}}
for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    seen[fd] = {{"inode": st.st_ino, "pipe": stat.S_ISFIFO(st.st_mode),
                "inheritable": os.get_inheritable(fd)}}
for fd in (3, 4):
    if fd in seen and seen[fd]["pipe"]:
        try:
            os.write(fd, b'{{"id": 998, "ok": true}}\\n')
        except OSError:
            pass
open({str(report)!r}, "w").write(json.dumps(seen))
""")
    described = worker.call("describe", task=task)
    assert described["ok"], described
    seen = {int(k): v for k, v in json.loads(report.read_text()).items()}
    protocol = [fd for fd, info in seen.items() if info["pipe"] and info["inode"] in worker.pipe_inodes]
    assert len(protocol) == 2, seen  # still open, once each
    assert min(protocol) >= 100, protocol  # moved away from 3 and 4
    assert not any(seen[fd]["inheritable"] for fd in protocol), seen
    assert worker.call("unload") == {"id": 3, "ok": True}
    assert '{"id": 999, "ok": true}' in worker.log()


def test_missing_torch_is_reported_as_internal(tmp_path):
    """An interpreter without PyTorch answers hello with a reason instead of dying."""
    from worker_client import WorkerClient

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "torch.py").write_text("raise ImportError('No module named torch (test)')\n")
    client = WorkerClient(tmp_path / "w.log", extra_env={"PYTHONPATH": "%s:%s" % (blocker, PYTHON_DIR_STR)})
    try:
        response = client.call("hello", backend="cpu", device_index=0)
        assert response["kind"] == "internal" and "No module named torch (test)" in response["message"]
        assert client.call("shutdown")["ok"]
        assert client.process.wait(timeout=30) == 0
    finally:
        client.close()


def test_a_worker_without_pytorch_says_why_for_every_op():
    from kvault_worker import protocol
    session = protocol.UnusableSession("No module named 'torch'")
    for op in ("hello", "describe", "time_start", "time_sample", "write_outputs", "handoff_compare", "new_op"):
        reply = protocol.handle_line(session, json.dumps({"id": 7, "op": op}).encode())
        assert reply["id"] == 7 and not reply["ok"]
        assert reply["kind"] == "internal" and "torch" in reply["message"], (op, reply)
    assert protocol.handle_line(session, b'{"id": 8, "op": "shutdown"}')["ok"] and session.finished
