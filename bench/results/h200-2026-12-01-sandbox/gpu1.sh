set -u
R=/tmp/res; mkdir -p $R
export KVAULT=$PWD/.carry/kvault KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=/tmp/kvc
{ uname -r; python3 -c 'import sys,torch;print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())'; } > $R/env.txt 2>&1
$KVAULT sandbox-exec --probe > $R/probe.json 2>&1
$KVAULT doctor --json > $R/doctor.json 2>&1
mkdir -p /tmp/c /tmp/e
for f in relu.py relu.shm-leave.py relu.shm-replay.py relu.plant-module.py relu.plant-victim.py relu.sabotage-scratch.py relu.other-cache.py; do cp examples/adversarial/kernelbench/$f /tmp/c/; done
cp examples/cuda/relu.cu /tmp/e/relu.cu; cp examples/triton/relu.py /tmp/e/relu.triton.py; cp examples/kernelbench/relu.py /tmp/e/relu.inline.py
KVAULT_DEVICE_COMPARE_MIN_BYTES=0 timeout 240 $KVAULT eval --suite examples/adversarial/tasks --candidates /tmp/c --backend cuda --jobs 2 --json --db /tmp/a.db --run cheats > $R/cheats.json 2> $R/cheats.err; echo "cheats rc=$?" >> $R/rc.txt
KVAULT_DEVICE_COMPARE_MIN_BYTES=0 timeout 240 $KVAULT eval --suite examples/suite --candidates /tmp/e --backend cuda --jobs 2 --json --db /tmp/b.db --run examples > $R/examples.json 2> $R/examples.err; echo "examples rc=$?" >> $R/rc.txt
ls -la /dev/shm > $R/devshm_after.txt; ipcs -m >> $R/devshm_after.txt 2>&1
python3 - <<'PY' > $R/summary.txt
import json
for n in ("cheats", "examples"):
    try:
        for a in json.load(open("/tmp/res/%s.json" % n))["attempts"]:
            print(n, a["candidate"].split("/")[-1], a["status"], a.get("speedup"), a["message"][:300])
    except Exception as e:
        print(n, "unreadable", e)
PY
cat $R/rc.txt $R/summary.txt; tail -5 $R/cheats.err $R/examples.err
tar czf $OUT/res1.tgz -C /tmp res
