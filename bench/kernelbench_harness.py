#!/usr/bin/env python3
"""KernelBench's own harness on a batch of KernelBench-format candidates: the other side
of BENCHMARKS.md's "Side by side with KernelBench's own harness".

Runs KernelBench's evaluation code itself, from a checkout named with --kernelbench (not
part of this repository), the way its scripts/eval_from_generations.py runs a batch with
`build_cache` on and one GPU:
  1. every candidate is built on --cpu-workers processes by its
     `kernelbench.eval.build_compile_cache`, into a build folder of its own
     (`kernelbench.utils.set_gpu_arch` names the one target architecture);
  2. then, one at a time, each candidate is evaluated in a fresh process by
     `kernelbench.eval.eval_kernel_against_ref` (5 correctness trials, 100 timed trials,
     CUDA events, fp32, the same build folder) within --timeout seconds.
The wall time of the whole batch is what the side by side compares.

KernelBench's `kernelbench.utils` imports its LLM clients (openai, litellm) at module
level; the evaluation never calls them. Where they are not installed, stand-ins are put
in their place before the import, each raising if it is ever called.

  kernelbench_harness.py --kernelbench DIR --tasks DIR --candidates DIR --out results.json
      [--cpu-workers 16] [--timeout 180] [--arch Hopper]

A candidate `<task>.<sample>.py` is checked against `tasks/<task>.py`. Writes
results.json (every candidate: built, compiled, correct, runtimes, seconds, error) and
prints one line per candidate and the phases' wall times. A candidate whose evaluation
raised, crashed its process or ran past --timeout failed (KernelBench's batch records
those as failures too). Exit status 1 when an evaluation gave no answer (KernelBench's
"retry": a lock or missing-file error while loading), 0 otherwise.
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import types
from pathlib import Path

KB_SRC_ENV = "KV_BENCH_KERNELBENCH_SRC"  # how the spawned children find the checkout


def _install_client_stand_ins():
    """Stand-ins for the LLM clients KernelBench's utils imports and never calls here."""
    def refuse(*_args, **_kwargs):
        raise RuntimeError("an LLM client stand-in was called: this benchmark only evaluates")
    for module, names in (("openai", ("OpenAI",)), ("litellm", ("completion",)),
                          ("dotenv", ("load_dotenv",))):
        try:
            __import__(module)
        except ImportError:
            stand_in = types.ModuleType(module)
            for name in names:
                setattr(stand_in, name, (lambda *a, **k: None) if name == "load_dotenv" else refuse)
            sys.modules[module] = stand_in


def _import_kernelbench():
    src = os.environ[KB_SRC_ENV]
    if src not in sys.path:
        sys.path.insert(0, src)
    _install_client_stand_ins()
    from kernelbench import eval as kb_eval, utils as kb_utils
    return kb_eval, kb_utils


def build_one(cand_src, build_dir, arch):
    """Phase 1, in a pool process: KernelBench's compile-and-cache of one candidate."""
    kb_eval, kb_utils = _import_kernelbench()
    kb_utils.set_gpu_arch([arch])
    t0 = time.time()
    ok, _stdout, error = kb_eval.build_compile_cache(custom_model_src=cand_src, verbose=False,
                                                     build_dir=build_dir)
    return {"built": bool(ok), "build_s": round(time.time() - t0, 3),
            "build_error": (str(error)[:300] if error else None)}


def eval_one(ref_src, cand_src, build_dir, arch):
    """Phase 2, in a fresh process: KernelBench's evaluation of one candidate."""
    kb_eval, kb_utils = _import_kernelbench()
    import torch
    kb_utils.set_gpu_arch([arch])
    t0 = time.time()
    result = kb_eval.eval_kernel_against_ref(
        original_model_src=ref_src, custom_model_src=cand_src, measure_performance=True,
        timing_method="cuda_event", num_correct_trials=5, num_perf_trials=100,
        build_dir=build_dir, device=torch.device("cuda:0"), backend="cuda",
        precision=torch.float32)
    out = {"eval_s": round(time.time() - t0, 3)}
    if result is None:  # KernelBench's answer to a lock or missing-file error: "retry"
        out.update(answered=False, error="eval_kernel_against_ref returned None (retry)")
        return out
    meta = {k: str(v)[:300] for k, v in (result.metadata or {}).items()}
    out.update(answered=True, compiled=bool(result.compiled), correct=bool(result.correctness),
               runtime_us=result.runtime, ref_runtime_us=result.ref_runtime, metadata=meta)
    return out


