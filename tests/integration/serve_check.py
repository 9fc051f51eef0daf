#!/usr/bin/env python3
"""Drives `kvault serve` (docs/serve.md) on loopback, CPU backend, for
tests/integration/test_serve.sh. Python stdlib only.

  serve_check.py KVAULT SOURCE_ROOT WORK_DIR

Servers (each on a free port, its pid appended to WORK_DIR/pids for the shell's trap):
  main     2 lanes, --run-timeout 5: every endpoint of the native API and the HIP
           sandbox's; 256 concurrent requests of 16 distinct candidates (correct,
           wrong, broken, hostile; verify, idempotency keys, batches, samples): each answered,
           answers the same per candidate, verified once, one store row each; errors
           (400, 404, 405, 409, 504; large bodies of any type); killed with SIGKILL
           mid-batch, restarted on the same store: the batch resubmitted, each result
           exactly once in the store, the finished ones answered from the store.
  guarded  KVAULT_SERVE_TOKEN, --max-request-mb 1, --queue 2, --policy task and a
           --triton-suite of one tiny GEAK file: 401/200, 413, 429 with Retry-After,
           AMD's /evaluate, SIGTERM exits 0.
  public   --host 0.0.0.0 without a token: exit status 2.
  broken   KVAULT_PYTHON=/bin/false: health 503 and every verification 503, no reward.
Exit status 0 when every check held; 1 with the failed checks listed.
"""
import collections
import concurrent.futures
import http.client
import json
import os
import select
import socket
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse

KVAULT, ROOT, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
EX = os.path.join(ROOT, "examples")
RELU = open(os.path.join(EX, "suite", "relu.py")).read()
# vector_add.py with 4096 elements instead of 4 M: a correct candidate's checks and
# timing take seconds, not tens of seconds.
VECTOR_ADD = open(os.path.join(EX, "suite", "vector_add.py")).read().replace("N = 1 << 22", "N = 1 << 12")
assert "N = 1 << 12" in VECTOR_ADD
# relu.py's model on a 64x64 input: a verification takes about 3 s on a loaded CPU.
TINY = """# ReLU on a small matrix (tests/integration/serve_check.py).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
"""
TOKEN = "s3cret-token"
failures = []
T0 = time.time()


def log(*args):
    print(f"[{time.time() - T0:6.1f}s]", *args, flush=True)


def check(ok, what):
    if not ok:
        failures.append(what)
        log("FAIL:", what)
    return ok


def read(path):
    return open(os.path.join(EX, path)).read()


# --- servers ----------------------------------------------------------------------

