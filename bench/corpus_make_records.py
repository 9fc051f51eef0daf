#!/usr/bin/env python3
"""Synthetic kernel records for the corpus benchmark (bench/corpus_bench.sh).

Writes, under OUT:
  records.jsonl   N records in the vault's record JSON (docs/corpus.md, "Record JSON")
  suite/levelK/   the benchmark suite: KernelBench-style task files
  truth.json      what was planted: exact and near duplicate groups, contaminated records

Records are variants of kernels built the way real ones are: an index computation,
loads, a chain of arithmetic statements, stores, a launcher; in HIP, CUDA, Triton and
KernelBench (ModelNew + load_inline) forms. Planted, at the rates given:
  exact duplicates: a base kernel with its own identifiers renamed, comments and
                    whitespace changed (same normalised source)
  near duplicates:  a base kernel with one constant changed, two independent
                    statements swapped, or one statement added (and names renamed)
  contaminated:     a record whose task is a benchmark task with its variables renamed
                    and its independent lines reordered
Deterministic for a given --seed.
"""
import argparse
import hashlib
import json
import os
import random
import struct

UNARY = ["expf({a})", "tanhf({a})", "fabsf({a})", "sqrtf(fabsf({a}) + {c})", "rsqrtf({a} * {a} + {c})",
         "logf(1.0f + fabsf({a}))", "sinf({a})", "cosf({a})", "fmaxf({a}, {c})", "fminf({a}, {c})",
         "1.0f / (1.0f + expf(-{a}))", "{a} * {c}", "{a} + {c}", "{a} - {c}", "erff({a} * {c})"]
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "fmaxf({a}, {b})", "fminf({a}, {b})", "{a} * {c} + {b}",
          "({a} + {b}) * {c}", "{a} / (fabsf({b}) + {c})"]
TL_UNARY = ["tl.exp({a})", "tl.abs({a})", "tl.sqrt(tl.abs({a}) + {c})", "tl.maximum({a}, {c})",
            "tl.minimum({a}, {c})", "tl.sigmoid({a})", "{a} * {c}", "{a} + {c}", "{a} - {c}",
            "tl.log(1.0 + tl.abs({a}))", "tl.sin({a})", "tl.cos({a})"]
TL_BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "tl.maximum({a}, {b})", "tl.minimum({a}, {b})",
             "{a} * {c} + {b}", "({a} + {b}) * {c}"]
WORDS = ["acc", "val", "tmp", "res", "out", "x", "y", "z", "h", "g", "p", "q", "r", "s", "t", "u", "w",
         "alpha", "beta", "gamma", "delta", "sum", "prod", "scale", "shift", "bias", "norm", "act"]
TORCH_OPS = ["torch.relu(x)", "torch.sigmoid(x)", "torch.tanh(x)", "torch.nn.functional.gelu(x)",
             "torch.softmax(x, dim=1)", "x * self.scale", "x + self.shift", "torch.clamp(x, min=-1.0, max=1.0)",
             "torch.abs(x)", "torch.exp(x)", "x.sum(dim=1, keepdim=True)", "x.mean(dim=1, keepdim=True)",
             "torch.log1p(torch.abs(x))", "torch.square(x)", "torch.nn.functional.silu(x)"]


def const(rng):
    return f"{rng.uniform(0.01, 4.0):.4f}"


class Names:
    """Fresh identifiers: the style of one author (prefix/suffix), distinct within a kernel."""

    def __init__(self, rng):
        self.rng = rng
        self.style = rng.choice(["", "_", "my_", "k_", "v"])
        self.used = set()

    def fresh(self, hint):
        while True:
            n = f"{self.style}{hint}{self.rng.randint(0, 99) if self.rng.random() < 0.5 else ''}"
            if n not in self.used and n[0] != "_" or (n not in self.used and self.style == "_"):
                self.used.add(n)
                return n


