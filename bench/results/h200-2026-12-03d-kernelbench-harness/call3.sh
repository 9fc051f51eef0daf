#!/usr/bin/env bash
# Device call 3: warm caches, the native and extension formats against the
# load_inline path (bench/h200_throughput.sh wide: batches of 200+ repeating a few
# contents, built first, then all verified warm; the native batch cold then warm),
# with shorter windows than its defaults so that the call fits 10 minutes.
# Carried: .carry/kvault (portable Release of 0fcecfb, stripped), .carry/lib.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
BATCH_LIMIT=40 WARM_LIMIT=75 FILL_LIMIT=120 timeout 560 bash bench/h200_throughput.sh wide
echo "wide exit $?"
