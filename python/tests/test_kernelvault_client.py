"""kernelvault.Client and AsyncClient against a scripted stand-in of `kvault serve`:
request shapes, errors, retries with Retry-After, batches across a server restart."""
import asyncio
import socket
import time

import pytest

from kernelvault import (
    AsyncClient,
    BatchNotFoundError,
    Client,
    DeadlineError,
    InfrastructureError,
    RequestError,
    TaskError,
    UnsupportedError,
)
from kernelvault_fake import FakeKvault, Reply, fake  # noqa: F401 (fixture)

TASK = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
GOOD = "```cpp\n// GOOD\n```"
WRONG = "```cpp\n// WRONG\n```"


def client_of(fake, **options):
    options.setdefault("retries", 3)
    options.setdefault("sleep", fake.sleeps.append)
    return Client(fake.url, **options)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- one candidate ------------------------------------------------------------

def test_verify_sends_fields_token_and_a_key(fake):
    result = client_of(fake, token="s3cret").verify({"task_source": TASK}, completion=GOOD, reward="paper")
    assert result["status"] == "passed" and result["reward"]["value"] == 1.4
    method, path, headers, body = fake.requests[-1]
    assert (method, path) == ("POST", "/v1/verify")
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["Content-Type"] == "application/json"
    assert body["task_source"] == TASK and body["completion"] == GOOD and body["reward"] == "paper"
    assert body["idempotency_key"].startswith("kv-") and len(body["idempotency_key"]) <= 200


def test_url_and_token_come_from_the_environment(fake, monkeypatch):
    monkeypatch.setenv("KVAULT_TOKEN", "from-env")
    kv = Client(sleep=fake.sleeps.append)
    assert kv.url == fake.url
    assert kv.health()["status"] == "ok"
    assert fake.requests[-1][2]["Authorization"] == "Bearer from-env"
    monkeypatch.delenv("KVAULT_URL")
    assert Client().url == "http://127.0.0.1:8470"
    with pytest.raises(ValueError):
        Client("ftp://example.org")


def test_a_url_path_is_a_prefix(fake):
    fake.then("GET", "/proxy/v1/health", Reply(200, {"status": "ok"}))
    assert Client(fake.url + "/proxy/").health() == {"status": "ok"}
    assert fake.requests[-1][1] == "/proxy/v1/health"


def test_503_is_retried_after_retry_after_with_the_same_key(fake):
    for _ in range(2):
        fake.then("POST", "/v1/verify", Reply(503, {"error": {"kind": "infrastructure", "message": "no lane"}},
                                              {"Retry-After": "7"}))
    result = client_of(fake, backoff_s=0.01).verify(task_source=TASK, completion=GOOD)
    assert result["status"] == "passed"
    assert fake.sleeps == [7.0, 7.0]
    keys = {b["idempotency_key"] for b in fake.bodies("POST", "/v1/verify")}
    assert len(keys) == 1 and len(fake.bodies("POST", "/v1/verify")) == 3


def test_an_infrastructure_result_is_retried_then_raised_never_zero(fake):
    kv = client_of(fake, retries=2, backoff_s=0.5, max_backoff_s=0.75)
    with pytest.raises(InfrastructureError) as caught:
        kv.verify(task_source="INFRA " + TASK, completion=GOOD)
    assert "worker died" in str(caught.value)
    assert len(fake.bodies("POST", "/v1/verify")) == 3
    assert len(fake.sleeps) == 2 and all(0.25 <= s <= 0.75 for s in fake.sleeps)


def test_connection_refused_is_retried_then_raised(fake):
    waits = []
    kv = Client("http://127.0.0.1:%d" % free_port(), retries=3, sleep=waits.append)
    with pytest.raises(InfrastructureError) as caught:
        kv.verify(task_source=TASK, completion=GOOD)
    assert "4 attempts" in str(caught.value) and caught.value.status is None
    assert len(waits) == 3


