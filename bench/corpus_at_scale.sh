#!/usr/bin/env bash
# The vault at scale on real kernels (BENCHMARKS.md, "The vault on the real-world set"):
# the real-world set of LLM-written KernelBench solutions imported into a fresh vault
# with its provenance (bench/corpus_realworld_rows.py: model, repository at its commit,
# the repository's licence), verified on this machine's GPU, deduplicated,
# decontaminated against KernelBench and exported (sft, dpo, hf published). One JSON
# summary: counts per stage, what was left out and why, wall time per stage.
#
#   bash bench/corpus_at_scale.sh DEVSET KERNELBENCH_DIR
#
# DEVSET: tasks/, cands/, manifest.json, sources.json (.carry/devset). KERNELBENCH_DIR:
# KernelBench's KernelBench/ folder of level1-3 task files (.carry/kernelbench/KernelBench).
# Environment: KVAULT_BIN (default .carry/kvault; .carry/lib goes on LD_LIBRARY_PATH),
# KVAULT_PYTHON (python3), BACKEND (cuda; cpu tries the script on a machine without a
# GPU), JOBS (verify's lanes, 4), LIMIT (files, 0 = all), VERIFY_LIMIT (seconds for
# verify, 330: stopped with SIGINT after that, every result kept and the rest counted
# as not verified), OUT (bench-out).
# Writes $OUT/corpus_at_scale.json (the summary) and $OUT/corpus_at_scale_logs.tar.gz
# (each stage's output and stderr, the stats and the dataset card; no kernels) and
# $OUT/corpus_verify_scratch.db (verify's scratch store: each attempt's status and phases).
set -u
devset=$(cd "${1:?usage: $0 DEVSET KERNELBENCH_DIR}" && pwd)
kb=$(cd "${2:?usage: $0 DEVSET KERNELBENCH_DIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
KVAULT=${KVAULT_BIN:-$root/.carry/kvault}
[ -d .carry/lib ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
py=${KVAULT_PYTHON:-python3}
export KVAULT_PYTHON=$py KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
backend=${BACKEND:-cuda}
out=${OUT:-$root/bench-out}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
logs=$work/logs
mkdir -p "$out" "$logs"
export KVAULT_CACHE_DIR=$work/cache TORCH_EXTENSIONS_DIR=$work/torch-ext  # cold, as a fresh vault would be
V=$work/vault.db

now() { date +%s.%N; }
# stage NAME COMMAND...: stdout to logs/NAME.json (or .out), stderr to logs/NAME.err,
# wall time and exit code to logs/NAME.time
stage() {
  local name=$1 t0 rc
  shift
  t0=$(now)
  "$@" >"$logs/$name.out" 2>"$logs/$name.err"
  rc=$?
  echo "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f", a - b }') $rc" >"$logs/$name.time"
  echo "$name: exit $rc, $(cut -d' ' -f1 "$logs/$name.time") s" >&2
  return 0
}
corpus() { "$KVAULT" corpus "$@" --vault "$V"; }

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; echo "cores $(nproc)"
  "$py" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])' 2>&1
  nvcc --version 2>/dev/null | tail -1
  echo "kvault: $(git rev-parse HEAD 2>/dev/null), backend $backend, jobs ${JOBS:-4}, limit ${LIMIT:-0}"
} >"$logs/env.txt" 2>&1

stage rows "$py" bench/corpus_realworld_rows.py "$devset" "$work/realworld.jsonl" --limit "${LIMIT:-0}"
stage import corpus import --from sft "$work/realworld.jsonl" --json
stage verify timeout -s INT -k 30 "${VERIFY_LIMIT:-330}" "$KVAULT" corpus verify --vault "$V" --backend "$backend" \
  --jobs "${JOBS:-4}" --json