class Server:
    def __init__(self, name, db, *flags, env=None):
        self.name, self.db = name, db
        # Started in the store's folder and given its name alone, as docs/serve.md's
        # commands are: the server passes its workers absolute paths all the same.
        self.args = [KVAULT, "serve", "--backend", "cpu", "--port", "0", "--db", os.path.basename(db), *flags]
        self.cwd = os.path.dirname(db)
        self.env = dict(os.environ)
        self.env.pop("KVAULT_SERVE_TOKEN", None)
        self.env.update(env or {})
        self.stderr_path = os.path.join(WORK, f"{name}.err")
        self.proc = None

    def start(self, timeout=120):
        self.stderr = open(self.stderr_path, "a")
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.stderr, env=self.env,
                                     cwd=self.cwd)
        with open(os.path.join(WORK, "pids"), "a") as f:
            f.write(f"{self.proc.pid}\n")
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line:
            self.proc.kill()
            raise RuntimeError(f"{self.name} did not start: {self.tail()}")
        self.hello = json.loads(line)
        url = urllib.parse.urlsplit(self.hello["listening"])
        self.host, self.port = url.hostname, url.port
        log(f"{self.name} listening on {self.hello['listening']} (pid {self.proc.pid})")
        return self

    def tail(self):
        try:
            return open(self.stderr_path).read()[-2000:]
        except OSError:
            return ""

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM; the exit status (None when it had to be killed)."""
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.kill9()
            return None

    def call(self, method, path, body=None, headers=None, timeout=300, raw=None):
        """(status, headers, parsed JSON or text). body: JSON-able; raw: bytes as they are."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        h = {"Content-Type": "application/json"} if body is not None else {}
        h.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        try:
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            text = r.read().decode()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
        finally:
            conn.close()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
        return r.status, hdrs, parsed

    def stream(self, batch_id, timeout=300):
        """The JSON lines of a batch's stream, in the order they came."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("GET", f"/v1/batches/{batch_id}/stream")
            r = conn.getresponse()
            lines = [json.loads(line) for line in r.read().decode().splitlines() if line.strip()]
            return r.status, lines
        finally:
            conn.close()

    def metrics(self, headers=None):
        status, _, text = self.call("GET", "/metrics", headers=headers)
        out = {}
        if status == 200:
            for line in text.splitlines():
                if line and not line.startswith("#"):
                    name, value = line.rsplit(" ", 1)
                    out[name] = float(value)
        return status, out


def verified_total(metrics):
    return sum(v for k, v in metrics.items() if k.startswith("kvault_verifications_total{"))


def store_rows(db, run):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("select task, candidate_hash, status, count(*) from attempts where run = ? "
                           "group by task, candidate_hash", (run,)).fetchall()
    finally:
        con.close()


def poll(server, batch_id, wait_s=120, headers=None):
    status, _, body = server.call("GET", f"/v1/batches/{batch_id}?wait_s={wait_s}", headers=headers)
    check(status == 200, f"poll {batch_id}: HTTP {status} {body}")
    return body


def error_kind(body):
    return body.get("error", {}).get("kind") if isinstance(body, dict) else None


# --- candidates -------------------------------------------------------------------

NATIVE_RELU = read("native/cpu/relu.cpp")


def native_variant(tag):
    """A correct native relu whose source (and so hash) is its own."""
    return NATIVE_RELU + f"// variant {tag}\n"


def tiny_variant(run, tag, **fields):
    """A request of a correct native relu of its own against TINY."""
    return dict(task_source=TINY, task_name="tiny_relu", code=native_variant(tag), run=run, **fields)


def native(what, body, includes=""):
    """A native-format relu candidate that `what`, its kvault_forward being `body`."""
    return (f"// A native relu that {what}.\n#include <kvault/native.h>\n{includes}"
            'extern "C" const char* kvault_last_error(void) { return ""; }\n'
            'extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,\n'
            '                              int num_scalars, kv_tensor* outputs, int num_outputs, void* stream) {\n'
            f"{body}}}\n")


HANG = native("never returns", "  volatile unsigned long n = 0;\n  for (;;) n = n + 1;\n  return 0;\n")
EXITS = native("ends its own process", "  exit(3);\n", "#include <stdlib.h>\n")
SEGFAULT = native("stores through a null pointer", "  volatile float* p = nullptr;\n  *p = 1.0f;\n  return 0;\n")
WRITES_NOTHING = native("returns without writing its output", "  return 0;\n")
NAN = native("writes NaN everywhere", "  float* y = static_cast<float*>(outputs[0].data);\n"
             "  for (int64_t i = 0; i < outputs[0].numel; ++i) y[i] = __builtin_nanf(\"\");\n  return 0;\n")
TORCH_OP = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""

# name -> (request fields, allowed statuses)
CANDIDATES = {
    "ext-relu": ({"task_source": RELU, "code": read("cpu/relu.cpp")}, {"passed"}),
    "native-relu": ({"task_source": RELU, "code": NATIVE_RELU}, {"passed"}),
    "native-abs": ({"task_source": TINY, "code": read("native/cpu/relu.wrong-abs.cpp")}, {"mismatch"}),
    "native-syntax": ({"task_source": TINY, "code": read("native/cpu/relu.bad-syntax.cpp")}, {"compile_error"}),
    "native-errorcode": ({"task_source": TINY, "code": read("native/cpu/relu.bad-errorcode.cpp")},
                         {"runtime_error"}),
    "native-hang": ({"task_source": TINY, "code": HANG}, {"timeout"}),
    "native-exit": ({"task_source": TINY, "code": EXITS}, {"crash"}),
    "native-segfault": ({"task_source": TINY, "code": SEGFAULT}, {"crash"}),
    "native-writes-nothing": ({"task_source": TINY, "code": WRITES_NOTHING}, {"mismatch"}),
    "native-nan": ({"task_source": TINY, "code": NAN}, {"mismatch"}),
    "torch-op": ({"task_source": TINY, "code": TORCH_OP}, {"policy_violation"}),
    "completion": ({"task_source": TINY, "language": "cpp",
                    "completion": "Here is my kernel.\n```cpp\n" + native_variant("completion") + "```\nDone."},
                   {"passed"}),
    "no-code": ({"task_source": TINY, "completion": "I could not write a kernel for this."}, {"parse_error"}),
    "relu-atol": ({"task_source": TINY, "code": NATIVE_RELU, "atol": 1e-2, "rtol": 1e-2}, {"passed"}),
    "vadd": ({"task_source": VECTOR_ADD, "task_name": "vector_add", "code": read("native/cpu/vector_add.cpp")},
             {"passed"}),
    "vadd-skiplast": ({"task_source": VECTOR_ADD, "task_name": "vector_add",
                       "code": read("native/cpu/vector_add.wrong-skiplast.cpp")}, {"mismatch"}),
}
for fields, _ in CANDIDATES.values():
    fields.setdefault("task_name", "relu")


def rewards(result):
    """Both kinds' rewards of a result (the kind asked for differs between requests)."""
    return result["reward"] and (result["reward"]["paper"], result["reward"]["hip_rl"])


def consistent(name, results):
    """Every answer for one candidate: the same job, status and reward."""
    allowed = CANDIDATES[name][1]
    keys = {(r["id"], r["status"], r["candidate_hash"], rewards(r)) for r in results}
    check(len(keys) == 1, f"{name}: {len(keys)} different answers: {sorted(keys)[:3]}")
    status = results[0]["status"]
    check(status in allowed, f"{name}: status {status}, expected {sorted(allowed)}: {results[0]['message'][:300]}")
    check(results[0]["reward"] is not None and "error" not in results[0], f"{name}: no reward: {results[0]}")
    return results[0]