def _eval_in_child(conn, *args):
    """The fresh process of one evaluation: its answer, or the exception that ended it
    (KernelBench's batch evaluation records that as the candidate's failure too)."""
    try:
        conn.send(eval_one(*args))
    except BaseException as e:  # noqa: B902 - whatever the candidate raised
        conn.send({"answered": True, "compiled": None, "correct": False,
                   "error": f"{type(e).__name__}: {e}"[:300]})
    finally:
        conn.close()


def evaluate_in_fresh_process(ctx, args, timeout):
    """eval_one in a process of its own; a process that dies or runs past `timeout` is
    the candidate's failure, told apart in `error` (KernelBench's own batch waits for
    its timeout in both cases)."""
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_eval_in_child, args=(send, *args))
    proc.start()
    send.close()
    try:
        if not receive.poll(timeout):
            return {"answered": True, "compiled": None, "correct": False, "error": "evaluation timed out"}
        try:
            return receive.recv()
        except EOFError:
            proc.join(5)
            return {"answered": True, "compiled": None, "correct": False,
                    "error": f"the evaluation's process died (exit {proc.exitcode})"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", required=True, help="a KernelBench checkout (its src/ is imported)")
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--candidates", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu-workers", type=int, default=os.cpu_count())
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per build and per evaluation")
    ap.add_argument("--arch", default="Hopper", help="KernelBench's name of the target architecture")
    ap.add_argument("--build-root", default=None, help="default: a folder beside --out")
    args = ap.parse_args()

    os.environ[KB_SRC_ENV] = str(Path(args.kernelbench).resolve() / "src")
    build_root = Path(args.build_root or Path(args.out).resolve().parent / "kernelbench-build")
    work = []
    for cand in sorted(Path(args.candidates).glob("*.py")):
        task = Path(args.tasks) / (cand.name.split(".", 1)[0] + ".py")
        work.append({"candidate": cand.name, "ref": task.read_text(), "src": cand.read_text(),
                     "build_dir": str(build_root / cand.stem)})
    ctx = mp.get_context("spawn")
    results = {w["candidate"]: {"candidate": w["candidate"]} for w in work}

    t_start = time.time()
    with ctx.Pool(args.cpu_workers) as pool:  # phase 1: every build, all cores
        pending = [(w, pool.apply_async(build_one, (w["src"], w["build_dir"], args.arch))) for w in work]
        for w, job in pending:
            try:
                results[w["candidate"]].update(job.get(timeout=max(1.0, args.timeout)))
            except mp.TimeoutError:
                results[w["candidate"]].update(built=False, build_error="build timed out")
    t_built = time.time()
    for w in work:  # phase 2: one candidate at a time, a fresh process each
        r = results[w["candidate"]]
        t0 = time.time()
        r.update(evaluate_in_fresh_process(ctx, (w["ref"], w["src"], w["build_dir"], args.arch), args.timeout))
        r["seconds"] = round(time.time() - t0, 3)
        Path(args.out).write_text(json.dumps({"partial": True, "results": list(results.values())}, indent=1))
        print(f"{w['candidate']}: built={r.get('built')} compiled={r.get('compiled')} "
              f"correct={r.get('correct')} runtime_us={r.get('runtime_us')} {r['seconds']} s", flush=True)
    t_end = time.time()

    summary = {"candidates": len(work), "build_wall_s": round(t_built - t_start, 2),
               "eval_wall_s": round(t_end - t_built, 2), "wall_s": round(t_end - t_start, 2),
               "correct": sum(1 for r in results.values() if r.get("correct")),
               "unanswered": [c for c, r in results.items() if not r.get("answered")],
               "cpu_workers": args.cpu_workers, "timeout_s": args.timeout, "arch": args.arch,
               "num_correct_trials": 5, "num_perf_trials": 100}
    Path(args.out).write_text(json.dumps({"summary": summary, "results": list(results.values())}, indent=1))
    print(json.dumps(summary), flush=True)
    return 0 if not summary["unanswered"] else 1


if __name__ == "__main__":
    sys.exit(main())