cp "$V.verify.db" "$out/corpus_verify_scratch.db" 2>/dev/null  # each attempt's phases (a store: kvault report reads it)
stage verify_status corpus stats --json
stage dedup corpus dedup --json
stage decontaminate corpus decontaminate --suite "$kb" --name kernelbench --json
stage stats corpus stats --json
stage export_sft corpus export --format sft --status passed -o "$work/sft.jsonl" --json
stage export_sft_clean corpus export --format sft --status passed --decontaminated-only -o "$work/sft-clean.jsonl" --json
stage export_dpo corpus export --format dpo -o "$work/dpo.jsonl" --json
stage export_hf corpus export --format hf -o "$work/hf" --json
cp "$work/hf/README.md" "$logs/hf-card.md" 2>/dev/null

"$py" - "$logs" "$out/corpus_at_scale.json" "$work" <<'PYEOF'
import json, os, sys
logs, dest, work = sys.argv[1:4]
def load(name):
    try:
        return json.load(open(os.path.join(logs, name + ".out")))
    except Exception as e:
        return {"error": "no JSON from %s: %s" % (name, e), "stderr": open(os.path.join(logs, name + ".err")).read()[-2000:]}
def timing(name):
    try:
        seconds, rc = open(os.path.join(logs, name + ".time")).read().split()
        return {"seconds": round(float(seconds), 2), "exit": int(rc)}
    except Exception:
        return {}
stages = ["rows", "import", "verify", "dedup", "decontaminate", "stats",
          "export_sft", "export_sft_clean", "export_dpo", "export_hf"]
s = {name: load(name) for name in stages}
s["status_after_verify"] = load("verify_status").get("by_status")
stats = s["stats"]
hits = s["decontaminate"].get("hits", []) if isinstance(s["decontaminate"], dict) else []
by_reason = {}
for h in hits:
    by_reason.setdefault(h["reason"], set()).add(h["record"])
summary = {
    "environment": open(os.path.join(logs, "env.txt")).read().strip().splitlines(),
    "seconds": {name: timing(name) for name in stages},
    "counts": {
        "files": s["rows"].get("manifest"), "rows": s["rows"].get("rows"), "holdout": s["rows"].get("holdout"),
        "imported": s["import"].get("imported"), "import_malformed": s["import"].get("malformed"),
        "verify": {k: s["verify"].get(k) for k in ("selected", "verified", "already", "unsupported", "not_recorded",
                                                   "hardware", "toolchain")},
        "status_after_verify": s["status_after_verify"],
        "dedup": {k: s["dedup"].get(k) for k in ("records", "exact_duplicates", "near_duplicates", "near_misses",
                                                 "cross_group_pairs", "clusters", "kept")},
        "decontaminate": {"tasks": s["decontaminate"].get("tasks"),
                          "records_checked": s["decontaminate"].get("records_checked"),
                          "records_flagged": s["decontaminate"].get("records_flagged"),
                          "records_by_reason": {r: len(v) for r, v in by_reason.items()}},
        "verify_interrupted_at_limit": timing("verify").get("exit") in (124, 130),
        "by_license": stats.get("by_license"), "by_source": stats.get("by_source"),
        "speedup_of_passed": stats.get("speedup"),
        "exports": {name: {k: s[name].get(k) for k in ("records", "rows", "test_rows", "skipped")}
                    for name in ("export_sft", "export_sft_clean", "export_dpo", "export_hf")},
    },
    "left_out": {
        "malformed_at_import": s["import"].get("malformed_rows"),
        "not_verified": "not_recorded: task or infrastructure errors, or not reached within VERIFY_LIMIT",
        "duplicates": "exact and near duplicates within a task (kind near_miss is kept)",
        "contaminated": "records whose reference or kernel matches a KernelBench task (all of this set, by design)",
    },
}
json.dump(summary, open(dest, "w"), indent=1)
print(json.dumps(summary["counts"], indent=1))
PYEOF
tar -czf "$out/corpus_at_scale_logs.tar.gz" -C "$work" logs
echo "wrote $out/corpus_at_scale.json and $out/corpus_at_scale_logs.tar.gz" >&2