# --- the checks -------------------------------------------------------------------

def check_policy(s):
    """The request's policy, not the server's: a candidate that calls a PyTorch op passes
    under `any` (in a run of its own: a run keeps one verdict per candidate)."""
    status, _, body = s.call("POST", "/v1/verify", {**CANDIDATES["torch-op"][0], "policy": "any",
                                                     "run": "policy-any"})
    check(status == 200 and body["status"] == "passed" and body["policy"] == "any",
          f"policy any: {status} {body.get('status')} {body.get('policy')} {str(body.get('message'))[:200]}")
    # The same bytes under `task`, in the same run, where the task asks for its own
    # kernels: not answered by the record made under `any`.
    strict = TINY + '\nKVAULT_META = {"policy": "custom_kernel"}\n'
    request = {**CANDIDATES["torch-op"][0], "task_source": strict, "policy": "any", "run": "policy-task"}
    status, _, body = s.call("POST", "/v1/verify", request)
    check(status == 200 and body["status"] == "passed", f"policy any on a strict task: {status} {body.get('status')}")
    status, _, body = s.call("POST", "/v1/verify", {**request, "policy": "task"})
    check(status == 200 and body["status"] == "policy_violation" and not body["from_store"]
          and body["policy"] == "custom_kernel",
          f"policy task after any: {status} {body.get('status')} {body.get('policy')} from_store={body.get('from_store')}")


