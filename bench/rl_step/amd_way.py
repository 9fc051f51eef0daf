#!/usr/bin/env python3
"""AMD's way of verifying an RL step: a pool of worker subprocesses, one fresh
Python process per candidate, each building its kernel with load_inline.

What AMD's HIP RL sandbox and KernelBench-style evaluators do (BRIEF section 2),
written here so both sides of the benchmark run on the same machine and inputs:
per candidate, in a new process (its own cold PyTorch extension folder):
  import torch; import the task; import the KernelBench candidate, whose module-level
  load_inline compiles its kernel (build); then for seeds 1..--seeds: seed, build Model
  and ModelNew, make the inputs on the device, run both and compare (equal shape and
  dtype, |out - ref| <= atol + rtol |ref| with the task's KVAULT_META tolerances,
  NaN where the reference has NaN); if all match, time both with CUDA events: --warmup
  calls, then one event pair around --iters calls, the mean (the HIP sandbox's loop).
The pool runs --workers such processes at once on the one GPU; the step's wall time
runs from the first start to the last end.

  amd_way.py --step DIR [--count K] [--workers N] [--limit-s S] [--out FILE]
             [--device cuda] [--seeds 3] [--warmup 25] [--iters 1000]
  amd_way.py --one TASK CANDIDATE [...]   (one candidate; prints one JSON line)

--count K takes K of the step's candidates with the step's mix of kinds (round r of
the stratification takes, from task t, the candidate in position (t + r) mod 8 of
its kinds in the order correct x5, off-by-one, wrong, broken), for a step too long to
run whole. --limit-s stops the pool: no new candidate starts and running ones are
killed (reported as `stopped`, not as results). The output JSON has every result;
the exit status is 0 when the pool ran (statuses are judged by run_step.py).
"""
import argparse
import concurrent.futures as futures
import importlib.util
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KIND_ORDER = ["correct", "offbyone", "wrong", "broken"]


def stratified(candidates, count):
    """`count` candidates whose mix of kinds is the step's (see the docstring)."""
    by_task = {}
    for c in candidates:
        by_task.setdefault(c["task"], []).append(c)
    tasks = list(by_task)
    for t in tasks:
        by_task[t].sort(key=lambda c: (KIND_ORDER.index(c["kind"]), c["sample"]))
    chosen, r = [], 0
    while len(chosen) < count and r < max(len(v) for v in by_task.values()):
        for i, t in enumerate(tasks):
            group = by_task[t]
            if len(chosen) < count and r < len(group):
                chosen.append(group[(i + r) % len(group)])
        r += 1
    return sorted(chosen, key=lambda c: c["index"])


# ---------------------------------------------------------------- one candidate (child)

def seed_all(s):
    import torch
    random.seed(s)
    try:
        import numpy
        numpy.random.seed(s)
    except ImportError:
        pass
    torch.manual_seed(s)


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat(v)]
    raise TypeError("output of type %s" % type(value).__name__)


def compare(ref, out, rtol, atol):
    """(None or why they differ, stats) as the HIP sandbox reports them."""
    import torch
    refs, outs = flat(ref), flat(out)
    if len(refs) != len(outs):
        return "%d outputs, expected %d" % (len(outs), len(refs)), {}
    stats = {}
    for r, o in zip(refs, outs):
        if r.shape != o.shape or r.dtype != o.dtype:
            return "shape/dtype %s %s, expected %s %s" % (tuple(o.shape), o.dtype, tuple(r.shape), r.dtype), {}
        diff = (o.double() - r.double()).abs()
        finite = torch.isfinite(diff)
        stats = {"max_abs_diff": float(diff[finite].max()) if finite.any() else None,
                 "mean_abs_diff": float(diff[finite].mean()) if finite.any() else None,
                 "max_rel_diff": float((diff[finite] / r.double().abs()[finite].clamp_min(1e-12)).max())
                 if finite.any() else None}
        if not torch.allclose(o, r, rtol=rtol, atol=atol, equal_nan=True):
            return "values differ beyond rtol %g atol %g (max abs diff %s)" % (
                rtol, atol, stats["max_abs_diff"]), stats
    return None, stats