def program(rng, n_stmts, unary, binary, fmt_const):
    """A chain of statements t_j = f(earlier values); returns [(target, expr-template)]."""
    stmts = []
    for j in range(n_stmts):
        avail = ["IN"] + [f"T{k}" for k in range(j)]
        if rng.random() < 0.45 or j == 0:
            e = rng.choice(unary).replace("{a}", rng.choice(avail[-3:])).replace("{c}", fmt_const(rng))
        else:
            e = rng.choice(binary).replace("{a}", rng.choice(avail[-3:])).replace("{b}", rng.choice(avail)).replace("{c}", fmt_const(rng))
        stmts.append((f"T{j}", e))
    return stmts


def independent_swap(stmts):
    """Indices (i, i+1) of two adjacent statements where the second does not read the first."""
    for i in range(len(stmts) - 1):
        if stmts[i][0] not in stmts[i + 1][1].replace("(", " ").replace(")", " ").replace(",", " ").split():
            return i
    return None


class Kernel:
    """A base kernel: its language and the choices that render it."""

    def __init__(self, rng, lang, task):
        self.lang = lang
        self.task = task
        self.block = rng.choice([64, 128, 256, 512, 1024])
        self.grid_stride = rng.random() < 0.5
        self.stmts = program(rng, rng.randint(7, 14), TL_UNARY if lang == "triton" else UNARY,
                             TL_BINARY if lang == "triton" else BINARY,
                             (lambda r: f"{r.uniform(0.01, 4.0):.4f}") if lang == "triton" else (lambda r: const(r) + "f"))
        self.kname = rng.choice(["fused", "ew", "op", "kernel", "apply", "map"]) + "_" + rng.choice(WORDS)

    def render(self, rng, comments=True, indent=4):
        names = Names(rng)
        env = {f"T{j}": names.fresh(rng.choice(WORDS)) for j in range(len(self.stmts))}
        io = {k: names.fresh(k) for k in ["x", "y", "n", "i", "v"]}
        env["IN"] = io["v"]
        body = []
        for target, e in self.stmts:
            for k in sorted(env, key=lambda s: -len(s)):
                e = e.replace(k, "\0" + k + "\0")
            for k, v in env.items():
                e = e.replace("\0" + k + "\0", v)
            body.append((env[target], e))
        if self.lang == "triton":
            return self.render_triton(rng, names, io, body, comments, indent)
        if self.lang == "kernelbench":
            return self.render_kernelbench(rng, io, body, comments, indent)
        return self.render_c(rng, io, body, comments, indent)

    def c_kernel(self, io, body, comments, ind):
        p = " " * ind
        lines = []
        if comments:
            lines.append(f"// {self.kname}: fused elementwise chain of {len(body)} steps")
        lines.append(f"__global__ void {self.kname}(const float* __restrict__ {io['x']}, float* __restrict__ {io['y']}, int {io['n']}) {{")
        if self.grid_stride:
            lines.append(f"{p}for (int {io['i']} = blockIdx.x * blockDim.x + threadIdx.x; {io['i']} < {io['n']}; {io['i']} += blockDim.x * gridDim.x) {{")
        else:
            lines.append(f"{p}int {io['i']} = blockIdx.x * blockDim.x + threadIdx.x;")
            lines.append(f"{p}if ({io['i']} < {io['n']}) {{")
        lines.append(f"{p}{p}float {io['v']} = {io['x']}[{io['i']}];")
        for t, e in body:
            lines.append(f"{p}{p}float {t} = {e};")
        lines.append(f"{p}{p}{io['y']}[{io['i']}] = {body[-1][0]};")
        lines.append(f"{p}}}")
        lines.append("}")
        return lines

    def render_c(self, rng, io, body, comments, ind):
        p = " " * ind
        header = "#include <hip/hip_runtime.h>" if self.lang == "hip" else "#include <cuda_runtime.h>"
        lines = [header, "#include <torch/extension.h>", ""]
        lines += self.c_kernel(io, body, comments, ind)
        launch = (f"hipLaunchKernelGGL({self.kname}, dim3(blocks), dim3({self.block}), 0, 0, "
                  if self.lang == "hip" else f"{self.kname}<<<blocks, {self.block}>>>(")
        lines += ["", "torch::Tensor forward(torch::Tensor input) {",
                  f"{p}auto output = torch::empty_like(input);",
                  f"{p}int total = input.numel();",
                  f"{p}int blocks = (total + {self.block - 1}) / {self.block};",
                  f"{p}{launch}input.data_ptr<float>(), output.data_ptr<float>(), total);",
                  f"{p}return output;", "}", "",
                  'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "forward"); }']
        return "\n".join(lines) + "\n"

    def render_triton(self, rng, names, io, body, comments, ind):
        p = " " * ind
        lines = ["import torch", "import triton", "import triton.language as tl", "", "", "@triton.jit",
                 f"def {self.kname}({io['x']}, {io['y']}, {io['n']}, BLOCK: tl.constexpr):"]
        if comments:
            lines.append(f'{p}"""Fused elementwise chain of {len(body)} steps."""')
        lines += [f"{p}pid = tl.program_id(0)", f"{p}{io['i']} = pid * BLOCK + tl.arange(0, BLOCK)",
                  f"{p}mask = {io['i']} < {io['n']}", f"{p}{io['v']} = tl.load({io['x']} + {io['i']}, mask=mask)"]
        for t, e in body:
            lines.append(f"{p}{t} = {e}")
        lines += [f"{p}tl.store({io['y']} + {io['i']}, {body[-1][0]}, mask=mask)", "", "",
                  "class ModelNew(torch.nn.Module):", f"{p}def forward(self, x):",
                  f"{p}{p}out = torch.empty_like(x)", f"{p}{p}n = x.numel()",
                  f"{p}{p}grid = (triton.cdiv(n, {self.block}),)",
                  f"{p}{p}{self.kname}[grid](x, out, n, BLOCK={self.block})", f"{p}{p}return out"]
        return "\n".join(lines) + "\n"

    def render_kernelbench(self, rng, io, body, comments, ind):
        p = " " * ind
        src = "\n".join(self.c_kernel(io, body, comments, 2))
        lines = ["import torch", "import torch.nn as nn", "from torch.utils.cpp_extension import load_inline", "",
                 f'cuda_source = """\n#include <torch/extension.h>\n{src}\n',
                 "torch::Tensor launch(torch::Tensor x) {", "  auto y = torch::empty_like(x);",
                 f"  int n = x.numel();", f"  {self.kname}<<<(n + {self.block - 1}) / {self.block}, {self.block}>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
                 "  return y;", '}\n"""', "",
                 'cpp_source = "torch::Tensor launch(torch::Tensor x);"',
                 f'module = load_inline(name="{self.kname}", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["launch"])',
                 "", "", "class ModelNew(nn.Module):", f"{p}def __init__(self):", f"{p}{p}super().__init__()", "",
                 f"{p}def forward(self, x):", f"{p}{p}return module.launch(x)"]
        return "\n".join(lines) + "\n"

    def near_variant(self, rng):
        """A copy with one change: a constant, a swap of independent statements, or one more step."""
        other = Kernel.__new__(Kernel)
        other.__dict__ = dict(self.__dict__)
        other.stmts = list(self.stmts)
        kind = rng.choice(["constant", "swap", "insert"])
        if kind == "swap":
            i = independent_swap(other.stmts)
            if i is None:
                kind = "constant"
            else:
                other.stmts[i], other.stmts[i + 1] = other.stmts[i + 1], other.stmts[i]
        if kind == "insert":
            j = rng.randrange(1, len(other.stmts))
            t = other.stmts[j - 1][0]
            extra = ("tl.maximum({a}, {c})" if self.lang == "triton" else "fmaxf({a}, {c})").replace("{a}", t).replace(
                "{c}", f"{rng.uniform(0.01, 1):.4f}" + ("" if self.lang == "triton" else "f"))
            # the new step overwrites nothing: it feeds the next statement through a new name
            other.stmts.insert(j, (f"T{len(other.stmts)}", extra))
        if kind == "constant":
            j = rng.randrange(len(other.stmts))
            t, e = other.stmts[j]
            import re
            m = list(re.finditer(r"\d+\.\d{4}", e))
            if m:
                c = m[0]
                e = e[:c.start()] + f"{rng.uniform(0.01, 4.0):.4f}" + e[c.end():]
            else:
                other.block = self.block * 2 if self.block < 1024 else 128
            other.stmts[j] = (t, e)
        return other, kind