def check_errors(s):
    """400 (each naming its field), 404, 405, and JSON bodies over 8 KiB of any Content-Type."""
    status, _, body = s.call("POST", "/v1/verify", raw=b'{"task_source": "x", "code": ')
    check(status == 400 and error_kind(body) == "bad_request" and "not valid JSON" in body["error"]["message"],
          f"malformed JSON: {status} {body}")
    status, _, body = s.call("POST", "/v1/verify", raw=b"[" * 100000 + b"]" * 100000)
    check(status == 400 and error_kind(body) == "bad_request", f"deeply nested JSON: {status} {body}")
    # A body of no announced length would end only when the client closes: answered 411 at
    # once instead of holding a thread for the read timeout (60 s).
    with socket.create_connection((s.host, s.port), timeout=20) as raw:
        began = time.monotonic()
        raw.sendall(b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{}")
        head = raw.recv(200)
        check(head.startswith(b"HTTP/1.1 411") and time.monotonic() - began < 10,
              f"POST without Content-Length: {head[:80]!r} after {time.monotonic() - began:.1f} s")
    bad_fields = [
        ({"task_source": 5, "code": "x"}, "task_source: must be a string"),
        ({"code": "x"}, "task_source: is required"),
        ({"task_source": RELU, "code": "x", "completion": "y"}, "exactly one of 'code' and 'completion'"),
        ({"task_source": RELU, "code": "x", "deadline_s": "soon"}, "deadline_s: must be a number"),
        ({"task_source": RELU, "code": "x", "previous_rewards": [1, "a"]}, "previous_rewards: must hold"),
        ({"task_source": RELU, "code": "x", "language": "rust"}, "language: must be one of"),
        ({"task_source": RELU, "code": "x", "reward": 1}, "reward: must be a string"),
        ([1, 2], "a request must be a JSON object"),
    ]
    for request, message in bad_fields:
        status, _, body = s.call("POST", "/v1/verify", request)
        check(status == 400 and message in body.get("error", {}).get("message", ""),
              f"bad request {str(request)[:80]}: {status} {body}")
    status, _, body = s.call("POST", "/v1/batches", {"requests": [CANDIDATES["native-relu"][0], {"code": 1}]})
    check(status == 400 and body["error"]["message"].startswith("requests[1]: "), f"bad batch item: {status} {body}")
    status, _, body = s.call("POST", "/v1/batches", {"requests": []})
    check(status == 400, f"empty batch: {status} {body}")
    status, _, body = s.call("POST", "/run_code_batch", {"requests": [{"kernel_name": "k", "hip_code": "x"}]})
    check(status == 400 and "requests[0]: pytorch_module_code" in body["error"]["message"],
          f"bad HIP batch: {status} {body}")
    status, _, body = s.call("POST", "/evaluate", {"protocol_version": 1, "code": "x = 1\n", "filename": "a.py"})
    check(status == 400 and "no Triton suite" in body["error"]["message"],
          f"/evaluate without a suite: {status} {body}")
    status, _, body = s.call("POST", "/evaluate", {"protocol_version": 2, "code": "x", "filename": "a.py"})
    check(status == 400 and "protocol_version" in body["error"]["message"], f"/evaluate version 2: {status} {body}")

    for method, path, code in [("GET", "/nope", 404), ("POST", "/v2/verify", 404), ("GET", "/v1/batches/b-0", 404),
                               ("GET", "/v1/batches/b-0/stream", 404), ("DELETE", "/v1/batches/b-0", 404),
                               ("GET", "/v1/verify", 405), ("DELETE", "/v1/health", 405),
                               ("PUT", "/v1/batches", 405), ("POST", "/metrics", 405), ("GET", "/run_code", 405)]:
        status, _, body = s.call(method, path, body={} if method in ("POST", "PUT") else None)
        kind = "method_not_allowed" if code == 405 else "unknown_batch" if "/batches/" in path else "not_found"
        check(status == code and error_kind(body) == kind, f"{method} {path}: {status} {body}, expected {code} {kind}")

    # A body over 8 KiB typed as curl -d and urllib type it (form-urlencoded), or as
    # text, is still JSON to this server.
    big = dict(CANDIDATES["native-relu"][0], task_source=TINY + "#" * 10000 + "\n")
    for ctype in ("application/x-www-form-urlencoded", "text/plain"):
        status, _, body = s.call("POST", "/v1/verify", raw=json.dumps(big).encode(), headers={"Content-Type": ctype},
                                 timeout=300)
        check(status == 200 and body.get("status") == "passed", f"12 KB body as {ctype}: {status} {str(body)[:300]}")


def check_concurrency(s, run):
    """256 concurrent requests of 16 distinct candidates: every one answered, the
    answers the same per candidate, each candidate verified once, one store row each."""
    before = verified_total(s.metrics()[1])
    names = sorted(CANDIDATES)
    work = []  # (kind, payload)
    for i in range(200):
        name = names[i % len(names)]
        request = dict(CANDIDATES[name][0], run=run)
        if i % 5 == 1:
            request["idempotency_key"] = f"{run}-{name}"  # shared by every 5th request of it
        elif i % 5 == 2:
            request["idempotency_key"] = f"{run}-{name}-{i}"  # its own
        if i % 7 == 3:
            request["reward"] = "hip-rl"
            request["previous_rewards"] = [0.4]
        work.append(("verify", name, request))
    for b in range(4):  # 4 batches of 14: 56 more requests, 256 in all
        batch = [names[(b * 5 + j % 10) % len(names)] for j in range(14)]  # 4 twice
        work.append(("batch", batch, {"requests": [dict(CANDIDATES[n][0], run=run) for n in batch]}))
    log(f"{len(work) - 4} verify requests and 4 batches of 14 at once")

    def one(item):
        kind, name, payload = item
        if kind == "verify":
            return item, s.call("POST", "/v1/verify", payload, timeout=600)
        status, _, body = s.call("POST", "/v1/batches", payload)
        if status != 202:
            return item, (status, {}, body)
        return item, (status, {}, poll(s, body["batch_id"], wait_s=300))

    start = time.time()
    answers = collections.defaultdict(list)
    answered = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(work)) as pool:
        for (kind, name, payload), (status, _, body) in pool.map(one, work):
            if kind == "verify":
                message = body.get("message") if isinstance(body, dict) else body
                if check(status == 200, f"verify {name}: HTTP {status} {error_kind(body)}: {message}"):
                    answered += 1
                    answers[name].append(body)
                    if "previous_rewards" in payload:
                        r = body["reward"]
                        check(r["kind"] == "hip-rl" and abs(r["return"] - (0.4 + 0.6 * r["hip_rl"])) < 1e-9,
                              f"{name}: hip-rl return {r}")
                    else:
                        check(body["reward"]["kind"] == "paper", f"{name}: reward {body['reward']}")
            else:
                if not check(status == 202 and body.get("done") == 14, f"batch: HTTP {status} {str(body)[:300]}"):
                    continue
                for n, result in zip(name, body["results"]):
                    if check(result is not None, f"batch result of {n} missing"):
                        answered += 1
                        answers[n].append(result)
    log(f"{answered} of 256 answered in {time.time() - start:.1f} s")
    check(answered == 256, f"{answered} of 256 requests answered")
    results = {name: consistent(name, answers[name]) for name in names if answers[name]}
    check(len(results) == len(names), f"answers for {len(results)} of {len(names)} candidates")

    after = verified_total(s.metrics()[1])
    check(after - before == len(names), f"{after - before} verifications for {len(names)} distinct candidates")
    rows = store_rows(s.db, run)
    check(len(rows) == len(names) and all(r[3] == 1 for r in rows),
          f"store: {len(rows)} rows for {len(names)} candidates: {rows}")
    stored = {(r[0], r[1]): r[2] for r in rows}
    for name, r in results.items():
        check(stored.get((r["task"], r["candidate_hash"])) == r["status"], f"{name}: store holds "
              f"{stored.get((r['task'], r['candidate_hash']))}, answered {r['status']}")
    return results


def check_idempotency(s, run):
    a = dict(CANDIDATES["native-relu"][0], task_source=TINY, run=run, idempotency_key=f"{run}-idem")
    status, _, first = s.call("POST", "/v1/verify", a)
    status2, _, again = s.call("POST", "/v1/verify", a)
    check(status == status2 == 200 and first["id"] == again["id"], f"idempotent repeat: {status} {status2}")
    other = dict(CANDIDATES["native-abs"][0], run=run, idempotency_key=f"{run}-idem")
    status, _, body = s.call("POST", "/v1/verify", other)
    check(status == 409 and error_kind(body) == "conflict", f"key reused for other content: {status} {body}")


