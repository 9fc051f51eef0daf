#!/usr/bin/env bash
# LLM-style KernelBench files whose own code does not compile (bench/compile_errors/
# and the examples' C++ ones, examples/kernelbench/*.wrong-llm-*.py: a missing
# semicolon, an undeclared variable, a write through a const pointer; CUDA and C++
# load_inline), each verified with `--compile-only` twice: against an empty compile
# cache (cold), then again on the cache the first run left (warm: the lite object and,
# when the first run took the full way with g++, the precompiled header are there;
# failed builds are never cached). How long a compile_error takes to say, and whether
# it came from the lite compile's diagnostics alone or from a full build with
# PyTorch's headers. BENCHMARKS.md, "Compile errors judged from the lite build".
#
#   bash bench/compile_error_builds.sh [OUT_DIR]
#
# Environment: KVAULT (default build/kvault), KVAULT_PYTHON, ARCH (sm_90). Files named
# *.cu-* are verified on the cuda backend (nvcc), the others on the cpu backend (g++).
# Writes OUT_DIR/compile_errors.csv (file, backend, run, status, seconds, build_s,
# lite_verdict, note) and prints it.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$PWD/bench-out/compile-errors}
export KVAULT=${KVAULT:-$root/build/kvault} KVAULT_SOURCE_ROOT=$root
arch=${ARCH:-sm_90}
mkdir -p "$out/json"
for f in "$root"/bench/compile_errors/*.py "$root"/examples/kernelbench/*.wrong-llm-{semicolon,undeclared}.py; do
  name=$(basename "$f")
  task=$root/examples/suite/${name%%.*}.py
  case $name in *.cu-*) backend=(--backend cuda --arch "$arch") ;; *) backend=(--backend cpu) ;; esac
  cache=$(mktemp -d)
  for run in cold warm; do
    KVAULT_CACHE_DIR=$cache "$KVAULT" verify --task "$task" --candidate "$f" "${backend[@]}" --compile-only --json \
      > "$out/json/$name.$run.json" 2> "$out/json/$name.$run.err"
  done
  rm -rf "$cache"
done
python3 - "$out" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "json", "*.json"))):
    name, run = os.path.basename(path)[:-5].rsplit(".", 1)
    try:
        j = json.load(open(path))
    except ValueError:
        rows.append({"file": name, "run": run, "status": "no answer"}); continue
    build = j.get("build") or {}
    rows.append({"file": name, "backend": "cuda" if ".cu-" in name else "cpu", "run": run, "status": j["status"],
                 "seconds": round(j["seconds"], 1), "build_s": round(j["phases"].get("build", 0), 1),
                 "lite_verdict": bool(build.get("lite_verdict")),
                 "note": build.get("lite_ext_note", "")[:150]})
with open(os.path.join(out, "compile_errors.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["file", "backend", "run", "status", "seconds", "build_s", "lite_verdict", "note"])
    w.writeheader()
    w.writerows(rows)
print(open(os.path.join(out, "compile_errors.csv")).read(), end="")
PY
