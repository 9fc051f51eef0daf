# device call N: the burst fix and the larger held-out case on CUDA: the cuda folder + held-out cheats
set -u
T0=$(date +%s)
mkdir -p /tmp/kvn && tar xzf .carry/clean.tar.gz -C /tmp/kvn && cp -r .carry /tmp/kvn/ && cd /tmp/kvn
mkdir -p build && cp .carry/kvault build/kvault
export KVAULT=$PWD/.carry/kvault LD_LIBRARY_PATH=$PWD/.carry/lib PYTHONUNBUFFERED=1 KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=/tmp/kv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
res=$OUT/adv; mkdir -p $res
timeout 100 $KVAULT eval --suite examples/adversarial/tasks --candidates examples/adversarial/cuda --backend cuda --jobs 4 \
  --run adv-gpu-cuda --db $res/adv.db --json > $res/cuda.json 2> $res/cuda.log; echo "cuda: exit $?"
python3 tests/integration/check_manifest.py --backend cuda examples/adversarial/adversarial.json cuda=$res/cuda.json | grep -v "^ok " | tail -15
sqlite3 $res/adv.db "select candidate_path,status,round(speedup,3),round(reward,3) from attempts where candidate_path like '%forge%' or candidate_path like '%row_scale%'" 2>/dev/null || python3 -c "
import sqlite3;[print(r) for r in sqlite3.connect('$res/adv.db').execute(\"select candidate_path,status,speedup,reward from attempts where candidate_path like '%forge%' or candidate_path like '%row_scale%'\")]"
echo "== cuda folder after $(( $(date +%s) - T0 )) s"
# (held-out script left out: budget)
echo "== done after $(( $(date +%s) - T0 )) s"