def test_a_host_that_never_accepts_is_unreachable_within_the_connect_timeout():
    # A listener whose accept queue is full drops further SYNs, as a dead or firewalled
    # host does: the connection never opens. It counts as unreachable after
    # connect_timeout_s, not after timeout_s (a verification's 30 minutes).
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        queued = []
        try:
            for _ in range(3):
                s = socket.socket()
                s.settimeout(0.5)
                try:
                    s.connect(("127.0.0.1", port))
                except OSError:
                    pass
                queued.append(s)
            waits = []
            kv = Client("http://127.0.0.1:%d" % port, timeout_s=600, retries=1, connect_timeout_s=0.5,
                        sleep=waits.append)
            start = time.monotonic()
            with pytest.raises(InfrastructureError) as caught:
                kv.verify(task_source=TASK, completion=GOOD)
            assert time.monotonic() - start < 10
            assert "2 attempts" in str(caught.value) and len(waits) == 1
        finally:
            for s in queued:
                s.close()


def test_an_unsupported_result_of_a_batch_raises_never_scores(fake):
    # A cluster answers a request its nodes cannot run per request (docs/cluster.md).
    from kernelvault.client import problem_of, refused_result
    result = refused_result(UnsupportedError("this server (backend cpu) cannot run a hip candidate"))
    assert problem_of(result) == "unsupported" and result["reward"] is None
    bad = refused_result(RequestError("requests[0]: language: must be one of hip, cuda, cpp, python, triton"))
    assert problem_of(bad) == "bad_request" and bad["reward"] is None
    fake.then("GET", "/v1/batches/", Reply(200, {"batch_id": "b", "size": 1, "done": 1, "results": [result]}))
    with pytest.raises(UnsupportedError, match="cannot run a hip candidate"):
        client_of(fake).verify_batch([{"task_source": TASK, "completion": GOOD}])
    # A node's refusal is passed on as its server said it, not as the node's own call
    # ("POST /v1/verify: HTTP 422: ..."), which the client would prefix once more.
    said = "this server (backend cpu) cannot run a hip candidate: HIP needs a GPU backend"
    fake.then("POST", "/v1/verify", Reply(422, {"error": {"kind": "unsupported", "message": said}}))
    with pytest.raises(UnsupportedError) as refused:
        client_of(fake).verify(task_source=TASK, completion=GOOD)
    assert refused.value.message == "POST /v1/verify: HTTP 422: " + said
    assert refused_result(refused.value)["message"] == said == refused_result(refused.value)["error"]["message"]


def test_a_dropped_connection_is_retried(fake):
    fake.then("POST", "/v1/verify", Reply(drop=True))
    assert client_of(fake).verify(task_source=TASK, completion=WRONG)["reward"]["value"] == 0.4
    assert len(fake.sleeps) == 1


def test_backoff_grows_and_is_bounded():
    kv = Client("http://127.0.0.1:1", backoff_s=1.0, max_backoff_s=10.0)
    assert [0.5 <= kv._delay(n, None) / 2 ** n <= 1.0 for n in range(3)] == [True] * 3
    assert kv._delay(10, None) == 10.0
    assert kv._delay(0, 3.0) == 3.0            # Retry-After wins over a shorter backoff
    assert kv._delay(0, 3600.0) == 10.0        # ... but not over the bound