def make_inputs(task, device):
    import torch
    if hasattr(torch, "device") and hasattr(torch.device(device), "__enter__"):
        with torch.device(device):
            values = task.get_inputs()
    else:  # PyTorch before 2.0: made on the CPU, then moved
        values = task.get_inputs()
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in values]


def judge_one(task_path, cand_path, device, seeds, warmup, iters):
    phases, result = {}, {}
    t = time.perf_counter()

    def lap(name):
        nonlocal t
        now = time.perf_counter()
        phases[name] = round(now - t, 4)
        t = now

    import torch
    result["torch"] = torch.__version__
    lap("import")
    task = import_file(task_path, "rl_task")
    meta = getattr(task, "KVAULT_META", {}) or {}
    rtol, atol = meta.get("rtol", 1e-3), meta.get("atol", 1e-4)  # else the HIP sandbox's
    try:
        cand = import_file(cand_path, "rl_candidate")
    except Exception as e:  # noqa: BLE001 - the candidate's failure is its outcome
        lap("build")
        text = str(e)
        status = "compile_error" if "Error building extension" in text else "load_error"
        return dict(result, status=status, message=text[-600:], phases=phases)
    lap("build")
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    status, message, stats = "passed", "", {}
    try:
        with torch.no_grad():
            for s in range(1, seeds + 1):
                seed_all(s); init = task.get_init_inputs()
                seed_all(s); model = task.Model(*init).to(device)
                seed_all(s); new = cand.ModelNew(*init).to(device)
                seed_all(s); inputs = make_inputs(task, device)
                ref = model(*inputs)
                out = new(*inputs)
                sync()
                why, stats = compare(ref, out, rtol, atol)
                if why:
                    status, message = "mismatch", "seed %d: %s" % (s, why)
                    break
    except Exception as e:  # noqa: BLE001
        status = "oom" if "out of memory" in str(e).lower() else "runtime_error"
        message = "%s: %s" % (type(e).__name__, str(e)[:400])
    lap("correctness")
    result.update(status=status, message=message, stats=stats)
    if status == "passed":
        try:
            result.update(time_both(model, new, inputs, device, warmup, iters))
        except Exception as e:  # noqa: BLE001
            result.update(status="runtime_error", message="timing: %s: %s" % (type(e).__name__, str(e)[:400]))
        lap("timing")
    result["phases"] = phases
    return result


def time_both(model, new, inputs, device, warmup, iters):
    import torch
    out = {}
    with torch.no_grad():
        for label, fn in (("reference_ms", model), ("candidate_ms", new)):
            for _ in range(warmup):
                fn(*inputs)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    fn(*inputs)
                end.record()
                end.synchronize()
                out[label] = start.elapsed_time(end) / iters
            else:
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn(*inputs)
                out[label] = (time.perf_counter() - t0) * 1e3 / iters
    out["speedup"] = out["reference_ms"] / out["candidate_ms"] if out["candidate_ms"] > 0 else None
    return out


# ---------------------------------------------------------------- the pool (parent)

