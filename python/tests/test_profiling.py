"""KVAULT_WORKER_PROFILE (kvault_worker/profiling.py): each request's profile and wall
time written out; without the variable, or with a folder that cannot be written, the
handler runs as it would anyway."""
import json
import os

from kvault_worker import profiling
from kvault_worker.protocol import handle_line


class _Session:
    finished = False

    def __init__(self):
        self.handlers = {"echo": lambda request: {"value": request["value"]}}


def test_each_request_is_profiled_into_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(profiling.ENV, str(tmp_path / "prof"))
    profiler = profiling.from_environment()
    for value in (1, 2):
        response = handle_line(_Session(), json.dumps({"id": value, "op": "echo", "value": value}).encode(), profiler)
        assert response == {"id": value, "ok": True, "value": value}
    files = sorted(os.listdir(tmp_path / "prof"))
    profiles = [f for f in files if f.endswith(".prof")]
    assert len(profiles) == 2 and all(f.endswith("-echo.prof") for f in profiles)
    (lines,) = [f for f in files if f.endswith(".jsonl")]
    rows = [json.loads(line) for line in open(tmp_path / "prof" / lines)]
    assert [r["n"] for r in rows] == [1, 2] and all(r["op"] == "echo" and r["wall_s"] >= 0 for r in rows)


def test_without_a_writable_folder_nothing_is_profiled(tmp_path, monkeypatch):
    monkeypatch.delenv(profiling.ENV, raising=False)
    assert profiling.from_environment().call("echo", lambda: 5) == 5
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(profiling.ENV, str(blocker / "prof"))  # under a file: cannot be made
    profiler = profiling.from_environment()
    assert profiler.call("echo", lambda: 6) == 6 and profiler.folder is None