def test_http_date_retry_after(fake):
    fake.then("POST", "/v1/verify", Reply(429, {"error": {"kind": "queue_full", "message": "full"}},
                                          {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    client_of(fake, backoff_s=0.01).verify(task_source=TASK, completion=GOOD)
    assert len(fake.sleeps) == 1 and fake.sleeps[0] < 0.02  # a date in the past: no extra wait


def test_422_is_a_task_error_with_the_result(fake):
    with pytest.raises(TaskError) as caught:
        client_of(fake).verify(task_source="TASKERR " + TASK, completion=GOOD)
    assert caught.value.status == 422 and caught.value.result["status"] == "task_error"
    assert "reference raised" in str(caught.value)
    assert len(fake.bodies("POST", "/v1/verify")) == 1


def test_422_unsupported_is_raised_at_once_and_is_no_task_error(fake):
    message = "this server (backend cpu) cannot run a hip candidate"
    fake.then("POST", "/v1/verify", Reply(422, {"error": {"kind": "unsupported", "message": message}}))
    with pytest.raises(UnsupportedError) as caught:
        client_of(fake).verify(task_source=TASK, completion=GOOD)
    assert caught.value.status == 422 and caught.value.kind == "unsupported"
    assert isinstance(caught.value, RequestError) and not isinstance(caught.value, TaskError)
    assert message in str(caught.value)
    assert len(fake.bodies("POST", "/v1/verify")) == 1  # not retried


@pytest.mark.parametrize("status", [400, 401, 413])
def test_4xx_is_a_request_error_with_the_servers_message(fake, status):
    fake.then("POST", "/v1/verify", Reply(status, {"error": {"kind": "bad_request",
                                                             "message": "completion: must be a string"}}))
    with pytest.raises(RequestError) as caught:
        client_of(fake).verify(task_source=TASK, completion=GOOD)
    assert caught.value.status == status and "completion: must be a string" in str(caught.value)
    assert fake.sleeps == []


def test_504_is_a_deadline_error(fake):
    fake.then("POST", "/v1/verify", Reply(504, {"error": {"kind": "deadline", "message": "too late"}}))
    with pytest.raises(DeadlineError):
        client_of(fake).verify(task_source=TASK, completion=GOOD, deadline_s=1)
    assert fake.sleeps == []


def test_a_proxys_504_without_a_deadline_is_retried(fake):
    fake.then("POST", "/v1/verify", Reply(504, b"<html>gateway time-out</html>"))
    assert client_of(fake).verify(task_source=TASK, completion=GOOD)["status"] == "passed"
    assert len(fake.sleeps) == 1


def test_the_adapters_clients_take_settings_from_the_environment(monkeypatch):
    from kernelvault import shared

    monkeypatch.setattr(shared, "_shared", {})
    monkeypatch.setenv("KVAULT_RETRIES", "9")
    monkeypatch.setenv("KVAULT_TIMEOUT_S", "42")
    client = shared.shared_client("http://example.org:1/")
    assert (client.url, client.retries, client.timeout_s) == ("http://example.org:1", 9, 42.0)
    assert shared.shared_client("http://example.org:1") is client
    mine = Client("http://example.org:1", retries=1)
    shared.set_shared_client(mine)
    assert shared.shared_client("http://example.org:1") is mine


def test_a_body_that_is_not_json_is_an_infrastructure_failure(fake):
    for _ in range(3):
        fake.then("POST", "/v1/verify", Reply(502, b"<html>bad gateway</html>"))
    with pytest.raises(InfrastructureError) as caught:
        client_of(fake, retries=2).verify(task_source=TASK, completion=GOOD)
    assert "bad gateway" in str(caught.value) and caught.value.status == 502
    fake.then("POST", "/v1/verify", Reply(404, b"<html>\n  <p>File not found.</p>\n</html>\n"))
    with pytest.raises(RequestError) as caught:  # another server at the URL: said so, on one line
        client_of(fake, retries=0).verify(task_source=TASK, completion=GOOD)
    assert str(caught.value) == ("POST /v1/verify: HTTP 404: no error of kvault serve in the answer (a proxy, or no "
                                 "kvault serve at this URL?): <html> <p>File not found.</p> </html>"), caught.value


# ---- batches ----------------------------------------------------------------------

def test_verify_batch_returns_results_in_order_with_keys(fake):
    answers = [GOOD, WRONG, "no code", GOOD]
    results = client_of(fake).verify_batch([{"task_source": TASK, "completion": a, "idempotency_key": None}
                                            for a in answers[:2]] +
                                           [{"task_source": TASK, "completion": a} for a in answers[2:]])
    assert [r["status"] for r in results] == ["passed", "mismatch", "compile_error", "passed"]
    (sent,) = fake.bodies("POST", "/v1/batches")
    assert len({r["idempotency_key"] for r in sent["requests"]}) == 4
    assert "wait_s=60" in [p for m, p, _, _ in fake.requests if m == "GET"][0]


def test_verify_batch_keeps_callers_keys_and_returns_task_errors(fake):
    results = client_of(fake).verify_batch([{"task_source": TASK, "completion": GOOD, "idempotency_key": "mine"},
                                            {"task_source": "TASKERR", "completion": GOOD}])
    assert results[0]["status"] == "passed" and results[1]["status"] == "task_error"
    assert fake.bodies("POST", "/v1/batches")[0]["requests"][0]["idempotency_key"] == "mine"


def test_verify_batch_polls_until_every_result_is_there(fake):
    fake.then("GET", "/v1/batches/b-1", lambda body: Reply(200, {"batch_id": "b-1", "size": 2, "done": 1,
                                                                 "results": [fake.batches["b-1"][0], None]}))
    results = client_of(fake).verify_batch([{"task_source": TASK, "completion": GOOD},
                                            {"task_source": TASK, "completion": WRONG}])
    assert [r["status"] for r in results] == ["passed", "mismatch"]
    assert len(fake.bodies("POST", "/v1/batches")) == 1 and len(fake.bodies("GET", "/v1/batches/b-1")) == 2


def test_infrastructure_results_are_resubmitted_with_their_keys(fake):
    failed = set()

    def flaky(request):  # every request's first verification fails on the infrastructure
        from kernelvault_fake import judge, result_for
        if request["idempotency_key"] not in failed and "resubmit" in request["completion"]:
            failed.add(request["idempotency_key"])
            return result_for(request, "infra_error", "worker lost")
        return judge(request)

    fake.judge = flaky
    results = client_of(fake).verify_batch([{"task_source": TASK, "completion": GOOD},
                                            {"task_source": TASK, "completion": WRONG + " resubmit"}])
    assert [r["status"] for r in results] == ["passed", "mismatch"]
    first, second = fake.bodies("POST", "/v1/batches")
    assert len(second["requests"]) == 1
    assert second["requests"][0]["idempotency_key"] == first["requests"][1]["idempotency_key"]


def test_infrastructure_results_raise_once_retries_are_spent(fake):
    with pytest.raises(InfrastructureError) as caught:
        client_of(fake, retries=2).verify_batch([{"task_source": TASK, "completion": GOOD},
                                                 {"task_source": "INFRA", "completion": GOOD}])
    assert "request 1" in str(caught.value)
    assert len(fake.bodies("POST", "/v1/batches")) == 3


def test_a_restarted_server_gets_the_unfinished_requests_again_exactly_once(fake):
    fake.visible = 1                       # the first poll sees one finished result
    requests = [{"task_source": TASK, "completion": a} for a in (GOOD, WRONG, "x")]

    def restart_after_first_poll(body):    # ... then the server restarts
        fake.restart()
        fake.visible = None
        return Reply(404, {"error": {"kind": "unknown_batch", "message": "unknown batch"}})

    original = fake._reply

    def reply(method, path, body):
        answer = original(method, path, body)
        if method == "GET" and path.startswith("/v1/batches/b-1") and not fake.script and fake.visible == 1:
            fake.then("GET", "/v1/batches/b-1", restart_after_first_poll)
        return answer

    fake._reply = reply
    results = client_of(fake).verify_batch(requests)
    assert [r["status"] for r in results] == ["passed", "mismatch", "compile_error"]
    first, second = fake.bodies("POST", "/v1/batches")
    assert [r["idempotency_key"] for r in second["requests"]] == [r["idempotency_key"] for r in first["requests"][1:]]
    assert sorted(fake.judged) == sorted(r["idempotency_key"] for r in first["requests"])  # each verified once


def test_a_server_down_mid_batch_is_waited_for_then_resubmitted(fake):
    fake.visible = 1
    port = fake.port
    fake.then("GET", "/v1/batches/b-1", lambda body: Reply(200, {"batch_id": "b-1", "size": 2, "done": 1,
                                                                "results": [fake.batches["b-1"][0], None]}))
    fake.then("GET", "/v1/batches/b-1", Reply(drop=True))   # the server dies ...
    replacement = {}

    def sleep(seconds):
        fake.sleeps.append(seconds)
        if len(fake.sleeps) == 1:
            fake.stop()                                     # ... stays down (connection refused) ...
        elif len(fake.sleeps) == 2:
            replacement["server"] = FakeKvault(port).start()  # ... and comes back without its batches

    results = Client(fake.url, retries=3, sleep=sleep).verify_batch(
        [{"task_source": TASK, "completion": GOOD}, {"task_source": TASK, "completion": WRONG}])
    new = replacement["server"]
    try:
        assert [r["status"] for r in results] == ["passed", "mismatch"]
        (resubmitted,) = new.bodies("POST", "/v1/batches")
        first = fake.bodies("POST", "/v1/batches")[0]
        assert [r["idempotency_key"] for r in resubmitted["requests"]] == [first["requests"][1]["idempotency_key"]]
    finally:
        new.stop()


def test_submit_batch_retries_a_full_queue(fake):
    fake.then("POST", "/v1/batches", Reply(429, {"error": {"kind": "queue_full", "message": "queue full"}},
                                           {"Retry-After": "2"}))
    batch_id = client_of(fake).submit_batch([{"task_source": TASK, "completion": GOOD}])
    assert batch_id == "b-1" and fake.sleeps == [2.0]


def test_get_stream_and_cancel_a_batch(fake):
    kv = client_of(fake)
    batch_id = kv.submit_batch([{"task_source": TASK, "completion": GOOD}, {"task_source": TASK, "completion": WRONG}])
    snapshot = kv.get_batch(batch_id, wait_s=5)
    assert snapshot["done"] == 2 and snapshot["wait_s"] == ["5"]
    lines = list(kv.stream_batch(batch_id))
    assert [line.get("index") for line in lines] == [0, 1, None] and lines[-1] == {"done": True}
    assert lines[1]["result"]["status"] == "mismatch"
    assert kv.cancel_batch(batch_id) == {"cancelled": 0}
    with pytest.raises(BatchNotFoundError):
        kv.get_batch("nope")


def test_a_stream_that_breaks_raises(fake):
    kv = client_of(fake)
    batch_id = kv.submit_batch([{"task_source": TASK, "completion": GOOD}])
    fake.then("GET", "/v1/batches/%s/stream" % batch_id, Reply(200, [{"index": 0, "result": {}}]))
    with pytest.raises(InfrastructureError):
        list(kv.stream_batch(batch_id))


def test_health_answers_503_bodies_and_metrics_text(fake):
    kv = client_of(fake)
    fake.then("GET", "/v1/health", Reply(503, {"status": "unavailable", "lanes_ready": 0}))
    assert kv.health()["status"] == "unavailable"
    assert kv.metrics() == "kvault_queue_depth 0\n"
    with pytest.raises(InfrastructureError):
        Client("http://127.0.0.1:%d" % free_port(), sleep=fake.sleeps.append).health()
    assert fake.sleeps == []


# ---- AsyncClient --------------------------------------------------------------------

def test_async_client_runs_many_calls_at_once(fake):
    def slow(request):
        time.sleep(0.3)
        from kernelvault_fake import judge
        return judge(request)

    fake.judge = slow

    async def main():
        async with AsyncClient(fake.url, retries=1, sleep=fake.sleeps.append) as kv:
            started = time.monotonic()
            results = await asyncio.gather(*[kv.verify(task_source=TASK, completion=GOOD if i % 2 else WRONG)
                                             for i in range(40)])
            return results, time.monotonic() - started

    results, seconds = asyncio.run(main())
    assert [r["status"] for r in results] == ["mismatch", "passed"] * 20
    assert seconds < 4.0  # 40 x 0.3 s one after the other would be 12 s


def test_async_client_batches_stream_and_errors(fake):
    async def main():
        kv = AsyncClient(fake.url, retries=1, sleep=fake.sleeps.append)
        results = await kv.verify_batch([{"task_source": TASK, "completion": GOOD}])
        batch_id = await kv.submit_batch([{"task_source": TASK, "completion": WRONG}])
        lines = [line async for line in kv.stream_batch(batch_id)]
        health = await kv.health()
        with pytest.raises(TaskError):
            await kv.verify(task_source="TASKERR", completion=GOOD)
        kv.close()
        return results, lines, health

    results, lines, health = asyncio.run(main())
    assert results[0]["status"] == "passed" and lines[-1] == {"done": True} and health["status"] == "ok"


def test_the_command_line_says_which_file_it_cannot_read(fake, tmp_path, capsys):
    from kernelvault.__main__ import main
    task = tmp_path / "task.py"
    task.write_text(TASK)
    binary = tmp_path / "answer.txt"
    binary.write_bytes(b"\xff\xfe not text")
    for completion in (binary, tmp_path / "missing.txt"):
        with pytest.raises(SystemExit) as exited:
            main(["--url", fake.url, "verify", "--task", str(task), "--completion", str(completion)])
        assert exited.value.code == 2 and "cannot read a file" in capsys.readouterr().err
    assert not fake.bodies("POST", "/v1/verify")          # nothing was sent
    assert main(["--url", fake.url, "verify", "--task", str(task), "--completion", str(task)]) == 0
    assert fake.bodies("POST", "/v1/verify")[-1]["task_name"] == "task"  # the file's stem, as eval names it


def test_the_command_line_probe_of_a_dead_server_answers_at_once(capsys):
    import socket
    import time
    from kernelvault.__main__ import main
    with socket.socket() as s:          # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    assert main(["--url", "http://127.0.0.1:%d" % port, "health"]) == 1
    assert time.monotonic() - start < 5, "the probe retried a refused connection"
    assert "Connection refused" in capsys.readouterr().err
