#!/usr/bin/env bash
# One RL step (64 tasks x 8 samples, cold caches) through `kvault serve`, then through
# AMD's way (a pool of per-candidate load_inline subprocesses), side by side in one run.
# Results: $OUT/rl_step-<format>-s<seed>/{results.json,summary.md,serve.log,amd_way.json,...}
#
#   bash bench/rl_step/run_step.sh native      # native-format candidates (goal: step < 60 s)
#   bash bench/rl_step/run_step.sh extension   # extension format (goal: step < 300 s)
#   bash bench/rl_step/run_step.sh kernelbench # AMD's own load_inline files, through kvault
#   bash bench/rl_step/run_step.sh native --lanes 8   # more flags go to run_step.py
#
# Environment (defaults for the H200 machine, repository root as the working directory):
#   KVAULT          the binary (default .carry/kvault when present, else build/kvault);
#                   .carry/lib goes on LD_LIBRARY_PATH when present
#   KVAULT_PYTHON   Python with PyTorch, for the workers and AMD's way (default python3)
#   SEED            candidate text seed (default 0); caches are fresh in every run anyway
#   STEP_LANG       cuda (default) or cpu (a dry run on the CPU backend, small sizes)
#   TASKS           the first N of the 64 tasks only (dry runs; default 64)
#   BUDGET_S        seconds for the whole run (default 570: one 10-minute device call);
#                   AMD's way gets what the kvault part left
#   KVAULT_LIMIT_S  the kvault step's limit (default 240 native, 300 extension; 400 with
#                   PARTS=kvault)
#   AMD_COUNT       AMD's way on a stratified subset of this many candidates (default 64,
#                   32 beside an extension step; 0: all 512, about half an hour), its time
#                   projected to the step
#   AMD_WORKERS     AMD's pool size (default: 16 or the core count)
#   PARTS           kvault,amd (default), kvault or amd: parts in separate calls, then
#                   run_step.py --merge A/results.json B/results.json --out DIR (AMD's side
#                   is the same for both formats of a seed: its files do not depend on it)
# Exit status: run_step.py's (1 when a status differs from the manifest, the step did not
# finish, a result was not cold, or the server failed).
set -u
fmt=${1:-native}
shift || true
case "$fmt" in native|extension|kernelbench) ;; *) echo "usage: $0 native|extension|kernelbench [run_step.py flags]" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if [ -z "${KVAULT:-}" ]; then
  if [ -x "$root/.carry/kvault" ]; then KVAULT=$root/.carry/kvault; else KVAULT=$root/build/kvault; fi
fi
[ -d "$root/.carry/lib" ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
seed=${SEED:-0}
lang=${STEP_LANG:-cuda}
backend=cuda; device=cuda
[ "$lang" = cpu ] && { backend=cpu; device=cpu; }
parts=${PARTS:-kvault,amd}
# The kvault step's limit: its goal's slack with AMD's way in the same call (native 240 s,
# extension 300 s: if that step misses its goal, the run says so and AMD's way keeps its
# time), or most of the call when it runs alone (PARTS=kvault: 400 s).
default_limit=240; [ "$fmt" != native ] && default_limit=300
[ "$parts" = kvault ] && default_limit=400
default_count=64; [ "$fmt" != native ] && [ "$parts" != amd ] && default_count=32
out=${OUT:-$root/bench-out}/rl_step-$fmt-s$seed
step=${WORK:-/tmp}/rl-step-$fmt-$lang-s$seed
rm -rf "$step"
mkdir -p "$out"
"$KVAULT_PYTHON" bench/rl_step/make_step.py --out "$step" --format "$fmt" --seed "$seed" --lang "$lang" \
  --tasks "${TASKS:-64}" \
  || { echo "make_step.py failed" >&2; exit 1; }
"$KVAULT_PYTHON" bench/rl_step/run_step.py --step "$step" --out "$out" --kvault "$KVAULT" \
  --backend "$backend" --amd-device "$device" --python "$KVAULT_PYTHON" --parts "$parts" \
  --budget-s "${BUDGET_S:-570}" --kvault-limit-s "${KVAULT_LIMIT_S:-$default_limit}" \
  --amd-count "${AMD_COUNT:-$default_count}" --amd-workers "${AMD_WORKERS:-$(( $(nproc) < 16 ? $(nproc) : 16 ))}" "$@"
rc=$?
echo "run_step.py exit $rc; results in $out"
exit $rc
