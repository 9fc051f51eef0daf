#!/usr/bin/env bash
# kernelvault.cluster on the H200 machine: one GPU node and CPU nodes on one host
# (bench/h200_cluster.py). A device call with `carry: [".carry"]`, where
#   .carry/kvault    the binary, built here in Release with -DKVAULT_PORTABLE_BINARY=ON
#   .carry/py/       ray-site.zip (Ray 2.60.0's cp312 wheel unpacked, without its Java
#                    jars, RLlib/Tune/Train/Data/Serve/LLM and the dashboard's web
#                    client, _raylet.so stripped: the wheel is 79 MB, over a call's
#                    limit) and the wheels of jsonschema and its needs, which the
#                    machine lacks; bench/h200_cluster.sh --pack makes it here.
#
#   OUT=$OUT bash bench/h200_cluster.sh [h200_cluster.py flags]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = --pack ]; then
  set -e
  mkdir -p .whl .carry/py
  plat="--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat -d .whl \
    ray==2.60.0 jsonschema referencing jsonschema-specifications rpds-py
  scratch=$(mktemp -d)
  (cd "$scratch" && unzip -q "$root"/.whl/ray-2.60.0-cp312-*.whl &&
   rm -rf ray/jars ray/rllib ray/tune ray/train ray/data ray/serve ray/llm ray/dashboard/client/build &&
   find . -name '*.map' -delete && strip --strip-unneeded ray/_raylet.so &&
   rm -f "$root/.carry/py/ray-site.zip" && zip -q -r -9 "$root/.carry/py/ray-site.zip" ray ray-2.60.0.dist-info)
  rm -rf "$scratch"
  cp .whl/jsonschema-*.whl .whl/jsonschema_specifications-*.whl .whl/referencing-*.whl .whl/rpds_py-*.whl .carry/py/
  du -sh .carry
  exit 0
fi
site=/tmp/site
mkdir -p "$site"
python3 -m zipfile -e .carry/py/ray-site.zip "$site" || exit 1   # no unzip on the machine, and
chmod +x "$site"/ray/core/src/ray/raylet/raylet "$site"/ray/core/src/ray/gcs/gcs_server   # zipfile drops modes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .carry/py/*.whl || exit 1
[ -d .carry/lib ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} KVAULT_BIN=$root/.carry/kvault KVAULT_PYTHON=python3
export KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
out=${OUT:-$root/bench-out}/cluster
mkdir -p "$out"
scratch=/tmp/kvault-h200-cluster
rm -rf "$scratch"
python3 bench/h200_cluster.py --out "$out" --scratch "$scratch" "$@" 2>&1 | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
# Logs as two files (a call brings back at most 8): the nodes' serve logs, Ray's.
(cd "$scratch" && find . -name serve.log | tar czf "$out/serve-logs.tgz" -T -) 2>/dev/null
tar czf "$out/ray-logs.tgz" -C /tmp/ray/session_latest logs 2>/dev/null
exit "$rc"
