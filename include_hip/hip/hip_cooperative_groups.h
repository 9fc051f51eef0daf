#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_cooperative_groups.h>.
// HIP's cooperative groups use CUDA's namespace and names (this_thread_block,
// tiled_partition, thread_block_tile, this_grid().sync(), ...). Grid-wide sync needs
// a launch through hipLaunchCooperativeKernel.
#include <hip/hip_runtime.h>
#include <cooperative_groups.h>
