# TEMPORARY device check (deleted after use; not part of the suite).
import concurrent.futures, glob, importlib.machinery, importlib.util, json, os, random, subprocess, sys, sysconfig, time, traceback
import numpy as np, torch

EX = os.path.abspath("examples")
OUT = os.environ.get("OUT", "/tmp/out")
BUILD = "/tmp/kvbuild"; os.makedirs(BUILD, exist_ok=True)
TD = os.path.dirname(torch.__file__)
log_lines = []
def log(*a):
    s = " ".join(str(x) for x in a); print(s, flush=True); log_lines.append(s)

log("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))
log("cudnn.allow_tf32", torch.backends.cudnn.allow_tf32, "matmul.allow_tf32", torch.backends.cuda.matmul.allow_tf32,
    "f32 matmul precision", torch.get_float32_matmul_precision())

def flags(name, hip):
    f = ["nvcc", "-x", "cu", "-std=c++17", "-O2", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
         f"-I{TD}/include", f"-I{TD}/include/torch/csrc/api/include", f"-I{sysconfig.get_paths()['include']}",
         f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H",
         f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
         "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
         "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr",
         f"-L{TD}/lib", "-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-ltorch_cuda", "-ltorch_python",
         f"-Xlinker", f"-rpath={TD}/lib"]
    for k in ("_PYBIND11_COMPILER_TYPE", "_PYBIND11_STDLIB", "_PYBIND11_BUILD_ABI"):
        v = getattr(torch._C, k, None)
        if v: f.append(f'-DPYBIND11_{k[10:]}="{v}"')
    if hip: f.insert(1, "-I" + os.path.abspath("include_hip"))
    return f

def build(path):
    name = "kv_" + os.path.basename(path).replace(".", "_").replace("-", "_")
    so = os.path.join(BUILD, name + ".so")
    cmd = flags(name, path.endswith(".hip")) + [path, "-o", so]
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return path, name, so if p.returncode == 0 else None, p.stderr[-1500:], time.time() - t

def seed(s):
    random.seed(s); np.random.seed(s % 2**32); torch.manual_seed(s)

def load_py(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

TASKS = {}
def task(stem):
    if stem not in TASKS: TASKS[stem] = load_py(f"{EX}/suite/{stem}.py", "task_" + stem)
    return TASKS[stem]

def cases_of(t):
    return t.get_cases() if hasattr(t, "get_cases") else [{"name": "default", "get_inputs": t.get_inputs}]

def tol(t, dt):
    meta = getattr(t, "KVAULT_META", {})
    if "rtol" in meta: return meta["rtol"], meta["atol"]
    return (1e-2, 1e-2) if dt in (torch.float16, torch.bfloat16) else (1e-4, 1e-4)

def compare(t, got, ref):
    if not torch.is_tensor(got): return False, "not a tensor", 0
    if got.shape != ref.shape: return False, f"shape {tuple(got.shape)} vs {tuple(ref.shape)}", 0
    if got.dtype != ref.dtype: return False, f"dtype {got.dtype} vs {ref.dtype}", 0
    rtol, atol = tol(t, ref.dtype)
    g, r = got.double(), ref.double()
    nan_bad = (torch.isnan(g) != torch.isnan(r)).any().item()
    inf_bad = ((torch.isinf(g) | torch.isinf(r)) & (g != r)).any().item()
    fin = torch.isfinite(g) & torch.isfinite(r)
    ratio = ((g - r).abs() / (atol + rtol * r.abs()))[fin]
    mr = ratio.max().item() if ratio.numel() else 0.0
    ok = not nan_bad and not inf_bad and mr <= 1.0
    return ok, f"err/tol {mr:.3g} nan_bad={nan_bad} inf_bad={inf_bad}", mr

def run_candidate(stem, call, seeds=(1, 2, 3), kb=None):
    t = task(stem); twin = hasattr(t, "module_fn")
    worst, fails = 0.0, []
    for case in cases_of(t):
        if case.get("kind", "both") == "performance": continue
        gi = case.get("get_init_inputs", getattr(t, "get_init_inputs", lambda: []))
        for s in seeds:
            seed(s); init = gi(); seed(s); model = t.Model(*init).cuda(); seed(s)
            inputs = [x.cuda() if torch.is_tensor(x) else x for x in case["get_inputs"]()]; seed(s)
            with torch.no_grad(): ref = model(*inputs)
            seed(s); init = gi(); seed(s)
            cm = kb.ModelNew(*init).cuda() if kb else (t.Model(*init).cuda() if twin else None); seed(s)
            inputs = [x.cuda() if torch.is_tensor(x) else x for x in case["get_inputs"]()]
            pristine = [x.clone() if torch.is_tensor(x) else x for x in inputs]; seed(s)
            try:
                with torch.no_grad():
                    got = cm(*inputs) if kb else (cm(*inputs, fn=call) if twin else call(*inputs))
                torch.cuda.synchronize()
            except Exception as e:
                return "runtime_error", str(e)[:300], worst
            for a, b in zip(inputs, pristine):
                if torch.is_tensor(a) and not torch.equal(a, b): fails.append(f"{case['name']}/s{s} input modified")
            ok, msg, mr = compare(t, got, ref); worst = max(worst, mr)
            if not ok: fails.append(f"{case['name']}/s{s}: {msg}")
    return ("mismatch" if fails else "passed"), fails[:3], worst

results = {}
ONLY = sys.argv[1:]
srcs = sorted(glob.glob(f"{EX}/hip/*.hip") + glob.glob(f"{EX}/cuda/*.cu"))
if ONLY: srcs = [s for s in srcs if os.path.relpath(s, EX) in ONLY]
pool = concurrent.futures.ThreadPoolExecutor(16)
futs = [pool.submit(build, p) for p in srcs]
# KernelBench candidates while nvcc runs
for p in sorted(glob.glob(f"{EX}/kernelbench/*.py")):
    if ONLY and os.path.relpath(p, EX) not in ONLY: continue
    rel = os.path.relpath(p, EX); stem = os.path.basename(p).split(".")[0]
    t0 = time.time()
    try:
        kb = load_py(p, "kb_" + os.path.basename(p).replace(".", "_").replace("-", "_"))
        if not hasattr(kb, "ModelNew"): results[rel] = ("no_modelnew", "", 0)
        else: results[rel] = run_candidate(stem, None, kb=kb)
    except Exception as e:
        results[rel] = ("load_error", str(e)[-200:], 0)
    log(f"{rel:45s} {results[rel][0]:14s} {time.time()-t0:5.1f}s worst={results[rel][2]:.3g} {results[rel][1]}")
for f in futs:
    path, name, so, err, bt = f.result()
    rel = os.path.relpath(path, EX); stem = os.path.basename(path).split(".")[0]
    if so is None:
        results[rel] = ("compile_error", err[-600:], 0)
    else:
        if "bad-hang" in rel:
            code = ("import torch, importlib.util, sys; spec = importlib.util.spec_from_file_location(sys.argv[1], sys.argv[2]); "
                    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
                    "a = torch.randn(1000, device='cuda'); print('calling', flush=True); m.forward(a, a); torch.cuda.synchronize(); print('RETURNED')")
            try:
                p = subprocess.run([sys.executable, "-c", code, name, so], capture_output=True, text=True, timeout=25)
                results[rel] = ("returned?!", p.stdout[-300:] + p.stderr[-300:], 0)
            except subprocess.TimeoutExpired as e:
                results[rel] = ("timeout", "killed after 25 s", 0)
            p2 = subprocess.run([sys.executable, "-c", "import torch; x = torch.ones(10, device='cuda'); print('gpu ok after kill', x.sum().item())"], capture_output=True, text=True, timeout=120)
            log("   " + (p2.stdout + p2.stderr).strip()[-300:])
            log(f"{rel:45s} {results[rel][0]:14s} build {bt:5.1f}s {results[rel][1]}")
            continue
        if "bad-oom" in rel:
            spec = importlib.util.spec_from_file_location(name, so); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
            try:
                mod.forward(torch.randn(10, device="cuda")); torch.cuda.synchronize()
                results[rel] = ("returned?!", "", 0)
            except Exception as e:
                results[rel] = ("exception", f"{type(e).__module__}.{type(e).__name__}: {str(e)[:200]}", 0)
            log(f"{rel:45s} {results[rel][0]:14s} build {bt:5.1f}s {results[rel][1]}")
            continue
        try:
            spec = importlib.util.spec_from_file_location(name, so); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
            if not hasattr(mod, "forward"): results[rel] = ("load_error", "no forward", 0)
            else: results[rel] = run_candidate(stem, mod.forward)
            if "nosync" in rel:
                n_bad = sum(run_candidate(stem, mod.forward, seeds=(s,))[0] != "passed" for s in range(10, 40))
                log(f"   race check: {n_bad}/30 extra seeds mismatched")
        except Exception as e:
            results[rel] = ("load/run exception", traceback.format_exc()[-600:], 0)
    log(f"{rel:45s} {results[rel][0]:14s} build {bt:5.1f}s worst={results[rel][2]:.3g} {results[rel][1] if results[rel][0] != 'passed' else ''}")

# TF32 sensitivity of the fp32 reductions-heavy tasks
for stem in (() if ONLY else ("matmul", "linear_relu", "conv2d")):
    t = task(stem)
    for case in cases_of(t):
        gi = case.get("get_init_inputs", getattr(t, "get_init_inputs", lambda: []))
        seed(1); init = gi(); seed(1); model = t.Model(*init).cuda(); seed(1)
        inputs = [x.cuda() for x in case["get_inputs"]()]
        with torch.no_grad():
            ref = model(*inputs)
            exact = model.double()(*[x.double() for x in inputs]); model.float()
            torch.backends.cudnn.allow_tf32 = True; torch.backends.cuda.matmul.allow_tf32 = True
            tf = model(*inputs)
            torch.backends.cudnn.allow_tf32 = False; torch.backends.cuda.matmul.allow_tf32 = False
            strict = model(*inputs)
            torch.backends.cudnn.allow_tf32 = True; torch.backends.cuda.matmul.allow_tf32 = False
        for label, x in (("default-flags ref", ref), ("tf32 on", tf), ("tf32 off", strict)):
            r = (x.double() - exact).abs() / (1e-4 + 1e-4 * exact.abs())
            r3 = (x.double() - exact).abs() / (1e-3 + 1e-3 * exact.abs())
            log(f"tf32 {stem}/{case['name']}: {label:18s} vs fp64: max err/tol(1e-4)={r.max().item():.3g} (1e-3)={r3.max().item():.3g}")

os.makedirs(OUT, exist_ok=True)
json.dump({k: list(v) for k, v in results.items()}, open(f"{OUT}/results.json", "w"), indent=1)
open(f"{OUT}/log.txt", "w").write("\n".join(log_lines))