# ---- tasks ----

def make_task(rng, level):
    n_ops = rng.randint(1, 4)
    ops = [rng.choice(TORCH_OPS) for _ in range(n_ops)]
    shape = (rng.choice([16, 32, 64, 128, 256]), rng.choice([256, 1024, 4096, 16384, 65536]))
    return {"ops": ops, "shape": shape, "scale": const(rng)[:-2], "level": level}


def render_task(task, rng=None):
    """KernelBench layout; with rng: variables renamed and independent lines reordered."""
    names = {"x": "x", "batch_size": "batch_size", "dim": "dim", "scale": "scale"}
    if rng is not None:
        names = {"x": rng.choice(["inp", "t", "a", "data"]), "batch_size": rng.choice(["N", "BATCH", "rows"]),
                 "dim": rng.choice(["D", "FEATURES", "cols"]), "scale": rng.choice(["factor", "s", "mult"])}
    x = names["x"]
    body = []
    for op in task["ops"]:
        body.append(f"        {x} = {op.replace('(x', '(' + x).replace('x *', x + ' *').replace('x +', x + ' +').replace('x.', x + '.')}")
    consts = [f"{names['batch_size']} = {task['shape'][0]}", f"{names['dim']} = {task['shape'][1]}",
              f"{names['scale']} = {task['scale']}"]
    init = [f"        self.scale = {names['scale']}_arg", "        self.shift = 0.5"]
    if rng is not None:
        rng.shuffle(consts)
        rng.shuffle(init)
    lines = ["import torch", "import torch.nn as nn", "", ""]
    if rng is not None:
        lines = ["import torch.nn as nn", "import torch", "", ""] + consts + ["", ""]
    lines += ["class Model(nn.Module):", f"    def __init__(self, {names['scale']}_arg):", "        super().__init__()"]
    lines += init + ["", f"    def forward(self, {x}):"] + body + [f"        return {x}", "", ""]
    if rng is None:
        lines += consts + ["", ""]
    lines += ["def get_inputs():", f"    return [torch.randn({names['batch_size']}, {names['dim']})]", "", "",
              "def get_init_inputs():", f"    return [{names['scale']}]", ""]
    return "\n".join(lines)


