#!/usr/bin/env bash
# The real-world set (bench/realworld_side_by_side.sh's DEVSET) through the record and
# build paths on a machine without a GPU: `kvault verify --compile-only --backend cuda`
# of every file, empty caches, JOBS at a time. Each file's load_inline calls are noted
# in a device-less worker and every unit compiled (-c), the lite way first.
# BENCHMARKS.md, "The real-world set".
#
#   bash bench/realworld_compile_only.sh DEVSET [OUT_DIR]
#
# Environment: KVAULT (default build/kvault), KVAULT_PYTHON, JOBS (default: cores),
# ARCH (sm_90). Writes OUT_DIR/compile_only.csv (file, status, units, lite, full,
# record_inline_s, build_s, seconds, message) and prints a summary.
set -u
devset=$(cd "${1:?usage: $0 DEVSET [OUT_DIR]}" && pwd)
out=${2:-$PWD/bench-out/realworld-compile-only}
root=$(cd "$(dirname "$0")/.." && pwd)
export KVAULT=${KVAULT:-$root/build/kvault} KVAULT_SOURCE_ROOT=$root ARCH=${ARCH:-sm_90}
export KVAULT_CACHE_DIR=$(mktemp -d) devset out
trap 'rm -rf "$KVAULT_CACHE_DIR"' EXIT
mkdir -p "$out/json"
one() {
  local f=$1 stem=${1%%.*}
  "$KVAULT" verify --task "$devset/tasks/$stem.py" --candidate "$devset/cands/$f" --backend cuda --arch "$ARCH" \
    --compile-only --json > "$out/json/$f.json" 2>/dev/null
}
export -f one
t0=$(date +%s.%N)
ls "$devset/cands" | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'one {}'
wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
python3 - "$out" "$wall" <<'PY'
import collections, csv, glob, json, os, statistics, sys
out, wall = sys.argv[1], float(sys.argv[2])
rows = []
for path in sorted(glob.glob(os.path.join(out, "json", "*.json"))):
    try:
        j = json.load(open(path))
    except ValueError:
        rows.append({"file": os.path.basename(path)[:-5], "status": "no answer"}); continue
    notes = (j.get("build") or {}).get("inline") or []
    rows.append({"file": os.path.basename(j["candidate"]), "status": j["status"], "units": len(notes),
                 "lite": sum(1 for n in notes if n.get("built") and n.get("lite_ext")),
                 "full": sum(1 for n in notes if n.get("built") and not n.get("lite_ext")),
                 "left": sum(1 for n in notes if not n.get("built")),
                 "record_inline_s": round(j["phases"].get("record_inline", 0), 3),
                 "build_s": round(j["phases"].get("build", 0), 3), "seconds": round(j["seconds"], 3),
                 "message": j["message"][:200], "lite_note": (j.get("build") or {}).get("lite_ext_note", "")[:160]})
with open(os.path.join(out, "compile_only.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
status = collections.Counter(r["status"] for r in rows)
units = sum(r.get("units", 0) for r in rows)
lite, full, left = (sum(r.get(k, 0) for r in rows) for k in ("lite", "full", "left"))
med = lambda k: statistics.median(r[k] for r in rows if k in r)
print(f"files {len(rows)}, wall {wall} s ({len(rows) / wall * 60:.1f} a minute), statuses {dict(status)}")
print(f"units {units}: built the lite way {lite}, the full way {full}, left to PyTorch {left}")
print(f"median record_inline {med('record_inline_s')} s, build {med('build_s')} s, per file {med('seconds')} s")
for r in rows:
    if r["status"] != "compiled" or r.get("full"):
        print(f"  {r['file']}: {r['status']} lite={r.get('lite')} full={r.get('full')} {r.get('message', '')[:120]} "
              f"{r.get('lite_note', '')[:100]}")
PY
