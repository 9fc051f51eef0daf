# device call M: adversarial GPU suite + the worker's new tests on CUDA, then the vault at scale (whole real-world set)
set -u
T0=$(date +%s)
mkdir -p /tmp/kvm && tar xzf .carry/clean.tar.gz -C /tmp/kvm && cp -r .carry .whl /tmp/kvm/ && cd /tmp/kvm
mkdir -p build && cp .carry/kvault build/kvault
export KVAULT=$PWD/.carry/kvault LD_LIBRARY_PATH=$PWD/.carry/lib PYTHONUNBUFFERED=1 KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
BUDGET_S=120 OUT=$OUT bash tests/gpu/adversarial_gpu.sh 2>&1 | grep -v "^ok " | tail -30
cat $OUT/adversarial/exit.txt
echo "== adversarial after $(( $(date +%s) - T0 )) s"
(cd $OUT && tar czf adversarial.tar.gz adversarial && rm -rf adversarial)
(cd python && PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_process_starts.py tests/test_integrity.py tests/test_op_policy.py 2>&1 | tail -15)
echo "== pytest after $(( $(date +%s) - T0 )) s"
left=$(( 570 - ($(date +%s) - T0) ))
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 2 > $OUT/smi.csv 2>&1 &
SMI=$!
[ $left -gt 100 ] && JOBS=6 VERIFY_LIMIT=$(( left - 45 )) OUT=$OUT KVAULT_BIN=$KVAULT timeout $(( left - 3 )) bash bench/corpus_at_scale.sh .carry/devset .carry/kernelbench/KernelBench 2>&1 | tail -15
kill $SMI
python3 -c "import json;d=json.load(open('$OUT/corpus_at_scale.json'));print(json.dumps(d,indent=1)[:5000])" 2>&1
echo "== done after $(( $(date +%s) - T0 )) s"
ls -la $OUT
