set -u
R=/tmp/res2; mkdir -p $R
export KVAULT=$PWD/.carry/kvault KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD
(KVAULT_CACHE_DIR=/tmp/kvc-ts timeout 420 bash tests/integration/test_sandbox.sh > $R/test_sandbox.txt 2>&1; echo "test_sandbox rc=$?" >> $R/rc.txt) &
(KVAULT_CACHE_DIR=/tmp/kvc-adv OUT=$R BUDGET_S=330 timeout 420 bash tests/gpu/adversarial_gpu.sh > $R/adv_gpu.txt 2>&1; echo "adversarial_gpu rc=$?" >> $R/rc.txt) &
export KVAULT_CACHE_DIR=/tmp/kvc-dc KVAULT_DEVICE_COMPARE_MIN_BYTES=0
mkdir -p /tmp/e2 /tmp/c2
cp examples/cuda/vector_add.cu examples/cuda/softmax.cu examples/cuda/softmax.wrong-offbyone.cu /tmp/e2/
cp examples/adversarial/kernelbench/relu.py examples/adversarial/kernelbench/relu.shm-leave.py examples/adversarial/kernelbench/relu.sabotage-scratch.py /tmp/c2/
timeout 240 $KVAULT eval --suite examples/suite --candidates /tmp/e2 --backend cuda --jobs 2 --json --db /tmp/dc.db --run ext > $R/ext.json 2> $R/ext.err; echo "ext rc=$?" >> $R/rc.txt
timeout 240 $KVAULT eval --suite examples/adversarial/tasks --candidates /tmp/c2 --backend cuda --jobs 2 --json --db /tmp/dc.db --run cheats > $R/cheats.json 2> $R/cheats.err; echo "cheats rc=$?" >> $R/rc.txt
python3 - <<'PY' > $R/compared_on.txt 2>&1
import json, sqlite3, collections
c = sqlite3.connect("/tmp/dc.db")
for run, cand, status, cases in c.execute("select run, candidate_path, status, cases from attempts"):
    on = collections.Counter(x.get("compared_on", "-") for x in json.loads(cases or "[]") if x.get("call"))
    rc = [x.get("recheck_on", x.get("recheck")) for x in json.loads(cases or "[]") if x.get("kind") == "timing"]
    print(run, cand.split("/")[-1], status, dict(on), rc)
PY
wait
ls -la /dev/shm >> $R/rc.txt
cat $R/rc.txt $R/compared_on.txt; tail -3 $R/test_sandbox.txt; grep -h "problems\|==" $R/adv_gpu.txt $R/adversarial/*.check.txt 2>/dev/null | tail -12
tar czf $OUT/res2.tgz -C /tmp res2
