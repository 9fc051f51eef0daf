#pragma once
// The lite extension build's stand-in for PyTorch's <ATen/Parallel.h> (kvault_lite/api.h,
// kvault_lite/parallel.h).
#include "kvault_lite/api.h"