class Pool:
    """Runs candidates in child processes, --workers at once, until done or stopped."""

    def __init__(self, args, step, tasks):
        self.args, self.step = args, step
        self.task_file = {t["name"]: t["file"] for t in tasks}
        self.stop = threading.Event()
        self.live = {}  # pid -> Popen
        self.lock = threading.Lock()
        self.t0 = None

    def one(self, c, work):
        if self.stop.is_set():
            return {"index": c["index"], "id": c["id"], "status": "stopped", "expected": c["expected"]}
        begun = time.perf_counter()
        ext_dir = Path(tempfile.mkdtemp(prefix="ext-", dir=work))  # cold: a fresh extension folder
        env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(ext_dir), PYTHONDONTWRITEBYTECODE="1")
        cmd = [self.args.python, os.path.abspath(__file__), "--one", str(self.step / self.task_file[c["task"]]),
               str(self.step / c["amd_file"]), "--device", self.args.device, "--seeds", str(self.args.seeds),
               "--warmup", str(self.args.warmup), "--iters", str(self.args.iters)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ext_dir),
                             env=env, start_new_session=True)
        with self.lock:
            self.live[p.pid] = p
        try:
            stdout, stderr = p.communicate(timeout=self.args.timeout)
            lines = [l for l in stdout.splitlines() if l.startswith("{")]
            if lines:
                r = json.loads(lines[-1])
            elif self.stop.is_set():
                r = {"status": "stopped"}
            else:
                r = {"status": "crash", "message": "exit %s: %s" % (p.returncode, stderr[-600:])}
        except subprocess.TimeoutExpired:
            self.kill(p)
            p.communicate()
            r = {"status": "timeout", "message": "past %s s" % self.args.timeout}
        finally:
            with self.lock:
                self.live.pop(p.pid, None)
            shutil.rmtree(ext_dir, ignore_errors=True)
        end = time.perf_counter()
        r.update(index=c["index"], id=c["id"], expected=c["expected"], kind=c["kind"],
                 start_s=round(begun - self.t0, 3), end_s=round(end - self.t0, 3), wall_s=round(end - begun, 3))
        return r

    @staticmethod
    def kill(p):
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the child's own session: it and its compilers
        except ProcessLookupError:
            pass

    def run(self, chosen, work):
        results = [None] * len(chosen)
        self.t0 = time.perf_counter()
        deadline = self.t0 + self.args.limit_s if self.args.limit_s else None
        with futures.ThreadPoolExecutor(max_workers=self.args.workers) as pool:
            todo = {pool.submit(self.one, c, work): i for i, c in enumerate(chosen)}
            pending = set(todo)
            while pending:
                timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
                if self.stop.is_set():
                    timeout = 1.0
                done, pending = futures.wait(pending, timeout=timeout, return_when=futures.FIRST_COMPLETED)
                for f in done:
                    r = f.result()
                    results[todo[f]] = r
                    if r["status"] != "stopped":
                        print("%-34s %-14s %7.1f s" % (r["id"], r["status"], r["wall_s"]), flush=True)
                if deadline is not None and time.perf_counter() >= deadline and not self.stop.is_set():
                    print("limit of %s s reached: stopping the pool" % self.args.limit_s, flush=True)
                    self.stop.set()
                    with self.lock:
                        for p in list(self.live.values()):
                            self.kill(p)
        return results, time.perf_counter() - self.t0


def run_pool(args):
    step = Path(args.step)
    manifest = json.loads((step / "manifest.json").read_text())
    chosen = manifest["candidates"]
    if args.count and args.count < len(chosen):
        chosen = stratified(chosen, args.count)
    work = Path(tempfile.mkdtemp(prefix="rl-amd-"))
    pool = Pool(args, step, manifest["tasks"])
    try:
        results, wall = pool.run(chosen, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    done = [r for r in results if r["status"] != "stopped"]
    out = {"harness": "amd_way", "workers": args.workers, "device": args.device, "seeds": args.seeds,
           "warmup": args.warmup, "iters": args.iters, "selected": len(chosen), "finished": len(done),
           "stopped": len(chosen) - len(done), "limit_s": args.limit_s,
           "step_candidates": len(manifest["candidates"]),
           "wall_s": round(wall, 3), "last_end_s": max((r["end_s"] for r in done), default=0.0),
           "results": results}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print("%d of %d candidates in %.1f s with %d workers -> %s" % (len(done), len(chosen), wall, args.workers,
                                                                   args.out))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", nargs=2, metavar=("TASK", "CANDIDATE"))
    ap.add_argument("--step", help="a folder written by make_step.py")
    ap.add_argument("--count", type=int, default=0, help="stratified subset of K candidates (0: all)")
    ap.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--limit-s", type=float, default=0, help="stop the pool after S seconds (0: none)")
    ap.add_argument("--out", default="amd_way.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=25)
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per candidate")
    ap.add_argument("--python", default=sys.executable, help="the children's Python (with PyTorch)")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(judge_one(args.one[0], args.one[1], args.device, args.seeds, args.warmup, args.iters)),
              flush=True)
        return 0
    if not args.step:
        ap.error("--step is required (or --one TASK CANDIDATE)")
    return run_pool(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