def check_samples(s, db, run):
    """`sample` is part of a job's content: identical code under two samples is two
    jobs and two store rows (as `kvault eval` records two files), and `kvault score`
    counts two samples; the same sample again shares its job."""
    requests = [tiny_variant(run, f"{run}-same", sample=name) for name in ("a.cpp", "b.cpp", "a.cpp")]
    status, _, body = s.call("POST", "/v1/batches", {"requests": requests})
    if not check(status == 202, f"samples batch: {status} {body}"):
        return
    done = poll(s, body["batch_id"])
    ids = [r["id"] for r in done["results"]]
    check(done["done"] == 3 and [r["status"] for r in done["results"]] == ["passed"] * 3
          and ids[0] == ids[2] != ids[1], f"two samples of one code: {done}")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute("select sample, candidate_hash from attempts where run = ? order by sample",
                           (run,)).fetchall()
    finally:
        con.close()
    check([r[0] for r in rows] == ["a.cpp", "b.cpp"] and len({r[1] for r in rows}) == 1,
          f"rows of two samples of one code: {rows}")
    r = subprocess.run([KVAULT, "score", "--db", db, "--run", run, "--json", "--resamples", "0"],
                       capture_output=True, text=True, timeout=60)
    tasks = json.loads(r.stdout)["per_task"] if r.returncode == 0 else []
    check([(t["task"], t["samples"], t["correct"]) for t in tasks] == [("tiny_relu", 2, 2)],
          f"score of two samples: exit {r.returncode} {r.stdout[:300]} {r.stderr[-300:]}")


def check_batches(s, run):
    """Poll with wait_s, the stream, cancel."""
    tags = [f"{run}-b{i}" for i in range(3)]
    requests = [tiny_variant(run, t) for t in tags]
    status, _, body = s.call("POST", "/v1/batches", {"requests": requests})
    check(status == 202 and body.get("size") == 3, f"batch: {status} {body}")
    batch_id = body["batch_id"]
    quick = poll(s, batch_id, wait_s=0)
    check(quick["size"] == 3 and len(quick["results"]) == 3 and quick["done"] < 3, f"poll wait_s=0: {quick}")
    code, lines = s.stream(batch_id)
    indexes = [line["index"] for line in lines if "index" in line]
    check(code == 200 and sorted(indexes) == [0, 1, 2] and lines[-1] == {"done": True},
          f"stream: {code} {[{k: v for k, v in l.items() if k != 'result'} for l in lines]}")
    for line in lines[:-1]:
        check(line["result"]["status"] == "passed", f"stream result {line['index']}: {line['result']['status']}")
    done = poll(s, batch_id, wait_s=5)
    check(done["done"] == 3 and [r["status"] for r in done["results"]] == ["passed"] * 3, f"poll after: {done}")
    code, lines = s.stream(batch_id)  # a finished batch streams everything at once
    check(code == 200 and len(lines) == 4, f"stream of a finished batch: {len(lines)} lines")
    status, _, body = s.call("GET", f"/v1/batches/{batch_id}?wait_s=301")
    check(status == 400, f"wait_s=301: {status}")
    status, _, body = s.call("GET", f"/v1/batches/{batch_id}?wait_s=soon")
    check(status == 400, f"wait_s=soon: {status}")

    # Cancel: with both lanes busy on the first two, the other four are still queued.
    tags = [f"{run}-c{i}" for i in range(6)]
    requests = [tiny_variant(run, t) for t in tags]
    status, _, body = s.call("POST", "/v1/batches", {"requests": requests})
    batch_id = body["batch_id"]
    status, _, cancelled = s.call("DELETE", f"/v1/batches/{batch_id}")
    check(status == 200 and cancelled.get("cancelled", 0) >= 3, f"cancel: {status} {cancelled}")
    done = poll(s, batch_id, wait_s=120)
    kinds = [error_kind(r) for r in done["results"]]
    check(done["done"] == 6 and kinds.count("cancelled") == cancelled["cancelled"], f"after cancel: {kinds}")
    for r in done["results"]:
        if error_kind(r) == "cancelled":
            check(r["reward"] is None and r["error"]["retry"] is False, f"cancelled result: {r}")
        else:
            check(r["status"] == "passed", f"a running candidate of the cancelled batch: {r['status']}")
    # A cancelled candidate was never judged: submitted again, it is verified.
    if "cancelled" in kinds:
        status, _, body = s.call("POST", "/v1/verify", requests[kinds.index("cancelled")])
        check(status == 200 and body.get("status") == "passed",
              f"resubmitted after cancel: {status} {str(body)[:300]}")


def check_deadline(s, run):
    request = tiny_variant(run, f"{run}-deadline", deadline_s=0.001)
    status, headers, body = s.call("POST", "/v1/verify", request)
    check(status == 504 and error_kind(body) == "deadline" and body["reward"] is None
          and body["error"]["retry"] is True, f"deadline_s 0.001: {status} {body}")
    del request["deadline_s"]
    status, _, body = s.call("POST", "/v1/verify", request)
    check(status == 200 and body["status"] == "passed",
          f"after the deadline, no deadline: {status} {body.get('status')}")


