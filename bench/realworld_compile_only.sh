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
# ARCH (sm_90), SUBSET (a file of candidate names, one a line: only those), CACHE (a
# cache folder to use and keep, e.g. one whose lite object is made; default a fresh one,
# removed at the end). Writes OUT_DIR/compile_only.csv (file, status, units, lite, full,
# record_inline_s, build_s, seconds, message), OUT_DIR/units.csv (one row per noted
# load_inline call: the way it was built, lite, full, compile_error_lite (judged from
# the lite compile alone), compile_error_full, not_built (left to PyTorch), with the
# record's note) and prints a summary.
set -u
devset=$(cd "${1:?usage: $0 DEVSET [OUT_DIR]}" && pwd)
out=${2:-$PWD/bench-out/realworld-compile-only}
root=$(cd "$(dirname "$0")/.." && pwd)
export KVAULT=${KVAULT:-$root/build/kvault} KVAULT_SOURCE_ROOT=$root ARCH=${ARCH:-sm_90}
if [ -n "${CACHE:-}" ]; then
  mkdir -p "$CACHE" && export KVAULT_CACHE_DIR=$(cd "$CACHE" && pwd)
else
  export KVAULT_CACHE_DIR=$(mktemp -d) && trap 'rm -rf "$KVAULT_CACHE_DIR"' EXIT
fi
export devset out
mkdir -p "$out/json"
one() {
  local f=$1 stem=${1%%.*}
  "$KVAULT" verify --task "$devset/tasks/$stem.py" --candidate "$devset/cands/$f" --backend cuda --arch "$ARCH" \
    --compile-only --json > "$out/json/$f.json" 2>/dev/null
}
export -f one
t0=$(date +%s.%N)
if [ -n "${SUBSET:-}" ]; then cat "$SUBSET"; else ls "$devset/cands"; fi | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'one {}'
wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
python3 - "$out" "$wall" <<'PY'
import collections, csv, glob, json, os, re, statistics, sys
out, wall = sys.argv[1], float(sys.argv[2])
rows, unit_rows = [], []


def unit_way(n, status):
    if n.get("built"):
        return "lite" if n.get("lite_ext") else "full"
    if "note" in n:
        return "not_built"
    if status != "compile_error":
        return status
    return "compile_error_lite" if n.get("lite_verdict") else "compile_error_full"


def short(note):  # the note without the run's scratch folders
    return re.sub(r"/\S*/(inline_\d+\.\w+)", r"\1", re.sub(r"\s+", " ", note or ""))[:300]
for path in sorted(glob.glob(os.path.join(out, "json", "*.json"))):
    try:
        j = json.load(open(path))
    except ValueError:
        rows.append({"file": os.path.basename(path)[:-5], "status": "no answer"}); continue
    build = j.get("build") or {}
    notes = build.get("inline") or []
    for i, n in enumerate(notes):
        # A unit's own note; the build object's is the last unit's (the one that failed).
        note = n.get("note") or n.get("lite_ext_note") or (build.get("lite_ext_note", "") if i == len(notes) - 1 else "")
        unit_rows.append({"file": os.path.basename(j["candidate"]), "unit": i, "way": unit_way(n, j["status"]),
                      "note": short(note) if not (n.get("built") and n.get("lite_ext")) else ""})
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
with open(os.path.join(out, "units.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["file", "unit", "way", "note"])
    w.writeheader()
    w.writerows(unit_rows)
status = collections.Counter(r["status"] for r in rows)
units = sum(r.get("units", 0) for r in rows)
lite, full, left = (sum(r.get(k, 0) for r in rows) for k in ("lite", "full", "left"))
med = lambda k: statistics.median(r[k] for r in rows if k in r)
print(f"files {len(rows)}, wall {wall} s ({len(rows) / wall * 60:.1f} a minute), statuses {dict(status)}")
print(f"units {units}: built the lite way {lite}, the full way {full}, not built {left} (compile errors, or left to PyTorch)")
print(f"units by way: {dict(collections.Counter(u['way'] for u in unit_rows))}")
print(f"median record_inline {med('record_inline_s')} s, build {med('build_s')} s, per file {med('seconds')} s")
for r in rows:
    if r["status"] != "compiled" or r.get("full"):
        print(f"  {r['file']}: {r['status']} lite={r.get('lite')} full={r.get('full')} {r.get('message', '')[:120]} "
              f"{r.get('lite_note', '')[:100]}")
PY
