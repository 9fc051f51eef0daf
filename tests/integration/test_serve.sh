#!/usr/bin/env bash
# `kvault serve` (docs/serve.md) on loopback with the CPU backend, driven by
# serve_check.py: every endpoint of the native API, AMD's HIP sandbox and Triton
# protocols; 256 concurrent requests of 16 distinct candidates (correct, wrong,
# broken, hostile) none lost or verified twice; SIGKILL mid-batch and a restart on the
# same store; malformed and oversized bodies, unknown paths and methods, the bearer
# token, a full queue, a deadline, a worker that cannot start, a port in use. About 2
# to 3 minutes on 2 cores.
source "$(dirname "$0")/lib.sh"
need_torch
# Every server the check starts is listed in $TMP/pids; none outlives the test.
stop_servers() {
  [ -f "$TMP/pids" ] || return 0
  while read -r pid; do kill -9 "$pid" 2>/dev/null; done < "$TMP/pids"
}
trap 'stop_servers; rm -rf "$TMP"' EXIT
python3 "$KVAULT_SOURCE_ROOT/tests/integration/serve_check.py" "$KVAULT" "$KVAULT_SOURCE_ROOT" "$TMP" || {
  for f in "$TMP"/*.err; do echo "--- $(basename "$f"):"; tail -n 15 "$f"; done
  fail "serve checks"
}
echo "ok"
