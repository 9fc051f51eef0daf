#!/usr/bin/env bash
# The training recipe end to end (docs/training.md, "End to end on one H200"):
# `kvault serve` on the GPU, then recipes/e2e.py: a tiny Qwen3 model and tokenizer made
# here, SFT until it reproduces the example suite's verified kernels, then multi-turn
# GRPO steps with rewards from the server. Logs and summary.json under $OUT/e2e.
#
#   bash recipes/h200_e2e.sh                 # on the H200 machine, repository root
#   bash recipes/h200_e2e.sh --cpu-smoke     # here: cpu backend, tiny sizes, 1 GRPO step
#   bash recipes/h200_e2e.sh -- --grpo-steps 5   # flags after -- go to e2e.py
#
# Environment:
#   KVAULT          the binary (default .carry/kvault when present, else build/kvault;
#                   build/kvault with --cpu-smoke);
#                   .carry/lib goes on LD_LIBRARY_PATH when present
#   KVAULT_PYTHON   Python with PyTorch for the server's workers (default python3; with
#                   --cpu-smoke, scripts/env.sh's)
#   RECIPE_PYTHON   Python with torch + transformers for the trainer (default python3)
#   WHEELS          wheels installed first into $WORK/site (default .carry/wheels when
#                   present; recipes/fetch_wheels.sh makes them): trl, datasets and the
#                   pure-Python packages the machine lacks
#   OUT             where logs and summary.json go, under e2e/ (default /tmp/kvault-e2e-out)
#   WORK            scratch: fixture, tokenizer, model, store (default /tmp/kvault-e2e)
# Exit status: e2e.py's (1 when a check fails, see its docstring), 3 when the server
# does not start.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
smoke=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-smoke) smoke=1 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--cpu-smoke] [-- e2e.py flags]" >&2; exit 2 ;;
  esac
  shift
done
out=${OUT:-/tmp/kvault-e2e-out}/e2e
work=${WORK:-/tmp/kvault-e2e}
mkdir -p "$out" "$work"
rm -rf "$work"/{data,tokenizer,sft,sft-model,grpo,site,cache,rewards.db,rewards.db-wal,rewards.db-shm,serve.first-line}
if [ -z "${KVAULT:-}" ]; then
  if [ "$smoke" = 0 ] && [ -x "$root/.carry/kvault" ]; then KVAULT=$root/.carry/kvault; else KVAULT=$root/build/kvault; fi
fi
[ -d "$root/.carry/lib" ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$smoke" = 1 ]; then
  source "$root/scripts/env.sh"            # the workers' Python (KVAULT_PYTHON) and paths
  backend=cpu; device=cpu
else
  export KVAULT_PYTHON=${KVAULT_PYTHON:-python3}
  backend=cuda; device=cuda
fi
export KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1 TRL_EXPERIMENTAL_SILENCE=1
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1   # nothing is downloaded
export KVAULT_CACHE_DIR=$work/cache
py=${RECIPE_PYTHON:-python3}
wheels=${WHEELS:-}
[ -z "$wheels" ] && [ -d "$root/.carry/wheels" ] && wheels=$root/.carry/wheels
if [ -n "$wheels" ]; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$work/site" "$wheels"/*.whl \
    || { echo "installing the wheels of $wheels failed" >&2; exit 1; }
  export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
fi
"$py" -c 'import torch, transformers, trl, datasets, tokenizers; print({"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__, "datasets": datasets.__version__, "cuda": torch.cuda.is_available()})' \
  | tee "$out/versions.json" || { echo "the trainer's packages do not import (recipes/fetch_wheels.sh)" >&2; exit 1; }

# The server starts while the trainer builds its model; e2e.py waits for /v1/health.
port_file=$work/serve.first-line
"$KVAULT" serve --backend "$backend" --port 0 --db "$work/rewards.db" >"$port_file" 2>"$out/serve.log" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null' EXIT
for _ in $(seq 1 120); do
  [ -s "$port_file" ] && break
  kill -0 $serve_pid 2>/dev/null || { echo "kvault serve exited; $out/serve.log:" >&2; tail -20 "$out/serve.log" >&2; exit 3; }
  sleep 1
done
url=$("$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$port_file") \
  || { echo "kvault serve printed no listening line" >&2; exit 3; }
echo "kvault serve at $url (pid $serve_pid)"

if [ "$smoke" = 1 ]; then
  sizes=(--layers 1 --hidden 64 --vocab 600 --max-positions 4096 --sft-round-steps 4 --sft-max-steps 4
         --grpo-steps 1 --grpo-prompts 2 --turns 2 --max-new-tokens 24 --smoke)
else
  sizes=()
fi
"$py" recipes/e2e.py --backend "$backend" --device "$device" --kvault-url "$url" --out "$out" --work "$work" \
  "${sizes[@]}" "${extra[@]}" 2>&1 | tee "$out/e2e.log"
rc=${PIPESTATUS[0]}
curl -s "$url/metrics" >"$out/serve-metrics.txt" 2>/dev/null || true
echo "e2e.py exit $rc; logs and summary.json in $out"
exit $rc
