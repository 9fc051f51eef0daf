#!/usr/bin/env bash
# Device call 3 (2026-12-02, evening): call 1 again after the zygote fix (it preloads
# setuptools and PyTorch's hipify tables, not torch.utils.cpp_extension, whose import
# initialized CUDA in the zygote). First: does each import initialize CUDA? Then the RL
# step with KernelBench-format candidates (AMD's own load_inline files, 64 x 8, cold)
# through kvault serve, and AMD's way on a stratified subset of the same files.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "
import torch, setuptools, torch.utils.hipify.hipify_python
print('after setuptools + hipify: cuda initialized', torch.cuda.is_initialized())
import torch.utils.cpp_extension
print('after torch.utils.cpp_extension: cuda initialized', torch.cuda.is_initialized())" 2>&1 | tail -2
python3 -c "
import torch, setuptools, torch.utils.hipify.hipify_python, sys; sys.exit(1 if torch.cuda.is_initialized() else 0)" \
  || { echo "the preload initializes CUDA: step not run"; exit 1; }
OUT_DIR=$OUT
OUT=/tmp/res timeout 560 bash bench/rl_step/run_step.sh kernelbench > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-kernelbench-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-kernelbench-s0
grep -c "failed to start" $d/serve.log
sed -n '1,45p' $d/summary.md