def check_hip(s, run):
    # A HIP kernel the request declares (hip_code) on the CPU backend cannot be judged:
    # refused (422 unsupported), never answered with a reward of 0 a trainer would train on.
    hip = read("hip/relu.hip")
    status, _, one = s.call("POST", "/run_code", {"kernel_name": "relu_hip", "hip_code": hip,
                                                  "pytorch_module_code": RELU, "run": run, "reward": "hip-rl"})
    check(status == 422 and error_kind(one) == "unsupported" and "cpu" in one["error"]["message"],
          f"/run_code of HIP on the CPU: {status} {one}")
    # A KernelBench file whose load_inline builds CUDA is its answer, not the server's
    # configuration: its own compile_error (reward 0), never a refusal of its request.
    inline_cuda = read("kernelbench/relu.llm-habits.py")
    status, _, body = s.call("POST", "/v1/verify", {"task_source": RELU, "code": inline_cuda, "language": "python",
                                                     "run": run})
    check(status == 200 and body["status"] == "compile_error" and body.get("foreign_language") == "cuda"
          and body["reward"]["value"] == 0 and "cpu" in body["message"],
          f"/v1/verify of a KernelBench file building CUDA inline on the CPU: {status} {body}")
    items = [{"kernel_name": "a", "hip_code": hip, "pytorch_module_code": RELU, "run": run},
             {"kernel_name": "b", "hip_code": "not a kernel", "pytorch_module_code": RELU, "run": run}]
    status, _, body = s.call("POST", "/run_code_batch", {"requests": items})
    check(status == 422 and error_kind(body) == "unsupported" and "requests[0]" in body["error"]["message"],
          f"/run_code_batch with HIP on the CPU: {status} {body}")
    # Refused also when the declared language's answer holds no usable code: a
    # parse_error's 0 would be the server's misconfiguration scored.
    status, _, body = s.call("POST", "/v1/verify", {"task_source": RELU, "run": run, "completion": "no code here",
                                                     "language": "hip"})
    check(status == 422 and error_kind(body) == "unsupported", f"/v1/verify of a HIP answer without code: {status} {body}")
    # Nothing declared: what the answer holds is its own verdict (no usable code: parse_error).
    for what, fields in [("a HIP source in no format", {"code": "#include <hip/hip_runtime.h>\n"
                                                                 "__global__ void k(float* x) {}\n"}),
                         ("a CUDA answer in no format", {"completion": "```cuda\n__global__ void k() {}\n```"})]:
        status, _, body = s.call("POST", "/v1/verify", {"task_source": RELU, "run": run, **fields})
        check(status == 200 and body["status"] == "parse_error", f"/v1/verify of {what} on the CPU: {status} {body}")
    # hip_code is HIP whatever it holds: "not a kernel" is refused too, not a parse_error.
    status, _, body = s.call("POST", "/run_code_batch", {"requests": items[1:]})
    check(status == 422 and error_kind(body) == "unsupported", f"/run_code_batch of a broken HIP kernel: {status} {body}")


def check_health_and_metrics(s):
    status, _, h = s.call("GET", "/v1/health")
    check(status == 200 and h["status"] == "ok" and h["lanes"] == 2 and h["lanes_ready"] >= 1
          and h["backend"] == "cpu" and h["queue_capacity"] == 4096 and "version" in h, f"health: {status} {h}")
    status, _, h2 = s.call("GET", "/health")
    check(status == 200, f"/health: {status}")
    status, headers, text = s.call("GET", "/metrics")
    check(status == 200 and headers.get("content-type", "").startswith("text/plain")
          and "# TYPE kvault_requests_total counter" in text, f"/metrics: {status} {headers}")
    # A request is counted once its answer is sent, so the client may ask first: wait a little.
    deadline = time.time() + 5
    while True:
        _, m = s.metrics()
        counted = m.get('kvault_requests_total{endpoint="GET /v1/health",code="200"}', 0) >= 1
        if counted or time.time() > deadline:
            break
        time.sleep(0.1)
    check(counted, "health requests not counted")
    check(m.get("kvault_queue_capacity") == 4096 and m.get('kvault_lanes{state="busy"}', -1) >= 0, f"gauges: {m}")


