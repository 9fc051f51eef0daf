"""Source text of the RL-step benchmark: task files, candidate kernels (CUDA or C++;
native or extension format) and KernelBench-format ModelNew files that build the same
kernel with torch.utils.cpp_extension.load_inline.

A candidate is (op, lang, variant, bug): op from ops.py; lang "cuda" or "cpu"; variant
the launch parameters of the family (threads, items per thread, unroll, tile, lanes);
bug None, "offbyone", "wrong" or "broken:<kind>" (a compile error, BROKEN below). The
kernel ("core": kernels and a `launch_op` function) is the same text in every format;
only the wrapper around it differs.
"""

INPUTS = {"ew1": ["x"], "ew2": ["a", "b"], "ewc": ["x", "weight", "bias"], "rowred": ["x"],
          "midred": ["x"]}
GEMM_INPUTS = {"linear": ["x", "weight", "bias"], "matmul": ["a", "b"], "bmm": ["a", "b"]}

# Compile errors a generated kernel commonly has, inserted as the first statement of
# launch_op; {first} is its first input pointer (const float*).
BROKEN = {
    "undeclared": "const int64_t limit = max_grid_blocks;",
    "semicolon": "const int64_t unused_guard = 0\n  (void)unused_guard;",
    "const_write": "{first}[0] = 0.0f;",
    "no_function": "check_launch_bounds({first});",
    "conversion": "float* scratch = {first};\n  (void)scratch;",
}


BROKEN_MARK = "@BROKEN@"


def inputs_of(op):
    if op["family"] == "gemm":
        return GEMM_INPUTS[op["gemm"]]
    if op["family"] == "rownorm":
        return ["x"] + op["params"]
    return INPUTS[op["family"]]


def math_of(op, bug):
    return op["wrong"] if bug == "wrong" else op["kernel"]


def comb(kind, a, b):
    return {"add": "%s + (%s)" % (a, b), "max": "fmaxf(%s, %s)" % (a, b),
            "min": "fminf(%s, %s)" % (a, b)}[kind]


def ptr_params(op):
    return ", ".join("const float* __restrict__ %s" % n for n in inputs_of(op))


# ---------------------------------------------------------------- task files

def param_init(op, indent="        "):
    """Lines of the Model's (and ModelNew's) __init__ that make its parameters."""
    if op["family"] == "gemm" and op["gemm"] == "linear":
        return [indent + "self.linear = nn.Linear(in_features, out_features)"]
    lines = []
    if "weight" in op.get("params", []):
        # random, not ones: a kernel that ignores the weight must fail
        lines.append(indent + "self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(%s))" % init_arg(op))
    if "bias" in op.get("params", []):
        lines.append(indent + "self.bias = nn.Parameter(0.5 * torch.randn(%s))" % init_arg(op))
    return lines


def init_arg(op):
    return "channels" if op["family"] == "ewc" else "dim"


def init_signature(op):
    if op["family"] == "gemm" and op["gemm"] == "linear":
        return "self, in_features, out_features"
    return "self, %s" % init_arg(op) if op.get("params") else "self"


def param_args(op):
    """The Model's parameters as the twin's arguments."""
    if op["family"] == "gemm" and op["gemm"] == "linear":
        return ["self.linear.weight", "self.linear.bias"]
    return ["self.%s" % p for p in op.get("params", [])]


