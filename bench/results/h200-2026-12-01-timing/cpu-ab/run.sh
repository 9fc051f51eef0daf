#!/usr/bin/env bash
# run NAME BIN ROOT CACHE
set -u
source /work/main/scripts/env.sh
s=$(date +%s.%N)
KVAULT_SOURCE_ROOT=$3 KVAULT_CACHE_DIR=$4 $2 eval --suite /work/main/examples/suite --candidates /tmp/ab/c/native \
  --backend cpu --jobs 2 --run $1 --db /tmp/ab/$1.db --json > /tmp/ab/$1.json 2> /tmp/ab/$1.log
rc=$?
e=$(date +%s.%N)
python3 - "$1" "$s" "$e" "$rc" <<'PY'
import json, sys, collections
name, s, e, rc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
a = json.load(open("/tmp/ab/%s.json" % name))["attempts"]
st = collections.Counter(x["status"] for x in a)
print("%-10s exit %s  %d attempts in %.1f s = %.1f per minute  %s" % (name, rc, len(a), e - s, len(a) / (e - s) * 60, dict(st)))
PY
