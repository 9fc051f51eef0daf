#!/usr/bin/env python3
"""The `load_inline` baseline of the throughput benchmark (BENCHMARKS.md): what
KernelBench's evaluation does with a KernelBench-format candidate, written here,
with checks as strict as KernelVault's.

Per candidate, in its own Python process (as isolated as one kvault lane):
import the task; import the candidate, whose module-level `load_inline` compiles
its extension (compile time); then, like KernelVault, for every correctness case of
the task (`get_cases`, docs/task-format.md) and seeds 1..max(3, seeds): seed, build
Model and ModelNew, make the inputs, run both, require equal shapes and dtypes,
`|cand - ref| <= atol + rtol |ref|` with the task's or the dtype's tolerances, the
NaN/Inf policy, and unchanged inputs. Then each performance case is timed as
KernelBench times: 3 warm-up calls, 100 trials, each after a 256 MiB cache-clearing
write, one event pair per trial, the mean.

  load_inline_baseline.py --suite examples/suite --candidates DIR --jobs 14 \\
      --out results.json [--device cuda|cpu] [--trials 100] [--timeout 600]

Writes results.json as it goes (one entry per finished candidate) and prints one
line per candidate. Exit status 0 when every candidate was judged.
"""
import argparse
import concurrent.futures as futures
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_TOL = {"float64": 1e-4, "float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}


def seed_all(s):
    import torch
    random.seed(s)
    try:
        import numpy
        numpy.random.seed(s % 2**32)
    except ImportError:
        pass
    torch.manual_seed(s)


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases_of(task):
    if hasattr(task, "get_cases"):
        out = []
        for c in task.get_cases():
            out.append({"name": c["name"], "kind": c.get("kind", "both"), "get_inputs": c["get_inputs"],
                        "get_init_inputs": c.get("get_init_inputs", getattr(task, "get_init_inputs", lambda: []))})
        return out
    return [{"name": "default", "kind": "both", "get_inputs": task.get_inputs,
             "get_init_inputs": getattr(task, "get_init_inputs", lambda: [])}]


def flatten(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    raise TypeError("output of type %s" % type(value).__name__)


def compare(ref, cand, meta):
    """None when cand matches ref as KernelVault's Compare requires, else why."""
    import torch
    refs, cands = flatten(ref), flatten(cand)
    if len(refs) != len(cands):
        return "%d outputs, expected %d" % (len(cands), len(refs))
    for r, c in zip(refs, cands):
        if r.shape != c.shape or r.dtype != c.dtype:
            return "shape/dtype %s %s, expected %s %s" % (tuple(c.shape), c.dtype, tuple(r.shape), r.dtype)
        name = str(r.dtype).replace("torch.", "")
        if name not in DEFAULT_TOL:
            if not torch.equal(r.cpu(), c.cpu()):
                return "integer output differs"
            continue
        rtol = meta.get("rtol") if meta.get("rtol") is not None else DEFAULT_TOL[name]
        atol = meta.get("atol") if meta.get("atol") is not None else DEFAULT_TOL[name]
        r64, c64 = r.detach().double().cpu(), c.detach().double().cpu()
        if meta.get("nan_policy", "match") == "forbid" and not torch.isfinite(c64).all():
            return "NaN or Inf in the output"
        same_special = (torch.isnan(r64) & torch.isnan(c64)) | (torch.isinf(r64) & (r64 == c64))
        finite = torch.isfinite(r64) & torch.isfinite(c64)
        close = finite & ((c64 - r64).abs() <= atol + rtol * r64.abs())
        if not bool((close | same_special).all()):
            return "values differ beyond rtol %g atol %g" % (rtol, atol)
    return None


def same_inputs(a, b):
    import torch
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if x.is_floating_point():
                if not bool(((x == y) | (torch.isnan(x) & torch.isnan(y))).all()):
                    return False
            elif not torch.equal(x, y):
                return False
    return True


def judge_one(task_path, cand_path, device_name, trials):
    """The result dict of one candidate (runs in the child process)."""
    import torch
    started = time.perf_counter()
    result = {"candidate": cand_path, "task": task_path}
    device = torch.device(device_name)
    task = import_file(task_path, "kvb_task")
    meta = getattr(task, "KVAULT_META", {}) or {}
    try:
        cand = import_file(cand_path, "kvb_candidate")
    except Exception as e:
        text = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        result.update(status="compile_error" if "Error building extension" in str(e) else "load_error",
                      message=text[:300])
        result["seconds"] = time.perf_counter() - started
        return result
    result["load_seconds"] = time.perf_counter() - started
    if not hasattr(cand, "ModelNew"):
        result.update(status="load_error", message="no ModelNew", seconds=time.perf_counter() - started)
        return result
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    seeds = list(range(1, max(3, int(meta.get("seeds", 3))) + 1))
    status, message = "passed", ""
    try:
        with torch.no_grad():
            for case in cases_of(task):
                if case["kind"] == "performance":
                    continue
                for s in seeds:
                    seed_all(s); init = case["get_init_inputs"]()
                    seed_all(s); model = task.Model(*init).to(device)
                    seed_all(s); new = cand.ModelNew(*init).to(device)
                    seed_all(s); inputs = [x.to(device) if isinstance(x, torch.Tensor) else x
                                           for x in case["get_inputs"]()]
                    pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
                    seed_all(s); ref = model(*inputs)
                    seed_all(s); out = new(*inputs); sync()
                    why = compare(ref, out, meta)
                    if why is None and not same_inputs(pristine, inputs):
                        why = "the candidate modified its inputs"
                    if why is not None:
                        status, message = "mismatch", "case %s seed %d: %s" % (case["name"], s, why)
                        raise StopIteration
    except StopIteration:
        pass
    except Exception as e:
        oom = "out of memory" in str(e).lower()
        status, message = ("oom" if oom else "runtime_error"), "%s: %s" % (type(e).__name__, str(e)[:200])
    result.update(status=status, message=message)
    if status == "passed":
        result["timings"] = time_performance(task, cand, device, trials, sync)
    result["seconds"] = time.perf_counter() - started
    return result


def time_performance(task, cand, device, trials, sync):
    """KernelBench's timing: 3 warm-ups, `trials` trials after a 256 MiB clearing
    write, events per trial, mean (events on GPUs, perf_counter on the CPU)."""
    import torch
    rows = []
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
    with torch.no_grad():
        for case in cases_of(task):
            if case["kind"] == "correctness":
                continue
            seed_all(1000); init = case["get_init_inputs"]()
            seed_all(1000); model = task.Model(*init).to(device)
            seed_all(1000); new = cand.ModelNew(*init).to(device)
            seed_all(1000); inputs = [x.to(device) if isinstance(x, torch.Tensor) else x
                                      for x in case["get_inputs"]()]
            row = {"case": case["name"]}
            for label, fn in (("reference_ms", model), ("candidate_ms", new)):
                for _ in range(3):
                    fn(*inputs)
                sync()
                times = []
                for _ in range(trials):
                    flush.zero_()
                    if device.type == "cuda":
                        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        a.record(); fn(*inputs); b.record(); b.synchronize()
                        times.append(a.elapsed_time(b))
                    else:
                        t0 = time.perf_counter(); fn(*inputs); times.append((time.perf_counter() - t0) * 1e3)
                row[label] = sum(times) / len(times)
            rows.append(row)
    return rows


def task_for(suite, cand):
    return suite / (cand.name.split(".")[0] + ".py")


def run_all(args):
    cands = sorted(Path(args.candidates).glob("*.py"))
    results, t0 = [], time.perf_counter()
    out = Path(args.out)

    def one(cand):
        begun = time.perf_counter()
        cmd = [sys.executable, os.path.abspath(__file__), "--one", str(task_for(Path(args.suite), cand)),
               str(cand), "--device", args.device, "--trials", str(args.trials)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
            r = json.loads(lines[-1]) if lines else {"candidate": str(cand), "status": "crash",
                                                     "message": (p.stderr or "")[-300:]}
        except subprocess.TimeoutExpired:
            r = {"candidate": str(cand), "status": "timeout"}
        r["wall_seconds"] = time.perf_counter() - begun
        return r

    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(one, cands):
            results.append(r)
            print("%-50s %-14s %6.1f s" % (Path(r["candidate"]).name, r["status"], r["wall_seconds"]), flush=True)
            out.write_text(json.dumps({"total_seconds": time.perf_counter() - t0, "jobs": args.jobs,
                                       "attempts": results}, indent=1) + "\n")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", nargs=2, metavar=("TASK", "CANDIDATE"))
    ap.add_argument("--suite")
    ap.add_argument("--candidates")
    ap.add_argument("--out", default="load_inline.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(judge_one(args.one[0], args.one[1], args.device, args.trials)), flush=True)
        return 0
    if not (args.suite and args.candidates):
        ap.error("--suite and --candidates are required (or --one TASK CANDIDATE)")
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