def check_restart(main, run, earlier, earlier_run):
    """SIGKILL mid-batch, restart on the same store: every result exactly once, the
    finished ones from the store."""
    tags = [f"{run}-k{i}" for i in range(8)]
    requests = [tiny_variant(run, t) for t in tags]
    status, _, body = main.call("POST", "/v1/batches", {"requests": requests})
    batch_id = body["batch_id"]
    deadline = time.time() + 240
    done = 0
    while time.time() < deadline:
        done = poll(main, batch_id, wait_s=1)["done"]
        if done >= 2:
            break
    check(2 <= done < 8, f"{done} of 8 done when the server was to be killed")
    main.kill9()
    before = {r[1] for r in store_rows(main.db, run)}
    log(f"killed the server with SIGKILL: {done} of 8 done, {len(before)} in the store")

    main.start()
    status, _, body = main.call("POST", "/v1/batches", {"requests": requests})
    check(status == 202, f"resubmitted batch: {status} {body}")
    results = poll(main, body["batch_id"], wait_s=300)["results"]
    for tag, r in zip(tags, results):
        if not check(r is not None and r["status"] == "passed", f"{tag} after restart: {r}"):
            continue
        check(r["from_store"] == (r["candidate_hash"] in before),
              f"{tag}: from_store {r['from_store']}, in the store before: {r['candidate_hash'] in before}")
    rows = store_rows(main.db, run)
    check(all(r[3] == 1 for r in rows), f"rows recorded twice: {[r for r in rows if r[3] != 1]}")
    hashes = {r[1] for r in rows}
    check(all(r is not None and r["candidate_hash"] in hashes for r in results), "a result missing from the store")
    check(len(before) >= done, f"{done} answered done before the kill, {len(before)} in the store")

    # The candidates of the concurrent run, asked again: answered from the store alike.
    names = sorted(earlier)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        again = list(pool.map(lambda n: main.call("POST", "/v1/verify", dict(CANDIDATES[n][0], run=earlier_run)),
                              names))
    for name, (status, _, body) in zip(names, again):
        first = earlier[name]
        from_store_expected = name != "no-code"  # a parse error is known without a lane, never looked up
        check(status == 200 and body["status"] == first["status"]
              and rewards(body) == rewards(first)
              and body["id"] == first["id"] and body["from_store"] == from_store_expected,
              f"{name} after restart: {status} {body.get('status')} from_store={body.get('from_store')}")
    rows = store_rows(main.db, earlier_run)
    check(len(rows) == len(names) and all(r[3] == 1 for r in rows), f"store after restart: {rows}")


GEAK_TASK = """import torch
import triton
import triton.language as tl


@triton.jit
def tiny_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 2 * tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def tiny_add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    tiny_add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
""" + "#" * 146 + """
def test_tiny_add():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(300, device=device)
    y = torch.randn(300, device=device)
    return {"sum": tiny_add(x, y)}


result_gold = test_tiny_add()
"""


def check_guarded(db, run):
    """Token, body limit, queue limit and the Triton server's /evaluate."""
    geak = os.path.join(WORK, "geak")
    os.makedirs(geak, exist_ok=True)
    with open(os.path.join(geak, "tiny_add.py"), "w") as f:
        f.write(GEAK_TASK)
    # --policy task: a GEAK task's tests run inside the candidate's module_fn and call
    # PyTorch (randn), which custom_kernel, the server's default, counts as a violation.
    s = Server("guarded", db, "--lanes-per-device", "1", "--queue", "2", "--max-request-mb", "1",
               "--policy", "task", "--triton-suite", geak, "--run", run,
               env={"KVAULT_SERVE_TOKEN": TOKEN}).start()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    request = dict(CANDIDATES["native-syntax"][0])
    status, _, h = s.call("GET", "/v1/health")
    check(status == 200 and h == {"status": "ok"}, f"health needs no token, and then says no more: {status} {h}")
    status, _, h = s.call("GET", "/v1/health", headers=auth)
    check(status == 200 and h["status"] == "ok" and h["backend"] == "cpu" and "lanes" in h,
          f"health with the token says it all: {status} {h}")
    for headers, what in [({}, "no token"), ({"Authorization": "Bearer wrong"}, "a wrong token"),
                          ({"Authorization": f"Bearer {TOKEN}x"}, "a longer token"),
                          ({"Authorization": TOKEN}, "no Bearer"), ({"Authorization": f"Basic {TOKEN}"}, "Basic")]:
        status, hdrs, body = s.call("POST", "/v1/verify", request, headers=headers)
        check(status == 401 and error_kind(body) == "unauthorized"
              and "bearer" in hdrs.get("www-authenticate", "").lower(),
              f"{what}: {status} {body}")
    check(s.metrics()[0] == 401, "/metrics without the token")
    check(s.metrics(headers=auth)[0] == 200, "/metrics with the token")
    status, _, body = s.call("POST", "/v1/verify", request, headers=auth)
    check(status == 200 and body["status"] == "compile_error", f"with the token: {status} {str(body)[:200]}")

    # --max-request-mb 1: a body over 1 MiB is refused before it is read as JSON.
    over = dict(request, code="x" * ((1 << 20) + 100))
    status, _, body = s.call("POST", "/v1/verify", over, headers=auth)
    check(status == 413 and error_kind(body) == "too_large", f"1 MiB body: {status} {str(body)[:200]}")
    under = dict(request, code="// " + "x" * 900000 + "\n")
    status, _, body = s.call("POST", "/v1/verify", under, headers=auth)
    check(status == 200 and body["status"] == "parse_error", f"0.9 MB body: {status} {str(body)[:200]}")

    # --queue 2: three new candidates do not fit; none of them is queued.
    batch = [tiny_variant(run, f"{run}-q{i}") for i in range(3)]
    status, hdrs, body = s.call("POST", "/v1/batches", {"requests": batch}, headers=auth)
    check(status == 429 and error_kind(body) == "overloaded" and int(hdrs.get("retry-after", "0")) >= 1,
          f"queue full: {status} {hdrs.get('retry-after')} {body}")
    status, _, h = s.call("GET", "/v1/health", headers=auth)
    check(h.get("queue_depth") == 0 and h.get("queue_capacity") == 2, f"queue after a 429: {h}")

    # AMD's Triton server against the suite of one file.
    python = os.environ.get("KVAULT_PYTHON", "python3")
    if subprocess.run([python, "-c", "import triton"], capture_output=True).returncode != 0:
        log("no triton for the worker: /evaluate's verifications left out")
    else:
        implementation = GEAK_TASK.split("#" * 146)[0]
        good = implementation.replace("tiny_add_kernel", "my_add_kernel")
        wrong = implementation.replace("+ 2 * tl.load", "+ tl.load")
        for code, correct, error_type in [(good, True, None), (wrong, False, "mismatch")]:
            status, _, body = s.call("POST", "/evaluate", {"protocol_version": 1, "code": code,
                                                           "filename": "tiny_add.py"}, headers=auth)
            check(status == 200 and body.get("compiled") is True and body.get("correct") is correct
                  and body.get("error_type") == error_type and "latency_ms" in body and "feedback" in body,
                  f"/evaluate ({'correct' if correct else 'wrong'}): {status} {str(body)[:400]}")
        # Recorded under the suite's own task name, as `kvault eval` of the suite names it.
        evaluated = [row for row in store_rows(db, run) if row[0].startswith("tiny_add")]
        check(len(evaluated) == 2 and {row[0] for row in evaluated} == {"tiny_add"},
              f"/evaluate's rows: {evaluated}")
    for body, what in [({"protocol_version": 1, "code": "x = 1\n", "filename": "other.py"}, "unknown file"),
                       ({"protocol_version": 1, "code": "x = 1\n"}, "no filename"),
                       ({"code": "x = 1\n", "filename": "tiny_add.py"}, "no protocol_version")]:
        status, _, answer = s.call("POST", "/evaluate", body, headers=auth)
        check(status == 400, f"/evaluate with {what}: {status} {answer}")
    rc = s.stop()
    check(rc == 0, f"SIGTERM: exit status {rc}")


