"""The 64 tasks of the RL-step benchmark: each one operator, its PyTorch reference,
the math its candidate kernels compute, and the two mistakes its wrong candidates make.

Every entry is a dict with
  name      task name (file stem)
  family    ew1 (x), ew2 (a, b), ewc (x, weight, bias per channel), rowred (x[R, C] ->
            [R]), midred (x[B, R, C] -> [B, C]), rownorm (x[R, C] -> [R, C]), gemm
  torch     the reference's expression (ew*, rowred, midred, rownorm) or body
  dims      {"gpu": ..., "cpu": ...}: sizes; gpu ones make the reference take about
            0.05-0.5 ms on an H200 (134-400 MB moved, or 2-4 GFLOP of fp32 matmul),
            cpu ones keep a CPU dry run short
  tol       (rtol, atol), written into the task's KVAULT_META and used by both sides
  kernel    the math (C expressions valid in CUDA device code and in C++):
            ew*: `expr` of v (x[i]) | a, b | v, wc (weight[c]), bc (bias[c])
            rowred/midred/rownorm: `passes`, a list of (init, map, combine) reduced over
            the reduced dimension in order (r0, r1, ...; `len` is its length as float),
            then `final` (reductions) or `out` (normalisations: of v, r*, len, wc, bc)
            gemm: `epi` of v (the dot product plus bias) and bc (bias[col])
  wrong     the same keys with the wrong math (a wrong constant or a slip), or for
            gemm a flag: "b_batch0" (batch offset of B forgotten)
  offbyone  which pass drops the last element (default: the last pass); elementwise
            kernels shift their index by one instead; gemm drops the last k

Tolerances: the kernels' results differ from PyTorch's only by float rounding and
summation order (a sequential fp32 sum of 1024 heavy-tailed values needs atol 3e-5 at
rtol 1e-4, hence 1e-3 for sums); softmax-like outputs are small, so their atol is small
enough for a missing term of the normalising sum to show.
"""

EW_GPU = [8192, 4096]     # 33.5 M elements: about 80 us for one pass on an H200
EW_CPU = [256, 512]
EW2_GPU = [4096, 8192]
CH_GPU = [32, 64, 16384]  # [N, C, L]
CH_CPU = [4, 16, 1024]
ROW_GPU = [65536, 1024]  # 268 MB: about 70 us to read on an H200
ROW_CPU = [512, 256]
MID_GPU = [256, 1024, 256]
MID_CPU = [8, 128, 64]
DEFAULT_TOL = (1e-4, 1e-4)
SUM_TOL = (1e-4, 1e-3)
SMALL_TOL = (1e-4, 1e-6)
GEMM_TOL = (1e-3, 1e-3)

GELU_ERF = "0.5f * v * (1.0f + erff(v * 0.70710678f))"
GELU_TANH = "0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))"


def ew1(name, torch, expr, wrong, scale=None, dims=None):
    dims = dims or {"gpu": EW_GPU, "cpu": EW_CPU}
    return {"name": name, "family": "ew1", "torch": torch, "dims": dims, "tol": DEFAULT_TOL,
            "input_scale": scale, "kernel": {"expr": expr}, "wrong": {"expr": wrong}}


def ew2(name, torch, expr, wrong):
    return {"name": name, "family": "ew2", "torch": torch, "dims": {"gpu": EW2_GPU, "cpu": EW_CPU},
            "tol": DEFAULT_TOL, "kernel": {"expr": expr}, "wrong": {"expr": wrong}}


def ewc(name, torch, expr, wrong):
    return {"name": name, "family": "ewc", "torch": torch, "dims": {"gpu": CH_GPU, "cpu": CH_CPU},
            "tol": DEFAULT_TOL, "params": ["weight", "bias"], "kernel": {"expr": expr},
            "wrong": {"expr": wrong}}


def red(family, name, torch, passes, final, wrong, tol=DEFAULT_TOL, dims=None, offbyone=None):
    base = {"gpu": ROW_GPU, "cpu": ROW_CPU} if family == "rowred" else {"gpu": MID_GPU, "cpu": MID_CPU}
    kernel = {"passes": passes, "final": final}
    return {"name": name, "family": family, "torch": torch, "dims": dims or base, "tol": tol,
            "kernel": kernel, "wrong": dict(kernel, **wrong),
            "offbyone": len(passes) - 1 if offbyone is None else offbyone}


def norm(name, torch, passes, out, wrong, dims, tol=DEFAULT_TOL, params=()):
    kernel = {"passes": passes, "out": out}
    return {"name": name, "family": "rownorm", "torch": torch, "dims": dims, "tol": tol,
            "params": list(params), "kernel": kernel, "wrong": dict(kernel, **wrong),
            "offbyone": len(passes) - 1}


