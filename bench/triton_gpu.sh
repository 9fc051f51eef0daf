#!/usr/bin/env bash
# Triton candidates on a GPU (the H200, or ROCm): examples/triton against the example
# suite and the GEAK-eval fixtures through `kvault import-geak`, on the cuda backend
# (hip on ROCm: KVAULT_BACKEND=hip). Checks every status against examples/expected.json
# and tests/fixtures/geak_expected.json and prints the eval tables with speedups.
# Usage (repository root): bench/triton_gpu.sh [KVAULT_BINARY]   (Default: .carry/kvault)
# Prints "triton gpu: ok" at the end when everything matched.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kvault=${1:-$root/.carry/kvault}
backend=${KVAULT_BACKEND:-cuda}
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3}
export KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-$(mktemp -d)}
out=${OUT:-$(mktemp -d)}
check="$root/tests/integration/expect_statuses.py"
"$KVAULT_PYTHON" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))" || exit 1
bad=0
"$kvault" eval --suite "$root/examples/suite" --candidates "$root/examples/triton" --backend "$backend" \
  --db "$out/kv.db" --run triton-gpu --json > "$out/examples.json" 2> "$out/examples.err" || bad=1
python3 "$check" "$out/examples.json" "$root/examples/expected.json" triton || bad=1
"$kvault" eval --suite "$root/examples/suite" --candidates "$root/examples/triton" --backend "$backend" \
  --db "$out/kv.db" --run triton-gpu 2>/dev/null | tail -n 25
for fmt in tritonbench-g rocmbench; do
  dir=${fmt/-/_}
  "$kvault" import-geak --format "$fmt" --tasks "$root/tests/fixtures/$dir/tasks" \
    --candidates "$root/tests/fixtures/$dir/candidates" -o "$out/$dir"  # tritonbench_g: exit 2 (no_separator.py)
  "$kvault" eval --suite "$out/$dir/suite" --candidates "$out/$dir/candidates" --backend "$backend" \
    --db "$out/kv.db" --run "$dir-gpu" --json > "$out/$dir.json" 2> "$out/$dir.err" || bad=1
  python3 "$check" "$out/$dir.json" "$root/tests/fixtures/geak_expected.json" "$dir" || bad=1
  "$kvault" score --suite "$out/$dir/suite" --run "$dir-gpu" --db "$out/kv.db" | head -n 20
done
[ "$bad" = 0 ] && echo "triton gpu: ok" || { echo "triton gpu: FAILED (logs in $out)"; exit 1; }
