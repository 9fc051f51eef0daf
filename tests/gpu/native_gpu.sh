#!/usr/bin/env bash
# The native format on an NVIDIA GPU (docs/native-format.md): every candidate of
# examples/native/cuda and examples/native/hip (HIP through the HIP-on-NVIDIA headers)
# on the cuda backend, timing on, must get the status examples/expected.json names;
# then bench/native_throughput.sh cuda compares warm-cache throughput with load_inline.
#
#   tests/gpu/native_gpu.sh [KVAULT_BINARY]     (default .carry/kvault)
#
# Prints "native cuda: ok ...", "native hip: ok ..." and the throughput lines; exits 0
# when both folders match expected.json and the throughput benchmark finished and
# passed. A part killed by its time limit (EVAL_LIMIT_S, default 240 s per folder;
# THROUGHPUT_LIMIT_S, default 600 s) is a failure, said on its own line. Logs and
# JSON in $OUT (default ./native-gpu-out).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
K=$(realpath "${1:-$root/.carry/kvault}")
export KVAULT_SOURCE_ROOT=$root KVAULT_PYTHON=${KVAULT_PYTHON:-python3}
export KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-native-gpu-cache}
out=${OUT:-$root/native-gpu-out}
mkdir -p "$out"
eval_limit=${EVAL_LIMIT_S:-240}
throughput_limit=${THROUGHPUT_LIMIT_S:-600}
status=0
# "killed" when `timeout` ended the command (124: its SIGTERM; 137: SIGKILL), else "".
killed() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; }
for lang in cuda hip; do
  timeout "$eval_limit" "$K" eval --suite examples/suite --candidates "examples/native/$lang" --backend cuda --jobs 3 \
    --db "$out/native.db" --run "native-$lang" --json > "$out/$lang.json" 2> "$out/$lang.log"
  rc=$?
  echo "eval exit $rc" >> "$out/$lang.log"
  if killed "$rc"; then
    echo "native $lang: FAIL kvault eval killed by its ${eval_limit} s limit (EVAL_LIMIT_S)"
    status=1
  fi
  python3 - "$out/$lang.json" examples/expected.json "$lang" <<'PY' || status=1
import json, os, sys
lang = sys.argv[3]
try:
    attempts = json.load(open(sys.argv[1]))["attempts"]
except Exception as e:
    print(f"native {lang}: FAIL no results ({e})"); sys.exit(1)
expected = json.load(open(sys.argv[2]))
bad = []
for a in attempts:
    rel = f"native/{lang}/" + os.path.basename(a["candidate"])
    want = expected.get(rel, {}).get("status")
    speed = f" speedup {a['speedup']:.2f}" if a.get("speedup") else ""
    print(f"  {rel}: {a['status']}{speed} ({a['seconds']:.2f} s) {a['message'][:120]}")
    if a["status"] != want:
        bad.append(f"{rel}: got {a['status']} want {want}")
    elif want == "passed" and a.get("speedup") is None:
        bad.append(f"{rel}: passed without timings")
names = [k for k in expected if k.startswith(f"native/{lang}/")]
if len(attempts) != len(names):
    bad.append(f"{len(attempts)} attempts, expected.json names {len(names)}")
print(f"native {lang}: " + ("ok, %d candidates as expected" % len(attempts) if not bad else "FAIL " + "; ".join(bad)))
sys.exit(1 if bad else 0)
PY
done
KVAULT=$K timeout "$throughput_limit" bench/native_throughput.sh cuda 6 > "$out/throughput.txt" 2>&1
rc=$?
cat "$out/throughput.txt"
if killed "$rc"; then
  echo "native throughput: FAIL killed by its ${throughput_limit} s limit (THROUGHPUT_LIMIT_S); see $out/throughput.txt"
  status=1
elif [ "$rc" -ne 0 ]; then
  echo "native throughput: FAIL bench/native_throughput.sh exited $rc"
  status=1
fi
exit $status