def gemm(name, kind, torch, epi, wrong, dims, bias=False):
    return {"name": name, "family": "gemm", "gemm": kind, "torch": torch, "dims": dims,
            "tol": GEMM_TOL, "params": ["weight", "bias"] if kind == "linear" else [],
            "bias": bias, "kernel": {"epi": epi}, "wrong": wrong}


SUM = ("0.0f", "v", "add")
SUMSQ = ("0.0f", "v * v", "add")
MAX = ("-INFINITY", "v", "max")
MIN = ("INFINITY", "v", "min")
SUM_EXP = ("0.0f", "expf(v - r0)", "add")
SUM_DEV = ("0.0f", "(v - r0 / len) * (v - r0 / len)", "add")

OPS = [
    # --- elementwise, one input (26) ---
    ew1("relu", "torch.relu(x)", "fmaxf(v, 0.0f)", "fmaxf(v, 0.01f)"),
    ew1("leaky_relu_001", "F.leaky_relu(x, 0.01)", "v > 0.0f ? v : 0.01f * v", "v > 0.0f ? v : 0.1f * v"),
    ew1("leaky_relu_02", "F.leaky_relu(x, 0.2)", "v > 0.0f ? v : 0.2f * v", "v > 0.0f ? v : 0.02f * v"),
    ew1("gelu_erf", "F.gelu(x)", GELU_ERF, "0.5f * v * (1.0f + erff(v * 0.7f))"),
    ew1("gelu_tanh", "F.gelu(x, approximate=\"tanh\")", GELU_TANH, GELU_TANH.replace("0.044715f", "0.44715f")),
    ew1("silu", "F.silu(x)", "v / (1.0f + expf(-v))", "v / (1.0f + expf(-1.702f * v))"),
    ew1("sigmoid", "torch.sigmoid(x)", "1.0f / (1.0f + expf(-v))", "1.0f / (1.0f + expf(-2.0f * v))"),
    ew1("tanh", "torch.tanh(x)", "tanhf(v)", "tanhf(0.5f * v)"),
    ew1("softplus", "F.softplus(x)", "v > 20.0f ? v : log1pf(expf(v))", "v > 2.0f ? v : log1pf(expf(v))"),
    ew1("elu", "F.elu(x)", "v > 0.0f ? v : expm1f(v)", "v > 0.0f ? v : 0.5f * expm1f(v)"),
    ew1("selu", "torch.selu(x)", "1.0507009873554805f * (v > 0.0f ? v : 1.6732632423543772f * expm1f(v))",
        "1.0f * (v > 0.0f ? v : 1.6732632423543772f * expm1f(v))"),
    ew1("hardtanh", "F.hardtanh(x)", "fminf(fmaxf(v, -1.0f), 1.0f)", "fminf(fmaxf(v, -0.5f), 0.5f)"),
    ew1("hardsigmoid", "F.hardsigmoid(x)", "fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f",
        "fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 5.0f", scale=2.0),
    ew1("hardswish", "F.hardswish(x)", "v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f",
        "v * fminf(fmaxf(v + 2.0f, 0.0f), 6.0f) / 6.0f", scale=2.0),
    ew1("mish", "F.mish(x)", "v * tanhf(log1pf(expf(v)))", "v * tanhf(log1pf(expf(0.5f * v)))"),
    ew1("softsign", "F.softsign(x)", "v / (1.0f + fabsf(v))", "v / (2.0f + fabsf(v))"),
    ew1("scale_shift", "x * 0.5 + 0.1", "v * 0.5f + 0.1f", "v * 0.5f + 0.01f"),
    ew1("affine_sigmoid", "torch.sigmoid(x * 2.0 + 1.0)", "1.0f / (1.0f + expf(-(v * 2.0f + 1.0f)))",
        "1.0f / (1.0f + expf(-(v * 2.0f - 1.0f)))"),
    ew1("scaled_clamp", "torch.clamp(x * 3.0, -2.0, 2.0)", "fminf(fmaxf(v * 3.0f, -2.0f), 2.0f)",
        "fminf(fmaxf(v * 3.0f, -2.0f), 1.5f)"),
    ew1("exp_scaled", "torch.exp(x * 0.25)", "expf(v * 0.25f)", "expf(v * 0.3f)"),
    ew1("abs_scale", "x.abs() * 1.5", "fabsf(v) * 1.5f", "fabsf(v) * 1.25f"),
    ew1("gelu_double", "F.gelu(x) * 2.0", "v * (1.0f + erff(v * 0.70710678f))", GELU_ERF),
    ew1("relu6", "F.relu6(x)", "fminf(fmaxf(v, 0.0f), 6.0f)", "fminf(fmaxf(v, 0.0f), 5.0f)", scale=4.0),
    ew1("swish_beta", "x * torch.sigmoid(1.5 * x)", "v / (1.0f + expf(-1.5f * v))", "v / (1.0f + expf(-v))"),
    ew1("logsigmoid", "F.logsigmoid(x)", "fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))",
        "fminf(v, 0.0f) - 0.5f * log1pf(expf(-fabsf(v)))"),
    ew1("tanhshrink", "F.tanhshrink(x)", "v - tanhf(v)", "v - tanhf(0.9f * v)"),
    # --- elementwise, two inputs (8) ---
    ew2("add_half", "(a + b) * 0.5", "(a + b) * 0.5f", "(a + b) * 0.25f"),
    ew2("mul_add", "a * b + a", "a * b + a", "a * b + b"),
    ew2("swiglu", "F.silu(a) * b", "a / (1.0f + expf(-a)) * b", "a / (1.0f + expf(a)) * b"),
    ew2("sigmoid_gate", "a * torch.sigmoid(b)", "a / (1.0f + expf(-b))", "b / (1.0f + expf(-a))"),
    ew2("sq_diff", "(a - b) ** 2", "(a - b) * (a - b)", "(a - b) * (a + b)"),
    ew2("lerp_03", "torch.lerp(a, b, 0.3)", "a + 0.3f * (b - a)", "a + 0.35f * (b - a)"),
    ew2("maximum", "torch.maximum(a, b)", "fmaxf(a, b)", "fmaxf(a, 0.5f * b)"),
    ew2("hypot", "torch.hypot(a, b)", "hypotf(a, b)", "a * a + b * b"),
    # --- per-channel, with parameters (twin: x, weight, bias) (4) ---
    ewc("channel_affine", "x * weight[:, None] + bias[:, None]", "v * wc + bc", "(v + bc) * wc"),
    ewc("channel_affine_relu", "torch.relu(x * weight[:, None] + bias[:, None])",
        "fmaxf(v * wc + bc, 0.0f)", "fmaxf(v * wc, 0.0f) + bc"),
    ewc("channel_gelu", "F.gelu(x * weight[:, None] + bias[:, None])",
        "0.5f * (v * wc + bc) * (1.0f + erff((v * wc + bc) * 0.70710678f))",
        "0.5f * (v * wc + bc) * (1.0f + erff((v * wc + bc) * 0.7f))"),
    ewc("channel_gate", "x * torch.sigmoid(weight)[:, None] + bias[:, None]",
        "v / (1.0f + expf(-wc)) + bc", "v / (1.0f + expf(wc)) + bc"),
    # --- reductions over the last dimension (9) ---
    red("rowred", "row_sum", "x.sum(dim=-1)", [SUM], "r0", {"final": "r0 / len"}, tol=SUM_TOL),
    red("rowred", "row_mean", "x.mean(dim=-1)", [SUM], "r0 / len", {"final": "r0 / 1000.0f"}),
    red("rowred", "row_max", "torch.amax(x, dim=-1)", [MAX], "r0", {"passes": [("-INFINITY", "fabsf(v)", "max")]}),
    red("rowred", "row_min", "torch.amin(x, dim=-1)", [MIN], "r0", {"passes": [("INFINITY", "fabsf(v)", "min")]}),
    red("rowred", "row_l2", "torch.linalg.vector_norm(x, dim=-1)", [SUMSQ], "sqrtf(r0)", {"final": "r0"}),
    red("rowred", "row_meansq", "x.pow(2).mean(dim=-1)", [SUMSQ], "r0 / len", {"final": "sqrtf(r0 / len)"}),
    red("rowred", "row_logsumexp", "torch.logsumexp(x, dim=-1)", [MAX, SUM_EXP], "r0 + logf(r1)",
        {"final": "logf(r1)"}),
    red("rowred", "row_l1", "x.abs().sum(dim=-1)", [("0.0f", "fabsf(v)", "add")], "r0",
        {"passes": [SUM]}, tol=SUM_TOL),
    red("rowred", "row_var", "torch.var(x, dim=-1)", [SUM, SUM_DEV], "r1 / (len - 1.0f)",
        {"final": "r1 / len"}),
    # --- reductions over the middle dimension (4) ---
    red("midred", "mid_sum", "x.sum(dim=1)", [SUM], "r0", {"final": "r0 / len"}, tol=SUM_TOL),
    red("midred", "mid_mean", "x.mean(dim=1)", [SUM], "r0 / len", {"final": "r0 / 1000.0f"}),
    red("midred", "mid_max", "torch.amax(x, dim=1)", [MAX], "r0", {"passes": [("-INFINITY", "fabsf(v)", "max")]}),
    red("midred", "mid_l2", "torch.linalg.vector_norm(x, dim=1)", [SUMSQ], "sqrtf(r0)", {"final": "r0"}),
    # --- row-wise normalisations (8) ---
    norm("softmax_128", "torch.softmax(x, dim=-1)", [MAX, SUM_EXP], "expf(v - r0) / r1",
         {"passes": [MAX, ("0.0f", "expf(v)", "add")]},
         {"gpu": [262144, 128], "cpu": [2048, 128]}, tol=SMALL_TOL),
    norm("softmax_scaled", "torch.softmax(x * 0.5, dim=-1)", [MAX, ("0.0f", "expf(0.5f * (v - r0))", "add")],
         "expf(0.5f * (v - r0)) / r1",
         {"passes": [MAX, ("0.0f", "expf(0.25f * (v - r0))", "add")], "out": "expf(0.25f * (v - r0)) / r1"},
         {"gpu": [131072, 256], "cpu": [1024, 256]}, tol=SMALL_TOL),
    norm("log_softmax", "F.log_softmax(x, dim=-1)", [MAX, SUM_EXP], "v - r0 - logf(r1)", {"out": "v - logf(r1)"},
         {"gpu": [65536, 512], "cpu": [512, 512]}),
    norm("softmin", "F.softmin(x, dim=-1)", [MIN, ("0.0f", "expf(r0 - v)", "add")], "expf(r0 - v) / r1",
         {"passes": [MAX, SUM_EXP], "out": "expf(v - r0) / r1"},
         {"gpu": [131072, 256], "cpu": [1024, 256]}, tol=SMALL_TOL),
    norm("layernorm", "F.layer_norm(x, (x.shape[-1],))", [SUM, SUM_DEV], "(v - r0 / len) / sqrtf(r1 / len + 1e-5f)",
         {"out": "(v - r0 / len) / sqrtf(r1 / (len - 1.0f) + 1e-5f)"}, {"gpu": ROW_GPU, "cpu": ROW_CPU}),
    norm("layernorm_affine", "F.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)", [SUM, SUM_DEV],
         "(v - r0 / len) / sqrtf(r1 / len + 1e-5f) * wc + bc",
         {"out": "(v - r0 / len) / sqrtf(r1 / len + 1e-1f) * wc + bc"},
         {"gpu": [16384, 2048], "cpu": [256, 512]}, params=("weight", "bias")),
    norm("rmsnorm", "x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight", [SUMSQ],
         "v / sqrtf(r0 / len + 1e-6f) * wc", {"out": "v / sqrtf(r0 / len + 1e-2f) * wc"},
         {"gpu": ROW_GPU, "cpu": ROW_CPU}, params=("weight",)),
    norm("l2_normalize", "F.normalize(x, dim=-1)", [SUMSQ], "v / fmaxf(sqrtf(r0), 1e-12f)",
         {"out": "v / fmaxf(r0, 1e-12f)"}, {"gpu": [65536, 512], "cpu": [512, 512]}, tol=SMALL_TOL),
    # --- small matmuls (5) ---
    gemm("linear", "linear", "F.linear(x, weight, bias)", "v", {"epi": "v + bc"},
         {"gpu": [2048, 1024, 1024], "cpu": [64, 128, 128]}, bias=True),
    gemm("linear_relu", "linear", "torch.relu(F.linear(x, weight, bias))", "fmaxf(v, 0.0f)",
         {"epi": "fmaxf(v - bc, 0.0f) + bc"}, {"gpu": [4096, 1024, 512], "cpu": [64, 128, 96]}, bias=True),
    gemm("linear_gelu", "linear", "F.gelu(F.linear(x, weight, bias), approximate=\"tanh\")", GELU_TANH,
         {"epi": GELU_TANH.replace("0.044715f", "0.44715f")},
         {"gpu": [2048, 1024, 1024], "cpu": [64, 96, 128]}, bias=True),
    gemm("matmul_scaled", "matmul", "torch.matmul(a, b) * 0.125", "v * 0.125f", {"epi": "v * 0.25f"},
         {"gpu": [2048, 1024, 1024], "cpu": [64, 128, 96]}),
    gemm("bmm", "bmm", "torch.bmm(a, b)", "v", {"flag": "b_batch0"},
         {"gpu": [64, 256, 512, 256], "cpu": [4, 32, 64, 48]}),
]

assert len(OPS) == 64, len(OPS)
assert len({op["name"] for op in OPS}) == 64