def task_signature(task):
    return (tuple(sorted(task["ops"])), task["shape"], task["scale"])


# ---- records ----

def key_hasher(fields):
    """util/sha256.h KeyHasher: u64le(len(tag)) tag u64le(len(value)) value, per field."""
    h = hashlib.sha256()
    for tag, value in fields:
        t, v = tag.encode(), value.encode()
        h.update(struct.pack("<Q", len(t)) + t + struct.pack("<Q", len(v)) + v)
    return h.hexdigest()


def record_id(reference, candidate, language, fmt):
    """corpus/record.cc RecordId for a kernel record."""
    return key_hasher([("reference_sha256", hashlib.sha256(reference.encode()).hexdigest()),
                       ("candidate", candidate), ("language", language), ("format", fmt)])


LANG_FORMAT = {"hip": ("hip", "extension"), "cuda": ("cuda", "extension"), "triton": ("triton", "triton"),
               "kernelbench": ("cuda", "kernelbench")}


def results(rng):
    hw = rng.choice(["AMD Instinct MI300X", "NVIDIA H200"])
    status = rng.choices(["passed", "mismatch", "compile_error", "runtime_error"], [60, 20, 15, 5])[0]
    r = {"hardware": hw, "toolchain": "hipcc 6.2" if hw.startswith("AMD") else "nvcc 12.4",
         "backend": "hip" if hw.startswith("AMD") else "cuda", "status": status,
         "verified_at": "2026-11-30T12:00:00Z"}
    if status == "passed":
        r["speedup"] = round(rng.lognormvariate(0.1, 0.5), 3)
    return [r] if rng.random() < 0.95 else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--suite-tasks", type=int, default=250)
    ap.add_argument("--train-tasks", type=int, default=3000)
    ap.add_argument("--exact-rate", type=float, default=0.10)
    ap.add_argument("--near-rate", type=float, default=0.10)
    ap.add_argument("--contaminated-rate", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=20261202)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)

    suite = []
    seen = set()
    while len(suite) < a.suite_tasks:
        t = make_task(rng, 1 + len(suite) * 3 // a.suite_tasks)
        if task_signature(t) not in seen:
            seen.add(task_signature(t))
            suite.append(t)
    for k, t in enumerate(suite):
        d = os.path.join(a.out, "suite", f"level{t['level']}")
        os.makedirs(d, exist_ok=True)
        t["name"] = f"level{t['level']}/{k + 1}_task"
        with open(os.path.join(d, f"{k + 1}_task.py"), "w") as f:
            f.write(render_task(t))
    train = []
    while len(train) < a.train_tasks:
        t = make_task(rng, 0)
        if task_signature(t) not in seen:
            seen.add(task_signature(t))
            train.append(render_task(t))

    n_exact = int(a.records * a.exact_rate)
    n_near = int(a.records * a.near_rate)
    n_base = a.records - n_exact - n_near
    langs = rng.choices(list(LANG_FORMAT), [35, 25, 25, 15], k=n_base)
    bases, out_ids, truth = [], set(), {"exact": [], "near": [], "contaminated": [], "near_kinds": {}}
    records = []

    def emit(kernel, candidate, reference, pipeline):
        language, fmt = LANG_FORMAT[kernel.lang]
        rid = record_id(reference, candidate, language, fmt)
        if rid in out_ids:
            return None
        out_ids.add(rid)
        records.append({"kind": "kernel", "task": {"name": kernel.task_name, "reference_source": reference},
                        "candidate_source": candidate, "language": language, "format": fmt,
                        "arch": "gfx942" if kernel.lang == "hip" else "sm_90",
                        "provenance": {"pipeline": pipeline, "source": "synthetic", "license": "MIT"},
                        "results": results(rng)})
        return rid

    for k in range(n_base):
        contaminated = rng.random() < a.contaminated_rate
        if contaminated:
            bt = rng.choice(suite)
            reference = render_task(bt, rng)
            name = "train/" + bt["name"].replace("/", "_")
        else:
            j = rng.randrange(len(train))
            reference, name = train[j], f"train/{j}"
        kern = Kernel(rng, langs[k], None)
        kern.task_name = name
        kern.reference = reference
        rid = emit(kern, kern.render(rng), reference, "gen")
        if rid is None:
            continue
        bases.append((kern, rid))
        if contaminated:
            truth["contaminated"].append({"record": rid, "task": bt["name"]})
    for _ in range(n_exact):
        kern, rid = rng.choice(bases)
        copy = emit(kern, kern.render(rng, comments=rng.random() < 0.5, indent=rng.choice([2, 4])), kern.reference, "gen")
        if copy:
            truth["exact"].append([rid, copy])
    for _ in range(n_near):
        kern, rid = rng.choice(bases)
        other, kind = kern.near_variant(rng)
        copy = emit(other, other.render(rng), kern.reference, "gen")
        if copy:
            truth["near"].append([rid, copy])
            truth["near_kinds"][kind] = truth["near_kinds"].get(kind, 0) + 1
    rng.shuffle(records)
    with open(os.path.join(a.out, "records.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    truth["records"] = len(records)
    truth["contaminated_tasks"] = sorted({c["task"] for c in truth["contaminated"]})
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump(truth, f)
    print(json.dumps({"records": len(records), "bases": len(bases), "exact": len(truth["exact"]),
                      "near": len(truth["near"]), "near_kinds": truth["near_kinds"],
                      "contaminated": len(truth["contaminated"]), "suite_tasks": len(suite)}))


if __name__ == "__main__":
    main()