def task_source(op, index, sizes):
    """The task file (KernelBench format, with KVAULT_META tolerances) at sizes
    "gpu" or "cpu"."""
    fam, dims = op["family"], op["dims"][sizes]
    rtol, atol = op["tol"]
    names = inputs_of(op)
    twin = bool(op.get("params"))
    data = [n for n in names if n not in ("weight", "bias")]
    lines = ['"""RL-step benchmark task %d: %s (fp32, %s sizes)."""' % (index, op["torch"], sizes),
             "import torch", "import torch.nn as nn", "import torch.nn.functional as F", "",
             'KVAULT_META = {"rtol": %r, "atol": %r}' % (rtol, atol)]
    if fam in ("ew1", "ew2", "rowred", "rownorm"):
        lines.append("SHAPE = (%s)" % ", ".join(map(str, dims)))
        scale = " * %r" % op["input_scale"] if op.get("input_scale") else ""
        make = ["torch.randn(*SHAPE)%s" % scale] * len(data)
        init = "[SHAPE[-1]]" if twin else "[]"
    elif fam == "ewc":
        lines.append("N, C, L = %s" % ", ".join(map(str, dims)))
        make, init = ["torch.randn(N, C, L)"], "[C]"
    elif fam == "midred":
        lines.append("B, R, C = %s" % ", ".join(map(str, dims)))
        make, init = ["torch.randn(B, R, C)"], "[]"
    elif op["gemm"] == "bmm":
        lines.append("BATCH, M, K, N = %s" % ", ".join(map(str, dims)))
        make, init = ["torch.randn(BATCH, M, K)", "torch.randn(BATCH, K, N)"], "[]"
    else:
        lines.append("M, K, N = %s" % ", ".join(map(str, dims)))
        if op["gemm"] == "linear":
            make, init = ["torch.randn(M, K)"], "[K, N]"
        else:
            make, init = ["torch.randn(M, K)", "torch.randn(K, N)"], "[]"
    lines.append("")
    if twin:
        lines += ["", "def module_fn(%s):" % ", ".join(names), "    return %s" % op["torch"], ""]
    lines += ["", "class Model(nn.Module):", "    def __init__(%s):" % init_signature(op),
              "        super().__init__()"] + param_init(op) + [""]
    if twin:
        lines += ["    def forward(self, %s, fn=module_fn):" % ", ".join(data),
                  "        return fn(%s)" % ", ".join(data + param_args(op))]
    else:
        lines += ["    def forward(self, %s):" % ", ".join(data), "        return %s" % op["torch"]]
    lines += ["", "", "def get_inputs():", "    return [%s]" % ", ".join(make), "", "",
              "def get_init_inputs():", "    return %s" % init, ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- kernels: CUDA

def cuda_block_reduce(kind):
    identity = {"add": "0.0f", "max": "-INFINITY", "min": "INFINITY"}[kind]
    step = comb(kind, "v", "__shfl_xor_sync(0xffffffffu, v, o)")
    return """__device__ __forceinline__ float block_%(kind)s(float v, float* smem) {
  for (int o = 16; o > 0; o >>= 1) v = %(step)s;
  if (kThreads > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // every thread has read smem of the previous reduction
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < kThreads / 32 ? smem[lane] : %(identity)s;
    for (int o = 16; o > 0; o >>= 1) v = %(step)s;
  }
  return v;
}
""" % {"kind": kind, "step": step, "identity": identity}


def len_decl(math, dim, indent="  "):
    """The declaration of `len` (the reduced length as float), where the math uses it;
    the C++ templates put it right after their first statement's indentation."""
    used = any("len" in str(v) for v in math.values())
    return ("%sconst float len = (float)%s;\n" % (indent, dim) + ("  " if not indent else "")) if used else ""


def norm_output(op, math, loop, idx, indent):
    """The output loop of a row normalisation: out[idx] from v = in[idx] and the
    parameters' elements (wc, bc)."""
    lines = ["float* out = y + row * cols;", "for (%s) {" % loop, "  const float v = in[%s];" % idx]
    lines += ["  const float %s = %s[%s];" % (local, p, idx) for p, local in (("weight", "wc"), ("bias", "bc"))
              if p in op["params"]]
    lines += ["  out[%s] = %s;" % (idx, math["out"]), "}"]
    return "".join(indent + line + "\n" for line in lines)


def unroll(n):
    return "#pragma unroll %d\n" % n if n > 1 else ""


def passes_cuda(math, ob_pass, loop_var, end, load, pragma, reduce):
    """The passes of a reduction: thread-local accumulation over `loop_var` (its end
    one short on pass `ob_pass`), then `reduce(kind, acc)` gives r<k>."""
    out = []
    for k, (init, mapped, kind) in enumerate(math["passes"]):
        stop = "%s - 1" % end if k == ob_pass else end
        acc = "acc%d" % k
        out.append("  float %s = %s;\n" % (acc, init))
        out.append("%s  for (%s) {\n    const float v = %s;\n    %s = %s;\n  }\n"
                   % (pragma, loop_var % stop, load, acc, comb(kind, acc, mapped)))
        out.append("  const float r%d = %s;\n" % (k, reduce(kind, acc)))
    return "".join(out)


def core_cuda(op, variant, bug):
    fam, name, math = op["family"], op["name"], math_of(op, bug)
    ob = bug == "offbyone"
    if fam in ("ew1", "ew2", "ewc"):
        return ew_cuda(op, variant, math, ob)
    if fam in ("rowred", "rownorm"):
        return row_cuda(op, variant, math, ob)
    if fam == "midred":
        return mid_cuda(op, variant, math, ob)
    return gemm_cuda(op, variant, math, ob)


def ew_args(fam):
    return {"ew1": ("float v", "x[i]"), "ew2": ("float a, float b", "a[i], b[i]"),
            "ewc": ("float v, float wc, float bc", "x[i], weight[(i / L) % C], bias[(i / L) % C]")}[fam]


def ew_cuda(op, variant, math, ob):
    fam, name = op["family"], op["name"]
    args, call = ew_args(fam)
    extra = ", int64_t C, int64_t L" if fam == "ewc" else ""
    shift = " + 1" if ob else ""
    target = "y[i - 1]" if ob else "y[i]"
    names = inputs_of(op)
    return """constexpr int kThreads = %(t)d;
constexpr int kItems = %(items)d;

__device__ __forceinline__ float apply_op(%(args)s) { return %(expr)s; }

__global__ void __launch_bounds__(kThreads) %(name)s_kernel(%(ptrs)s, float* __restrict__ y,
                                                         int64_t n%(extra)s) {
  const int64_t stride = (int64_t)gridDim.x * kThreads * kItems;
  for (int64_t base = (int64_t)blockIdx.x * kThreads * kItems + threadIdx.x; base < n; base += stride) {
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int64_t i = base + (int64_t)u * kThreads%(shift)s;
      if (i < n) %(target)s = apply_op(%(call)s);
    }
  }
}

static void launch_op(%(cptrs)s, float* y, int64_t n%(extra)s, cudaStream_t stream) {
  %(broken)sif (n <= 0) return;
  int64_t blocks = (n + (int64_t)kThreads * kItems - 1) / ((int64_t)kThreads * kItems);
  if (blocks > 1048576) blocks = 1048576;  // the grid-stride loop covers the rest
  %(name)s_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(%(names)s, y, n%(extra_names)s);
}
""" % {"t": variant["threads"], "items": variant["items"], "args": args, "expr": math["expr"],
       "name": name, "ptrs": ptr_params(op), "extra": extra, "shift": shift, "target": target,
       "call": call, "cptrs": const_ptrs(op), "broken": BROKEN_MARK,
       "names": ", ".join(names), "extra_names": ", C, L" if fam == "ewc" else ""}


def const_ptrs(op):
    return ", ".join("const float* %s" % n for n in inputs_of(op))


def row_cuda(op, variant, math, ob):
    fam, name = op["family"], op["name"]
    kinds = sorted({p[2] for p in math["passes"]})
    body = passes_cuda(math, op["offbyone"] if ob else -1,
                       "int64_t c = threadIdx.x; c < %s; c += kThreads", "cols", "in[c]",
                       unroll(variant["unroll"]), lambda kind, acc: "block_%s(%s, smem)" % (kind, acc))
    if fam == "rowred":
        finish = "  if (threadIdx.x == 0) y[row] = %s;\n" % math["final"]
    else:
        finish = norm_output(op, math, "int64_t c = threadIdx.x; c < cols; c += kThreads", "c", "  ")
    names = inputs_of(op)
    return """constexpr int kThreads = %(t)d;

%(reducers)s
__global__ void __launch_bounds__(kThreads) %(name)s_kernel(%(ptrs)s, float* __restrict__ y,
                                                         int64_t cols) {
  __shared__ float smem[32];
  const int64_t row = blockIdx.x;
  const float* in = x + row * cols;
%(len)s%(body)s%(finish)s}

static void launch_op(%(cptrs)s, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  %(broken)sif (rows <= 0 || cols <= 0) return;
  %(name)s_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(%(names)s, y, cols);
}
""" % {"t": variant["threads"], "reducers": "\n".join(cuda_block_reduce(k) for k in kinds),
       "name": name, "ptrs": ptr_params(op), "body": body, "finish": finish, "len": len_decl(math, "cols"),
       "cptrs": const_ptrs(op), "broken": BROKEN_MARK, "names": ", ".join(names)}


def mid_cuda(op, variant, math, ob):
    name = op["name"]
    body = passes_cuda(math, op["offbyone"] if ob else -1, "int64_t r = 0; r < %s; ++r", "R", "in[r * C]",
                       unroll(variant["unroll"]), lambda kind, acc: acc)
    return """constexpr int kThreads = %(t)d;

__global__ void __launch_bounds__(kThreads) %(name)s_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                         int64_t B, int64_t R, int64_t C) {
  const int64_t o = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  if (o >= B * C) return;
  const float* in = x + (o / C) * R * C + (o %% C);
%(len)s%(body)s  y[o] = %(final)s;
}

static void launch_op(const float* x, float* y, int64_t B, int64_t R, int64_t C, cudaStream_t stream) {
  %(broken)sif (B * C <= 0 || R <= 0) return;
  const int64_t blocks = (B * C + kThreads - 1) / kThreads;
  %(name)s_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(x, y, B, R, C);
}
""" % {"t": variant["threads"], "name": name, "body": body, "final": math["final"], "broken": BROKEN_MARK,
       "len": len_decl(math, "R")}


def gemm_cuda(op, variant, math, ob):
    name, kind = op["name"], op["gemm"]
    kend = "K - 1" if ob else "K"
    if kind == "linear":  # b is the weight [N, K]; the tile is stored as bs[k][n]
        load_b = "bs[tx][ty] = (col0 + ty < N && k0 + tx < %s) ? b[(col0 + ty) * K + k0 + tx] : 0.0f;" % kend
    else:                 # b is [K, N]
        load_b = "bs[ty][tx] = (k0 + ty < %s && col < N) ? b[(k0 + ty) * N + col] : 0.0f;" % kend
    batch = ""
    if kind == "bmm":
        batch = "  a += (int64_t)blockIdx.z * M * K;\n"
        if math.get("flag") != "b_batch0":
            batch += "  b += (int64_t)blockIdx.z * K * N;\n"
        batch += "  y += (int64_t)blockIdx.z * M * N;\n"
    epi = math.get("epi", op["kernel"]["epi"])
    if op["bias"]:
        result = "    const float bc = bias[col];\n    const float v = acc + bc;\n"
    else:
        result = "    const float v = acc;\n"
    return """constexpr int kTile = %(tile)d;

__global__ void __launch_bounds__(kTile * kTile) %(name)s_kernel(
    const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ bias,
    float* __restrict__ y, int64_t M, int64_t N, int64_t K) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = (int64_t)blockIdx.y * kTile + ty;
  const int64_t col = (int64_t)blockIdx.x * kTile + tx;
  const int64_t col0 = (int64_t)blockIdx.x * kTile;
  (void)bias;
  (void)col0;
%(batch)s  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    as[ty][tx] = (row < M && k0 + tx < %(kend)s) ? a[row * K + k0 + tx] : 0.0f;
    %(load_b)s
    __syncthreads();
%(unroll)s    for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
    __syncthreads();
  }
  if (row < M && col < N) {
%(result)s    y[row * N + col] = %(epi)s;
  }
}

static void launch_op(const float* a, const float* b, const float* bias, float* y, int64_t batch,
                      int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  %(broken)sif (batch <= 0 || M <= 0 || N <= 0) return;
  const dim3 block(kTile, kTile);
  const dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile), (unsigned)batch);
  %(name)s_kernel<<<grid, block, 0, stream>>>(a, b, bias, y, M, N, K);
}
""" % {"tile": variant["tile"], "name": name, "batch": batch, "kend": kend, "load_b": load_b,
       "unroll": unroll(variant["unroll"]), "result": result, "epi": epi, "broken": BROKEN_MARK}


# ---------------------------------------------------------------- kernels: C++ (CPU)

def passes_cpu(math, ob_pass, end, load, indent):
    out = []
    for k, (init, mapped, kind) in enumerate(math["passes"]):
        stop = "%s - 1" % end if k == ob_pass else end
        slot = "part%d[i %% kLanes]" % k
        out += ["float part%d[kLanes];" % k,
                "for (int l = 0; l < kLanes; ++l) part%d[l] = %s;" % (k, init),
                "for (int64_t i = 0; i < %s; ++i) {" % stop,
                "  const float v = %s;" % load,
                "  %s = %s;" % (slot, comb(kind, slot, mapped)),
                "}",
                "float r%d = part%d[0];" % (k, k),
                "for (int l = 1; l < kLanes; ++l) r%d = %s;" % (k, comb(kind, "r%d" % k, "part%d[l]" % k))]
    return "".join(indent + line + "\n" for line in out)


def core_cpu(op, variant, bug):
    fam, name, math = op["family"], op["name"], math_of(op, bug)
    ob = bug == "offbyone"
    if fam in ("ew1", "ew2", "ewc"):
        args, call = ew_args(fam)
        extra = ", int64_t C, int64_t L" if fam == "ewc" else ""
        loop = ("for (int64_t i = base + 1; i <= end && i < n; ++i) y[i - 1] = apply_op(%s);" if ob
                else "for (int64_t i = base; i < end; ++i) y[i] = apply_op(%s);") % call
        return """constexpr int64_t kChunk = %(chunk)d;

static inline float apply_op(%(args)s) { return %(expr)s; }

static void launch_op(%(cptrs)s, float* y, int64_t n%(extra)s) {
  %(broken)sfor (int64_t base = 0; base < n; base += kChunk) {
    const int64_t end = base + kChunk < n ? base + kChunk : n;
    %(loop)s
  }
}
""" % {"chunk": variant["chunk"], "args": args, "expr": math["expr"], "cptrs": const_ptrs(op),
       "extra": extra, "loop": loop, "broken": BROKEN_MARK}
    if fam in ("rowred", "rownorm"):
        body = passes_cpu(math, op["offbyone"] if ob else -1, "cols", "in[i]", "    ")
        if fam == "rowred":
            finish = "    y[row] = %s;\n" % math["final"]
        else:
            finish = norm_output(op, math, "int64_t i = 0; i < cols; ++i", "i", "    ")
        return """constexpr int kLanes = %(lanes)d;

static void launch_op(%(cptrs)s, float* y, int64_t rows, int64_t cols) {
  %(broken)s%(len)sfor (int64_t row = 0; row < rows; ++row) {
    const float* in = x + row * cols;
%(body)s%(finish)s  }
}
""" % {"lanes": variant["lanes"], "cptrs": const_ptrs(op), "body": body, "finish": finish,
       "broken": BROKEN_MARK, "len": len_decl(math, "cols", "")}
    if fam == "midred":
        body = passes_cpu(math, op["offbyone"] if ob else -1, "R", "in[i * C]", "    ")
        return """constexpr int kLanes = %(lanes)d;

static void launch_op(const float* x, float* y, int64_t B, int64_t R, int64_t C) {
  %(broken)s%(len)sfor (int64_t o = 0; o < B * C; ++o) {
    const float* in = x + (o / C) * R * C + (o %% C);
%(body)s    y[o] = %(final)s;
  }
}
""" % {"lanes": variant["lanes"], "body": body, "final": math["final"], "broken": BROKEN_MARK,
       "len": len_decl(math, "R", "")}
    kind = op["gemm"]
    kend = "K - 1" if ob else "K"
    bval = "bz[n * K + k]" if kind == "linear" else "bz[k * N + n]"
    boff = "b" if math.get("flag") == "b_batch0" else "b + z * K * N"
    result = ("      const float bc = bias[n];\n      const float v = acc + bc;\n" if op["bias"]
              else "      const float v = acc;\n")
    return """constexpr int kLanes = %(lanes)d;

static void launch_op(const float* a, const float* b, const float* bias, float* y, int64_t batch,
                      int64_t M, int64_t N, int64_t K) {
  %(broken)s(void)bias;
  for (int64_t z = 0; z < batch; ++z) {
    const float* az = a + z * M * K;
    const float* bz = %(boff)s;
    float* yz = y + z * M * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
      float part[kLanes] = {0.0f};
      for (int64_t k = 0; k < %(kend)s; ++k) part[k %% kLanes] += az[m * K + k] * %(bval)s;
      float acc = 0.0f;
      for (int l = 0; l < kLanes; ++l) acc += part[l];
%(result)s      yz[m * N + n] = %(epi)s;
    }
  }
}
""" % {"lanes": variant["lanes"], "boff": boff, "kend": kend, "bval": bval, "result": result,
       "epi": math.get("epi", op["kernel"]["epi"]), "broken": BROKEN_MARK}


# ---------------------------------------------------------------- wrappers

def dims_native(op):
    """(C statements from kv_tensor inputs, launch_op dimension arguments)."""
    fam = op["family"]
    if fam in ("ew1", "ew2"):
        return "const int64_t n = inputs[0].numel;", "n"
    if fam == "ewc":
        return ("const int64_t n = inputs[0].numel, C = inputs[0].shape[1], L = inputs[0].shape[2];",
                "n, C, L")
    if fam in ("rowred", "rownorm"):
        return ("const int64_t cols = inputs[0].ndim > 0 ? inputs[0].shape[inputs[0].ndim - 1] : 1;\n"
                "  const int64_t rows = cols > 0 ? inputs[0].numel / cols : 0;", "rows, cols")
    if fam == "midred":
        return ("const int64_t B = inputs[0].shape[0], R = inputs[0].shape[1], C = inputs[0].shape[2];",
                "B, R, C")
    if op["gemm"] == "linear":
        return ("const int64_t M = inputs[0].shape[0], K = inputs[0].shape[1], N = inputs[1].shape[0];",
                "1, M, N, K")
    if op["gemm"] == "matmul":
        return ("const int64_t M = inputs[0].shape[0], K = inputs[0].shape[1], N = inputs[1].shape[1];",
                "1, M, N, K")
    return ("const int64_t batch = inputs[0].shape[0], M = inputs[0].shape[1], K = inputs[0].shape[2],\n"
            "                N = inputs[1].shape[2];", "batch, M, N, K")


def dims_ext(op):
    """(C++ statements from the contiguous tensors <name>_c, output sizes, dimension args)."""
    fam = op["family"]
    first = inputs_of(op)[0] + "_c"
    if fam in ("ew1", "ew2"):
        return "const int64_t n = %s.numel();" % first, "%s.sizes()" % first, "n"
    if fam == "ewc":
        return ("const int64_t n = x_c.numel(), C = x_c.size(1), L = x_c.size(2);", "x_c.sizes()", "n, C, L")
    if fam == "rowred":
        return ("const int64_t cols = x_c.dim() > 0 ? x_c.size(-1) : 1;\n"
                "  const int64_t rows = cols > 0 ? x_c.numel() / cols : 0;\n"
                "  const std::vector<int64_t> out_sizes(x_c.sizes().begin(), x_c.sizes().end() - 1);",
                "out_sizes", "rows, cols")
    if fam == "rownorm":
        return ("const int64_t cols = x_c.dim() > 0 ? x_c.size(-1) : 1;\n"
                "  const int64_t rows = cols > 0 ? x_c.numel() / cols : 0;", "x_c.sizes()", "rows, cols")
    if fam == "midred":
        return ("const int64_t B = x_c.size(0), R = x_c.size(1), C = x_c.size(2);", "{B, C}", "B, R, C")
    if op["gemm"] == "linear":
        return ("const int64_t M = x_c.size(0), K = x_c.size(1), N = weight_c.size(0);", "{M, N}",
                "1, M, N, K")
    if op["gemm"] == "matmul":
        return ("const int64_t M = a_c.size(0), K = a_c.size(1), N = b_c.size(1);", "{M, N}", "1, M, N, K")
    return ("const int64_t batch = a_c.size(0), M = a_c.size(1), K = a_c.size(2), N = b_c.size(2);",
            "{batch, M, N}", "batch, M, N, K")


def launch_ptrs(op, fmt):
    names = inputs_of(op)
    if fmt == "native":
        ptrs = ["(const float*)inputs[%d].data" % i for i in range(len(names))]
    else:
        ptrs = ["%s_c.data_ptr<float>()" % n for n in names]
    if op["family"] == "gemm" and op["gemm"] != "linear":
        ptrs.append("nullptr")
    return ", ".join(ptrs)


def native_wrapper(op, lang):
    dims, args = dims_native(op)
    n = len(inputs_of(op))
    stream = ", (cudaStream_t)stream" if lang == "cuda" else ""
    result = ("  return cudaGetLastError() == cudaSuccess ? 0 : 3;" if lang == "cuda"
              else "  (void)stream;\n  return 0;")
    return """
extern "C" int kvault_forward(const kv_tensor* inputs, int num_inputs, const kv_scalar* scalars,
                              int num_scalars, kv_tensor* outputs, int num_outputs, void* stream) {
  (void)scalars;
  (void)num_scalars;
  if (num_inputs != %(n)d || num_outputs != 1) return 1;
  for (int i = 0; i < num_inputs; ++i)
    if (inputs[i].dtype != KV_FLOAT32) return 2;
  %(dims)s
  launch_op(%(ptrs)s, (float*)outputs[0].data, %(args)s%(stream)s);
%(result)s
}
""" % {"n": n, "dims": dims, "ptrs": launch_ptrs(op, "native"), "args": args, "stream": stream,
       "result": result}


def ext_forward(op, lang):
    names = inputs_of(op)
    dims, sizes, args = dims_ext(op)
    first = names[0]
    checks = []
    if lang == "cuda":
        checks.append('TORCH_CHECK(%s.is_cuda(), "%s: CUDA tensors expected");' % (first, op["name"]))
    checks.append('TORCH_CHECK(%s.scalar_type() == torch::kFloat32, "%s: float32 expected");'
                  % (first, op["name"]))
    if lang == "cuda":
        checks.append("const c10::cuda::CUDAGuard device_guard(%s.device());" % first)
    conts = ["const auto %s_c = %s.contiguous();" % (n, n) for n in names]
    stream = ", at::cuda::getCurrentCUDAStream()" if lang == "cuda" else ""
    launch_check = "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n" if lang == "cuda" else ""
    return """
torch::Tensor forward(%(params)s) {
  %(checks)s
  %(dims)s
  auto y = torch::empty(%(sizes)s, %(first)s_c.options());
  if (y.numel() > 0) launch_op(%(ptrs)s, y.data_ptr<float>(), %(args)s%(stream)s);
%(launch_check)s  return y;
}
""" % {"params": ", ".join("torch::Tensor %s" % n for n in names),
       "checks": "\n  ".join(checks + conts), "dims": dims, "sizes": sizes, "first": first,
       "ptrs": launch_ptrs(op, "extension"), "args": args, "stream": stream, "launch_check": launch_check}


def forward_declaration(op):
    return "torch::Tensor forward(%s);" % ", ".join("torch::Tensor %s" % n for n in inputs_of(op))


def includes(lang, fmt):
    if fmt == "native":
        base = ["<cuda_runtime.h>"] if lang == "cuda" else []
        return base + ["<kvault/native.h>", "<math.h>", "<stdint.h>"]
    if lang == "cuda":
        return ["<torch/extension.h>", "<ATen/cuda/CUDAContext.h>", "<c10/cuda/CUDAGuard.h>",
                "<cuda_runtime.h>", "<math.h>", "<stdint.h>", "<vector>"]
    return ["<torch/extension.h>", "<math.h>", "<stdint.h>", "<vector>"]


def core(op, lang, variant, bug):
    text = core_cuda(op, variant, bug) if lang == "cuda" else core_cpu(op, variant, bug)
    broken = ""
    if bug and bug.startswith("broken:"):
        first = "a" if op["family"] == "gemm" else inputs_of(op)[0]  # launch_op's first pointer
        broken = BROKEN[bug.split(":", 1)[1]].format(first=first) + "\n  "
    assert text.count(BROKEN_MARK) == 1
    return text.replace(BROKEN_MARK, broken)


def candidate_source(op, lang, fmt, variant, bug, header):
    """A kvault candidate: `fmt` "native" or "extension" ("inline": the extension source
    without its binding, for load_inline's cuda_sources / cpp_sources)."""
    lines = ["// " + h for h in header] + ["#include %s" % i for i in includes(lang, "native" if fmt == "native" else "extension")]
    text = "\n".join(lines) + "\n\n" + core(op, lang, variant, bug)
    if fmt == "native":
        return text + native_wrapper(op, lang)
    text += ext_forward(op, lang)
    if fmt == "extension":
        text += '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "%s"); }\n' % op["name"]
    return text


def amd_source(op, lang, variant, bug, header, module_name):
    """The KernelBench-format candidate: ModelNew with the Model's constructor,
    calling the same kernel built by load_inline at import."""
    source = candidate_source(op, lang, "inline", variant, bug, header)
    assert "'''" not in source and not source.endswith("\\")
    if lang == "cuda":
        build = ("load_inline(name=%r, cpp_sources=CPP_SOURCE, cuda_sources=KERNEL_SOURCE,\n"
                 "                   functions=[\"forward\"], extra_cuda_cflags=[\"-O3\"], verbose=False)"
                 % module_name)
        cpp = repr(forward_declaration(op))
    else:
        build = ("load_inline(name=%r, cpp_sources=KERNEL_SOURCE, functions=[\"forward\"],\n"
                 "                   extra_cflags=[\"-O3\"], verbose=False)" % module_name)
        cpp = "None"
    data = [n for n in inputs_of(op) if n not in ("weight", "bias")]
    call = ", ".join(data + param_args(op))
    return '''"""%(title)s

KernelBench-format candidate: the kernel is built with torch.utils.cpp_extension.load_inline
when this file is imported. Generated by bench/rl_step/make_step.py."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r\'\'\'
%(source)s\'\'\'

CPP_SOURCE = %(cpp)s

_ext = %(build)s


class ModelNew(nn.Module):
    def __init__(%(sig)s):
        super().__init__()
%(params)s
    def forward(self, %(data)s):
        return _ext.forward(%(call)s)
''' % {"title": header[0], "source": source, "cpp": cpp, "build": build, "sig": init_signature(op),
       "params": "".join(line + "\n" for line in param_init(op)), "data": ", ".join(data), "call": call}
