#pragma once
// The lite extension build's stand-in for PyTorch's <c10/cuda/CUDAStream.h> (kvault_lite/cuda_api.h).
#include "kvault_lite/cuda_api.h"
