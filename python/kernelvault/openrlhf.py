"""OpenRLHF rewards scored by `kvault serve` (docs/rl.md, "OpenRLHF"). Two ways in:

    --remote_rm_url /path/to/site-packages/kernelvault/openrlhf.py   # reward_func, in process
    python -m kernelvault.openrlhf --port 5001                       # an HTTP remote RM
    --remote_rm_url http://127.0.0.1:5001/get_reward

The conventions matched (OpenRLHF/OpenRLHF, openrlhf/utils/agent.py,
SingleTurnAgentExecutor, read at commit 3c3be62):
- a --remote_rm_url ending in ".py" is loaded from that file and its `reward_func`
  called in a thread as reward_func(queries, prompts, labels), one sample a call;
  the answer is a dict with "rewards" (for the advantage), "scores" (0..1, for
  dynamic filtering; "rewards" when missing) and "extra_logs" (name -> values,
  logged per sample);
- any other --remote_rm_url is POSTed {"query": [...], "prompts": [...],
  "labels": [...]} and must answer the same dict as JSON; a non-2xx answer is
  retried 5 times, then the sample is left without a reward (never 0);
- `queries` are prompt and response decoded together (special tokens kept),
  `prompts` the prompt texts, `labels` the dataset's --label_key values.

labels: AMD's RL record as JSON text (records.py has the fields). The response is
the query with its prompt cut off (the prompt's own code, e.g. the reference in a
fence, must not reach the server's answer parsing). Settings: $KVAULT_URL, $KVAULT_TOKEN.

rewards: the reward (paper unless the record says hip-rl); scores: 1.0 for a correct
kernel, else 0.0; extra_logs: kvault_compiled, kvault_correct, kvault_speedup (0.0
where there is none). A broken task raises TaskError, an infrastructure failure
InfrastructureError (the HTTP endpoint answers 422 and 503 instead).
"""
import argparse
import json
import math
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

if __package__ in (None, ""):  # loaded by file path (OpenRLHF's spec_from_file_location)
    from kernelvault.client import error_for, problem_of
    from kernelvault.errors import InfrastructureError, RequestError, TaskError, UnsupportedError
    from kernelvault.records import build_request, score_of
    from kernelvault.shared import shared_client
else:
    from .client import error_for, problem_of
    from .errors import InfrastructureError, RequestError, TaskError, UnsupportedError
    from .records import build_request, score_of
    from .shared import shared_client

PROMPT_TAIL_CHARS = 200


def response_of(query, prompt):
    """The model's answer in a query: what follows the prompt. Decoding may change
    the prompt's text a little, so when the query does not start with it, the
    answer begins after the first place the prompt's last 200 characters stand."""
    if not prompt:
        return query
    if query.startswith(prompt):
        return query[len(prompt):]
    tail = prompt[-PROMPT_TAIL_CHARS:].strip()
    at = query.find(tail) if tail else -1
    return query[at + len(tail):] if at >= 0 else query


def score_samples(queries, prompts, labels, client):
    """OpenRLHF's answer dict for these samples, verified through `client`."""
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError("kernelvault: %d queries, %d prompts, %d labels" % (len(queries), len(prompts), len(labels)))
    requests = [build_request(label, response_of(query, prompt))
                for query, prompt, label in zip(queries, prompts, labels)]
    results = client.verify_batch(requests) if requests else []
    for i, result in enumerate(results):
        if problem_of(result) is not None:
            raise error_for(result, "sample %d" % i)
    speedups = [r.get("speedup") for r in results]
    return {
        "rewards": [score_of(r) for r in results],
        "scores": [1.0 if r.get("correct") else 0.0 for r in results],
        "extra_logs": {
            "kvault_compiled": [1.0 if r.get("compiled") else 0.0 for r in results],
            "kvault_correct": [1.0 if r.get("correct") else 0.0 for r in results],
            "kvault_speedup": [float(s) if isinstance(s, (int, float)) and math.isfinite(s) else 0.0
                               for s in speedups],
        },
    }


def reward_func(queries, prompts, labels, **kwargs):
    """OpenRLHF's reward function (--remote_rm_url pointing at this file)."""
    return score_samples(list(queries), list(prompts), list(labels), shared_client())


class _Handler(BaseHTTPRequestHandler):
    """POST (any path) {"query", "prompts", "labels"} -> reward_func's answer;
    GET /health -> the kvault server's health."""

    server_version = "kernelvault-openrlhf"
    protocol_version = "HTTP/1.1"

    def _send(self, code, payload, retry_after=None):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry_after is not None:
            self.send_header("Retry-After", str(retry_after))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code, kind, message, retry_after=None):
        self._send(code, {"error": {"kind": kind, "message": message}}, retry_after)

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length).decode("utf-8")) if length else None
        except (ValueError, UnicodeDecodeError) as e:
            return self._error(400, "request", "the body is not JSON: %s" % e)
        if not isinstance(body, dict) or not all(isinstance(body.get(k), list) for k in ("query", "prompts", "labels")):
            return self._error(400, "request", 'the body must be {"query": [...], "prompts": [...], "labels": [...]}')
        try:
            answer = score_samples(body["query"], body["prompts"], body["labels"], self.server.kvault)
        except ValueError as e:
            return self._error(400, "request", str(e))
        except TaskError as e:
            return self._error(422, "task", e.message)
        except InfrastructureError as e:
            return self._error(503, "infrastructure", e.message, retry_after=5)
        except UnsupportedError as e:  # the kvault server cannot run these answers: no score at all
            return self._error(422, "unsupported", e.message)
        except RequestError as e:  # the kvault server refused what this endpoint sent it
            return self._error(502, "upstream", e.message)
        self._send(200, answer)

    def do_GET(self):
        if self.path.rstrip("/") not in ("/health", ""):
            return self._error(404, "request", "unknown path %s" % self.path)
        try:
            self._send(200, {"status": "ok", "kvault": self.server.kvault.health()})
        except InfrastructureError as e:
            self._error(503, "infrastructure", e.message)

    def log_message(self, format, *args):
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


def make_server(host="127.0.0.1", port=0, client=None, verbose=False):
    """The remote-RM HTTP server (not started): serve_forever() it."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.kvault = client or shared_client()
    server.verbose = verbose
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kernelvault.openrlhf",
                                     description="OpenRLHF remote reward endpoint backed by kvault serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5001, help="0: any free port")
    parser.add_argument("--kvault-url", default=None, help="the kvault server (default $KVAULT_URL)")
    parser.add_argument("--token", default=None, help="its bearer token (default $KVAULT_TOKEN)")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port, shared_client(args.kvault_url, args.token), args.verbose)
    host, port = server.server_address[:2]
    print(json.dumps({"listening": "http://%s:%d" % (host, port), "kvault": server.kvault.url}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