def check_public_without_token(db):
    r = subprocess.run([KVAULT, "serve", "--backend", "cpu", "--host", "0.0.0.0", "--port", "0", "--db", db],
                       capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k != "KVAULT_SERVE_TOKEN"})
    check(r.returncode == 2 and "token" in r.stderr and r.stdout == "",
          f"--host 0.0.0.0 without a token: exit {r.returncode}, {r.stderr.strip()[:200]}")


def check_port_in_use(main, db):
    """A second server on a port that is taken fails at once, before any lane starts
    its workers (which take seconds), with the infrastructure exit status."""
    r = subprocess.run([KVAULT, "serve", "--backend", "cpu", "--port", str(main.port), "--db", db],
                       capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k != "KVAULT_SERVE_TOKEN"})
    check(r.returncode == 3 and "cannot bind" in r.stderr and "starting" not in r.stderr and r.stdout == "",
          f"--port {main.port} in use: exit {r.returncode}, {r.stderr.strip()[:200]}")


def check_broken_worker(db):
    s = Server("broken", db, env={"KVAULT_PYTHON": "/bin/false"}).start()
    status, hdrs, h = s.call("GET", "/v1/health")
    check(status == 503 and h.get("status") == "unavailable" and h.get("lanes_ready") == 0 and "retry-after" in hdrs,
          f"health without a worker: {status} {h}")
    for path, body in [("/v1/verify", CANDIDATES["native-relu"][0]),
                       ("/v1/batches", {"requests": [CANDIDATES["native-relu"][0]]}),
                       ("/run_code", {"hip_code": "x", "pytorch_module_code": RELU})]:
        status, hdrs, answer = s.call("POST", path, body)
        check(status == 503 and "retry-after" in hdrs and "reward" not in answer
              and error_kind(answer) == "unavailable",
              f"{path} without a worker: {status} {answer}")
    rc = s.stop()
    check(rc == 0, f"SIGTERM of the broken server: exit status {rc}")


def main():
    db = os.path.join(WORK, "serve.db")
    server = Server("main", db, "--lanes-per-device", "2", "--run-timeout", "5").start()
    try:
        check_health_and_metrics(server)
        check_port_in_use(server, os.path.join(WORK, "second.db"))
        check_errors(server)
        log("errors checked")
        check_policy(server)
        log("policy checked")
        results = check_concurrency(server, "mix")
        check_idempotency(server, "idem")
        check_batches(server, "batches")
        check_samples(server, db, "samples")
        check_deadline(server, "deadline")
        check_hip(server, "hip")
        log("endpoints checked")
        check_restart(server, "restart", results, "mix")
    finally:
        rc = server.stop()
    check(rc == 0, f"SIGTERM of the main server: exit status {rc}")
    log("kill and restart checked")
    check_guarded(os.path.join(WORK, "guarded.db"), "guarded")
    check_public_without_token(os.path.join(WORK, "public.db"))
    check_broken_worker(os.path.join(WORK, "broken.db"))
    if failures:
        print(f"{len(failures)} check(s) failed:")
        for f in failures:
            print("  -", f[:600])
        return 1
    log("all checks held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
