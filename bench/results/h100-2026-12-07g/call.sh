# device call R: adversarial kernelbench+cuda+policy_cuda folders (one budget, in parallel), then the vault at scale
set -u
T0=$(date +%s)
mkdir -p /tmp/kvr && tar xzf .carry/clean.tar.gz -C /tmp/kvr && cp -r .carry /tmp/kvr/ && cd /tmp/kvr
mkdir -p build && cp .carry/kvault build/kvault
export KVAULT=$PWD/.carry/kvault LD_LIBRARY_PATH=$PWD/.carry/lib PYTHONUNBUFFERED=1 KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=/tmp/kv-cache
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
adv=examples/adversarial; res=$OUT/adversarial; mkdir -p $res
run_eval() {  # folder lanes policy
  timeout ${ADV_S:-210} $KVAULT eval --suite $adv/tasks --candidates $adv/$1 --backend cuda --jobs $2 --policy $3 \
    --run adv-gpu-$1 --db $res/adversarial.db --json > $res/$1.json 2> $res/$1.log
  echo "$1: eval exit $?" | tee -a $res/exit.txt
}
run_eval kernelbench 4 task & run_eval cuda 4 task & run_eval policy_cuda 2 custom_kernel &
wait
echo "== adversarial after $(( $(date +%s) - T0 )) s"
for f in kernelbench cuda policy_cuda; do
  echo "== $f"; python3 tests/integration/check_manifest.py --backend cuda $adv/adversarial.json $f=$res/$f.json | grep -v "^ok " | tail -12
done
python3 - <<'PY'
import sqlite3, os, csv
db = os.environ["OUT"] + "/adversarial/adversarial.db"
c = sqlite3.connect(db)
rows = c.execute("select run, candidate_path, status, speedup, reward from attempts order by run, candidate_path").fetchall()
with open(os.environ["OUT"] + "/adversarial_all.csv", "w") as fh:
    w = csv.writer(fh); w.writerow(["run", "candidate", "status", "speedup", "reward"])
    for r in rows: w.writerow([r[0], os.path.basename(r[1]), r[2], None if r[3] is None else round(r[3], 3), None if r[4] is None else round(r[4], 3)])
print(len(rows), "attempts recorded")
PY
rm -f $res/adversarial.db; (cd $OUT && tar czf adversarial.tar.gz adversarial && rm -rf adversarial)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 5 > $OUT/smi.csv 2>&1 &
SMI=$!
left=$(( ${CALL_S:-585} - ($(date +%s) - T0) ))
echo "== corpus at scale with $left s left"
JOBS=${JOBS:-6} VERIFY_LIMIT=$(( left - 45 )) OUT=$OUT KVAULT_BIN=$KVAULT timeout $(( left - 3 )) \
  bash bench/corpus_at_scale.sh .carry/devset .carry/kernelbench/KernelBench 2>&1 | tail -15
kill $SMI
echo "== done after $(( $(date +%s) - T0 )) s"
ls -la $OUT
