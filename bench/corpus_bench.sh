#!/usr/bin/env bash
# The corpus benchmark (BENCHMARKS.md, "Corpus curation"): 100,000 synthetic kernel
# records (bench/corpus_make_records.py) imported, deduplicated, decontaminated against
# a 250-task suite and exported, each step under /usr/bin/time -v; then near-dedup
# compared with datasketch on the same normalised tokens (bench/corpus_datasketch.py).
#
#   bench/corpus_bench.sh [OUT]     (Default OUT: bench/results/corpus-<date>)
#   RECORDS=20000 bench/corpus_bench.sh /tmp/small   a quicker run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"
KVAULT=${KVAULT:-$root/build/kvault}
OUT=${1:-$root/bench/results/corpus-$(date -u +%Y-%m-%d)}
RECORDS=${RECORDS:-100000}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$OUT"
V="$WORK/vault.db"
rm -f "$V" "$V"-*

timed() {  # name, command...: runs it under /usr/bin/time -v, keeps its output and the times
  local name=$1; shift
  /usr/bin/time -v -o "$OUT/$name.time" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  printf '%-14s %8s s %8s MB\n' "$name" \
    "$(awk -F': ' '/Elapsed \(wall clock\)/{split($2,t,":"); s=0; for(i=1;i<=length(t);i++) s=s*60+t[i]; print s}' "$OUT/$name.time")" \
    "$(awk -F': ' '/Maximum resident/{printf "%.0f", $2/1024}' "$OUT/$name.time")"
}

{
  echo "command: bench/corpus_bench.sh $OUT (RECORDS=$RECORDS)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores"
  echo "memory: $(awk '/MemTotal/{printf "%.1f GB", $2/1048576}' /proc/meminfo)"
  echo "kernel: $(uname -r)"
  echo "compiler: $(c++ --version | head -1)"
  echo "python: $($KVAULT_PYTHON --version 2>&1), datasketch $($KVAULT_PYTHON -c 'import datasketch; print(datasketch.__version__)' 2>/dev/null || echo '?')"
} > "$OUT/environment.txt"

python3 "$root/bench/corpus_make_records.py" --out "$WORK/data" --records "$RECORDS" > "$OUT/generated.json"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"
echo "step            wall      peak RSS"
timed import        "$KVAULT" corpus import --from records "$WORK/data/records.jsonl" --vault "$V" --json
timed dedup         "$KVAULT" corpus dedup --vault "$V" --json --dump-tokens "$WORK/tokens.tsv" --marks "$WORK/marks.jsonl"
timed decontaminate "$KVAULT" corpus decontaminate --vault "$V" --suite "$WORK/data/suite" --name synthetic-250 --json
timed export        "$KVAULT" corpus export --vault "$V" --format sft --any-status --decontaminated-only -o "$WORK/sft.jsonl" --json

python3 - "$OUT" "$WORK/data/truth.json" <<'PY' > "$OUT/summary.json"
import json, re, sys
out, truth = sys.argv[1], json.load(open(sys.argv[2]))
steps, total = {}, 0.0
for name in ["import", "dedup", "decontaminate", "export"]:
    t = open(f"{out}/{name}.time").read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1).split(":")
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
    steps[name] = {"wall_s": round(secs, 2), "peak_rss_mb": round(rss, 1)}
    total += secs
dc = json.load(open(f"{out}/decontaminate.out"))
planted = {c["record"] for c in truth["contaminated"]}
flagged = {h["record"] for h in dc["hits"]}
by_sig = {h["record"] for h in dc["hits"] if h["reason"] == "signature"}
print(json.dumps({"steps": steps, "total_wall_s": round(total, 2),
                  "peak_rss_mb": max(s["peak_rss_mb"] for s in steps.values()),
                  "dedup": json.load(open(f"{out}/dedup.out")),
                  "decontamination": {"planted": len(planted), "flagged": len(flagged),
                                      "planted_flagged": len(planted & flagged),
                                      "planted_flagged_by_signature": len(planted & by_sig),
                                      "flagged_not_planted": len(flagged - planted),
                                      "by_reason": dc["by_reason"]}}, indent=1))
PY
echo "total: $(json_get() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }; json_get "$OUT/summary.json" "['total_wall_s']") s"

# Near-dedup against datasketch on the same tokens, same num_perm, threshold, shingles.
"$KVAULT_PYTHON" "$root/bench/corpus_datasketch.py" --tokens "$WORK/tokens.tsv" --marks "$WORK/marks.jsonl" \
  --truth "$WORK/data/truth.json" --kvault-report "$OUT/dedup.out" > "$OUT/datasketch.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"
cat "$OUT/datasketch.json"
