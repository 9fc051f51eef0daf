#!/usr/bin/env bash
# Device call 1 (2026-12-02, afternoon): the lite extension build on the H200.
# 1. Each correct CUDA example built cold with nvcc the full way (all at once) and the
#    lite way (one at a time), outputs compared with each other and the reference.
# 2. The lite headers against PyTorch 2.11's own with g++: testdata/lite_extension.cpp
#    (every lite name) and testdata/fast_ext_extension.cpp (every binding kind), built
#    both ways, every call's result compared.
# Run from the repository root; nothing carried but the tree.
set -u
mkdir -p "$OUT/nvcc"
OUT=$OUT/nvcc WAYS="full lite" timeout 400 bash bench/h200_ext_nvcc.sh sm_90 > "$OUT/nvcc.txt" 2>&1
echo "nvcc exit $?" >> "$OUT/nvcc.txt"
tail -30 "$OUT/nvcc.txt"
(cd "$OUT/nvcc" && tar czf ../nvcc-logs.tar.gz . && cd .. && rm -rf nvcc)
timeout 150 python3 bench/lite_vs_full_gxx.py > "$OUT/gxx.txt" 2>&1
echo "gxx exit $?" >> "$OUT/gxx.txt"
tail -20 "$OUT/gxx.txt"
