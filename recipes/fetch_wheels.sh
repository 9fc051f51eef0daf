#!/usr/bin/env bash
# Downloads the wheels the H200 machine lacks for recipes/h200_e2e.sh into .carry/wheels
# (or $1): trl and datasets, and the pure-Python packages datasets needs that the
# machine's image does not have (dill, multiprocess). Everything else the trainer
# imports is there (torch 2.11, transformers 5.17, accelerate 1.15, tokenizers 0.23,
# pyarrow, pandas, xxhash, fsspec, huggingface_hub, httpx; /work/.library/device/KINDS.md).
# h200_e2e.sh installs them with `pip install --no-index --no-deps --target`.
#
#   bash recipes/fetch_wheels.sh            # here, before the device call
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/.carry/wheels}
mkdir -p "$dest"
# Versions: trl 1.16.0 runs with transformers 5.17 (tried with --cpu-smoke: see
# docs/training.md); datasets 5.2.0 is the newest that trl 1.16 accepts (>= 4.7).
pins=(trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19)
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation py \
  --platform any -d "$dest" "${pins[@]}" \
  || python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d "$dest" "${pins[@]}"
ls -l "$dest"
