#pragma once
// KernelVault HIP-on-NVIDIA portability layer: <hip/hip_complex.h> on cuComplex.
#include <hip/hip_runtime.h>
#include <cuComplex.h>

typedef cuFloatComplex hipFloatComplex;
typedef cuDoubleComplex hipDoubleComplex;
typedef cuFloatComplex hipComplex;
#define make_hipFloatComplex make_cuFloatComplex
#define make_hipDoubleComplex make_cuDoubleComplex
#define make_hipComplex make_cuComplex
#define hipCrealf cuCrealf
#define hipCimagf cuCimagf
#define hipConjf cuConjf
#define hipCaddf cuCaddf
#define hipCsubf cuCsubf
#define hipCmulf cuCmulf
#define hipCdivf cuCdivf
#define hipCabsf cuCabsf
#define hipCreal cuCreal
#define hipCimag cuCimag
#define hipConj cuConj
#define hipCadd cuCadd
#define hipCsub cuCsub
#define hipCmul cuCmul
#define hipCdiv cuCdiv
#define hipCabs cuCabs
