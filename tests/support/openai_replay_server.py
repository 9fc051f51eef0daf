#!/usr/bin/env python3
"""A loopback HTTP server that speaks the OpenAI chat-completions protocol and replays
scripted answers, for tests of the LLM client and the agent loop. Standard library only.

    python3 tests/support/openai_replay_server.py --script S.json --log L.jsonl [--port 0]

It binds 127.0.0.1 (port 0 = any free port), prints ``PORT <n>`` on one line of stdout
(flushed) once it accepts connections, and serves until killed:

    POST /v1/chat/completions  (also /chat/completions)
    GET  /v1/models            (also /models)
    POST /v1/messages          (also /messages): the same script, answered in the shape
                               of Anthropic's messages API (for that client's tests)

Script (JSON):

    {"rules": [{"match": ["substr", ...], "responses": [R, R, ...]}, ...],
     "default": R}

A request takes the first rule all of whose substrings occur in the concatenated
``content`` of its messages (after a top-level ``system`` string, on /v1/messages; an
empty ``match`` list matches everything). A rule's
responses are used in order, one per request that takes the rule; the last one then
repeats. A request that no rule takes gets ``default`` (when absent: HTTP 404 with an
error body). R is one of:

    {"content": "..."}                   a normal completion: choices[0].message.content,
                                         finish_reason "stop", usage numbers, and the
                                         request's model echoed back ("model": "..."
                                         overrides it; "finish_reason" overrides too)
    {"status": 429, "retry_after": 0}    an error status with a JSON error body; a
    {"status": 500}                      "retry_after" adds a Retry-After header (seconds)
    {"delay_s": N, "content": "..."}     sleeps N seconds before answering (a timeout,
                                         when N exceeds the client's limit); delay_s may
                                         be combined with any other kind
    {"truncate": true, "content": "..."} the completion's JSON body cut in half, sent with
                                         the Content-Length of the cut body
    {"raw": "...", "status": 200}        exactly these bytes as the body (e.g. garbage)

Log (JSONL): one line per request, written when the request arrives and flushed:
``{"time": t, "path": ..., "model": ..., "messages": [...], "rule": i, "kind": k,
"seq": n, "authorization": ..., "x_api_key": ..., "anthropic_version": ...}`` (the
request's headers of those names, or null) where ``rule`` is the rule index
(-1 for default, null for no match or a request that is not chat), ``kind`` one of
content / status / truncate / raw / delay / models / not_found / bad_request; then a
second line ``{"time": t, "seq": n, "done": true}`` just before the reply is written, so
overlapping requests can be read from the log. Usage numbers: prompt_tokens = words
in the messages, completion_tokens = words in the content.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Replay:
    def __init__(self, script, log_path):
        self.rules = script.get("rules", [])
        self.default = script.get("default")
        self.next_index = [0] * len(self.rules)
        self.lock = threading.Lock()
        self.log_file = open(log_path, "a", encoding="utf-8")
        self.seq = 0

    def pick(self, text):
        """Returns (rule index or -1 for default or None, response or None)."""
        with self.lock:
            for i, rule in enumerate(self.rules):
                if all(s in text for s in rule.get("match", [])):
                    responses = rule.get("responses") or [{}]
                    r = responses[min(self.next_index[i], len(responses) - 1)]
                    self.next_index[i] += 1
                    return i, r
            if self.default is not None:
                return -1, self.default
            return None, None

    def log(self, entry):
        with self.lock:
            if "seq" not in entry:
                self.seq += 1
                entry["seq"] = self.seq
            self.log_file.write(json.dumps(entry) + "\n")
            self.log_file.flush()
            return entry["seq"]


def kind_of(response):
    if response is None:
        return "not_found"
    if "raw" in response:
        return "raw"
    if response.get("truncate"):
        return "truncate"
    if "status" in response and response["status"] != 200:
        return "status"
    if "content" in response:
        return "content"
    return "delay" if "delay_s" in response else "content"


def prompt_text(request):
    """The concatenated message contents (and an Anthropic-style system field)."""
    messages = request.get("messages") or []
    parts = [str(request["system"])] if isinstance(request.get("system"), str) else []
    parts += [str(m.get("content", "")) for m in messages if isinstance(m, dict)]
    return "\n".join(parts)


def completion_body(request, response, anthropic=False):
    prompt_words = len(prompt_text(request).split())
    content = response.get("content", "")
    completion_words = len(content.split())
    if anthropic:
        return {
            "id": "msg_replay", "type": "message", "role": "assistant",
            "model": response.get("model", request.get("model", "")),
            "content": [{"type": "text", "text": content}],
            "stop_reason": response.get("finish_reason", "end_turn"),
            "usage": {"input_tokens": prompt_words, "output_tokens": completion_words},
        }
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": response.get("model", request.get("model", "")),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": response.get("finish_reason", "stop"),
        }],
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": completion_words,
            "total_tokens": prompt_words + completion_words,
        },
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    replay = None  # set by main

    def log_message(self, fmt, *args):  # silence the default stderr access log
        pass

    def send_body(self, status, body, content_length=None, headers=()):
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        if getattr(self, "pending_seq", None) is not None:
            # logged before the reply goes out, so it precedes anything the client
            # does once it has the reply (e.g. its next request)
            self.replay.log({"time": time.time(), "seq": self.pending_seq, "done": True})
            self.pending_seq = None
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) if content_length is None else content_length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start(self, entry):
        """Logs a request's arrival; its "done" line follows in send_body."""
        self.pending_seq = self.replay.log(entry)

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self.start({"time": time.time(), "path": self.path, "kind": "models", "rule": None})
            self.send_body(200, json.dumps({"object": "list", "data": [{"id": "replay", "object": "model"}]}))
        else:
            self.start({"time": time.time(), "path": self.path, "kind": "not_found", "rule": None})
            self.send_body(404, json.dumps({"error": {"message": "no such path: " + self.path}}))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        path = self.path.rstrip("/")
        anthropic = path in ("/v1/messages", "/messages")
        if path not in ("/v1/chat/completions", "/chat/completions") and not anthropic:
            self.start({"time": time.time(), "path": self.path, "kind": "not_found", "rule": None})
            self.send_body(404, json.dumps({"error": {"message": "no such path: " + self.path}}))
            return
        try:
            request = json.loads(raw.decode("utf-8"))
            if not isinstance(request, dict):
                raise ValueError("request body is not a JSON object")
        except ValueError as e:
            self.start({"time": time.time(), "path": self.path, "kind": "bad_request", "rule": None})
            self.send_body(400, json.dumps({"error": {"message": "bad request: %s" % e}}))
            return
        messages = request.get("messages") or []
        rule, response = self.replay.pick(prompt_text(request))
        self.start({
            "time": time.time(), "path": self.path, "model": request.get("model"),
            "messages": messages, "rule": rule, "kind": kind_of(response),
            "authorization": self.headers.get("Authorization"),
            "x_api_key": self.headers.get("x-api-key"),
            "anthropic_version": self.headers.get("anthropic-version"),
        })
        try:
            self.answer(request, response, anthropic)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing to send to

    def answer(self, request, response, anthropic):
        if response is None:
            self.send_body(404, json.dumps({"error": {"message": "no scripted rule matches this request"}}))
            return
        if response.get("delay_s"):
            time.sleep(float(response["delay_s"]))
        status = int(response.get("status", 200))
        if "raw" in response:
            self.send_body(status, response["raw"])
        elif status != 200:
            headers = []
            if "retry_after" in response:
                headers.append(("Retry-After", str(response["retry_after"])))
            body = {"error": {"message": "scripted HTTP %d" % status, "type": "replay", "code": status}}
            self.send_body(status, json.dumps(body), headers=headers)
        elif response.get("truncate"):
            full = json.dumps(completion_body(request, response, anthropic)).encode("utf-8")
            self.send_body(200, full[: len(full) // 2])
        else:
            self.send_body(200, json.dumps(completion_body(request, response, anthropic)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, help="the scripted answers (JSON)")
    parser.add_argument("--log", required=True, help="where each request is logged (JSONL, appended)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)")
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    if not isinstance(script, dict) or not isinstance(script.get("rules", []), list):
        sys.exit("script must be a JSON object with a list 'rules'")
    Handler.replay = Replay(script, args.log)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
