#!/usr/bin/env python3
"""One RL step through `kvault serve`, then through AMD's way (amd_way.py), on the
same candidates (a folder written by make_step.py); results.json and summary.md
under --out. Exit status 1 when any status differs from the manifest, the step did
not finish in its limit, a result was not cold, or the server failed; 2 for usage.

kvault side, with cold caches: a fresh KVAULT_CACHE_DIR, store and
TORCH_EXTENSIONS_DIR; `kvault serve --port 0` started, every lane ready; then (unless
--no-prewarm) one warm-up candidate per lane on a task of its own, as a server that
has been running does before a step; then the 512 requests posted as one batch to
/v1/batches, the stream read as results arrive (polling where it breaks), until
done or --kvault-limit-s after the post (then the batch is cancelled). The step's
time is from the post to the last result.

AMD's side: amd_way.py on the same step (--amd-count K: a stratified subset, its
time projected to the whole step), after the server has stopped, so the two never
share the machine.

  run_step.py --step DIR --out DIR [--kvault BIN] [--backend cuda] [--parts kvault,amd]
              [--lanes N] [--kvault-limit-s 600] [--amd-count 64] [--amd-workers 16]
              [--amd-limit-s S] [--budget-s S] [--no-prewarm] [--python python3]
  run_step.py --merge A/results.json B/results.json --out DIR  (parts run in separate calls)

Environment: KVAULT_PYTHON (the worker's Python), KVAULT_SOURCE_ROOT (default: this
checkout), LD_LIBRARY_PATH as the binary needs; run_step.sh sets them for the H200.
"""
import argparse
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import codegen  # noqa: E402
import report  # noqa: E402
from ops import OPS  # noqa: E402
from serve_client import BatchWatch, Server, ServeError, http, wait_ready  # noqa: E402

KEEP = ("status", "seconds", "phases", "compiled", "correct", "speedup", "reference_ms", "candidate_ms",
        "from_store", "error", "policy")


def environment(python, kvault):
    env = {"host cores": os.cpu_count()}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,temperature.gpu",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        if smi.returncode == 0:
            env["gpu"] = smi.stdout.strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        v = subprocess.run([python, "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__)"],
                           capture_output=True, text=True, timeout=120)
        env["python, torch"] = v.stdout.strip() or v.stderr.strip()[-200:]
    except (OSError, subprocess.TimeoutExpired) as e:
        env["python, torch"] = str(e)
    if kvault:
        try:
            env["kvault"] = subprocess.run([kvault, "--version"], capture_output=True, text=True,
                                           timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            env["kvault"] = str(e)
    return env


def warmup_requests(manifest, n, language):
    """n correct candidates of a warm-up task that is not part of the step (the relu
    op, with another source text, so its reference is not the step's)."""
    op = OPS[0]
    lang = manifest["lang"]
    task = codegen.task_source(op, 99, manifest["sizes"]) + "\n# warm-up task of run_step.py, not in the step\n"
    variant = {"threads": 256, "items": 2} if lang == "cuda" else {"chunk": 4096}
    out = []
    for i in range(n):
        tag = "%016x" % random.getrandbits(64)
        header = ["warm-up candidate %d of run_step.py (%s)" % (i, tag)]
        if manifest["format"] == "kernelbench":
            code = codegen.amd_source(op, lang, variant, None, header, "rl_warmup_%s" % tag)
        else:
            code = codegen.candidate_source(op, lang, manifest["format"], variant, None, header)
        out.append({"task_source": task, "task_name": "rl_warmup", "code": code, "language": language,
                    "run": "rl-step-warmup"})
    return out


def run_batch(server, requests, limit_s, label):
    """(watch, complete, step seconds, batch id): one batch posted and followed."""
    t0 = time.monotonic()
    _, accepted = http("POST", server.url + "/v1/batches", {"requests": requests}, timeout=300, expect=(202,))
    batch_id = accepted.get("batch_id")
    if not batch_id or accepted.get("size") != len(requests):
        raise ServeError("%s: /v1/batches answered %s for %d requests" % (label, accepted, len(requests)))
    watch = BatchWatch(server, batch_id, len(requests), t0)
    complete = watch.wait(limit_s)
    if not complete:
        print("%s: limit of %s s reached, cancelling the batch" % (label, limit_s), flush=True)
        http("DELETE", "%s/v1/batches/%s" % (server.url, batch_id), timeout=60)
    body = watch.poll_once()  # the authoritative results, in request order
    if complete and any(r is None for r in watch.results):
        raise ServeError("%s: the stream said done but the batch has %d of %d results" % (
            label, sum(r is not None for r in watch.results), len(requests)))
    arrived = [t for t in watch.arrived.values()]
    step_s = max(arrived) if complete and arrived else time.monotonic() - t0
    return watch, complete, step_s, batch_id


def kvault_part(args, manifest, step, out):
    work = Path(tempfile.mkdtemp(prefix="rl-kvault-", dir=args.work))
    env = dict(os.environ, KVAULT_CACHE_DIR=str(work / "cache"), TORCH_EXTENSIONS_DIR=str(work / "torch-ext"))
    env.setdefault("KVAULT_SOURCE_ROOT", str(ROOT))
    run_name = "rl-step-s%d-%s" % (manifest["seed"], manifest["format"])
    argv = [args.kvault, "serve", "--backend", args.backend, "--port", "0", "--db", str(work / "kv.db"),
            "--run", run_name]
    if args.lanes:
        argv += ["--lanes-per-device", str(args.lanes)]
    if args.devices:
        argv += ["--devices", args.devices]
    server = Server(argv, env, str(out / "serve.log"))
    section = {"argv": argv, "cache_dir": env["KVAULT_CACHE_DIR"]}
    try:
        t_start = time.monotonic()
        hello = server.start()
        health = wait_ready(server)
        section.update(hello=hello, health_before=health, lanes=health.get("lanes"),
                       ready_s=round(time.monotonic() - t_start, 3))
        print("kvault serve ready: %s, %s lanes, %.1f s" % (server.url, health.get("lanes"), section["ready_s"]),
              flush=True)
        language = manifest["candidates"][0]["language"]
        if args.prewarm:
            reqs = warmup_requests(manifest, max(1, int(health.get("lanes") or 1)), language)
            watch, complete, secs, _ = run_batch(server, reqs, args.kvault_limit_s, "warm-up")
            statuses = [r.get("status") if r else None for r in watch.results]
            section["prewarm"] = {"candidates": len(reqs), "seconds": round(secs, 3), "statuses": statuses,
                                  "note": "%d warm-up candidates (one per lane, a task of their own) in %.1f s" % (
                                      len(reqs), secs)}
            if not complete or any(s != "passed" for s in statuses):
                raise ServeError("warm-up candidates did not all pass: %s (messages: %s)" % (
                    statuses, [(r or {}).get("message", "")[:200] for r in watch.results]))
        _, before = http("GET", server.url + "/metrics", raw=True)
        tasks = {t["name"]: (step / t["file"]).read_text() for t in manifest["tasks"]}
        requests = [{"task_source": tasks[c["task"]], "task_name": c["task"], "code": (step / c["file"]).read_text(),
                     "language": c["language"], "run": run_name} for c in manifest["candidates"]]
        section["submitted_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        print("posting %d candidates" % len(requests), flush=True)
        watch, complete, step_s, batch_id = run_batch(server, requests, args.kvault_limit_s, "step")
        _, after = http("GET", server.url + "/metrics", raw=True)
        _, health_after = http("GET", server.url + "/v1/health", expect=(200, 503))
        (out / "metrics_before.txt").write_text(before)
        (out / "metrics_after.txt").write_text(after)
        (out / "kvault_raw.json").write_text(json.dumps(watch.results, indent=1) + "\n")
        records, hits = [], 0
        for c, r in zip(manifest["candidates"], watch.results):
            rec = {"index": c["index"], "id": c["id"], "expected": c["expected"],
                   "arrived_s": watch.arrived.get(c["index"])}
            if r is not None:
                rec.update({k: r.get(k) for k in KEEP if k in r})
                rec["message"] = (r.get("message") or "")[:300]
                rec["reward"] = (r.get("reward") or {}).get("value") if isinstance(r.get("reward"), dict) else None
                hits += bool((r.get("build") or {}).get("cache_hit"))
                errors = [case.get("max_abs_error") for case in r.get("cases") or []
                          if isinstance(case, dict) and isinstance(case.get("max_abs_error"), (int, float))]
                rec["max_abs_error"] = max(errors) if errors else None
                rec["turns"] = [{k: case.get(k) for k in ("kind", "case", "stage_ms", "rounds", "turn_candidates",
                                                          "reference_ms")}
                                for case in r.get("cases") or []
                                if isinstance(case, dict) and case.get("kind") == "timing"]
            records.append(rec)
        section.update(batch_id=batch_id, complete=complete, step_s=round(step_s, 3), records=records,
                       cache_hits=hits, stream_error=watch.stream_error, health_after=health_after)
    finally:
        section["server_exit"] = server.stop()
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    return section


def amd_part(args, step, out, limit_s):
    cmd = [args.python, str(HERE / "amd_way.py"), "--step", str(step), "--out", str(out / "amd_way.json"),
           "--workers", str(args.amd_workers), "--count", str(args.amd_count), "--device", args.amd_device,
           "--python", args.python]
    if limit_s:
        cmd += ["--limit-s", "%.0f" % limit_s]
    print("AMD's way: %s" % " ".join(cmd), flush=True)
    with open(out / "amd_way.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc != 0 or not (out / "amd_way.json").exists():
        raise ServeError("amd_way.py exited %d; its log: %s" % (rc, out / "amd_way.log"))
    return json.loads((out / "amd_way.json").read_text())


def finish(results, out):
    results["comparison"] = report.comparison(results["format"], results.get("kvault"), results.get("amd"))
    results["failures"] = report.failures(results)
    results["ok"] = not results["failures"]
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    text = report.markdown(results)
    (out / "summary.md").write_text(text)
    print(text)
    return results


def base_results(manifest):
    return {"benchmark": "rl_step", "format": manifest["format"], "lang": manifest["lang"],
            "seed": manifest["seed"], "sizes": manifest["sizes"], "tasks": len(manifest["tasks"]),
            "samples_per_task": manifest["samples_per_task"], "step_candidates": len(manifest["candidates"]),
            "expected_counts": manifest["expected_counts"], "errors": []}


def run(args):
    step, out = Path(args.step).resolve(), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((step / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    t_begin = time.monotonic()
    results = base_results(manifest)
    parts = set(args.parts.split(","))
    results["environment"] = environment(args.python, args.kvault if "kvault" in parts else None)
    results["command"] = sys.argv
    if "kvault" in parts:
        try:
            run_ = kvault_part(args, manifest, step, out)
            results["kvault"] = report.kvault_section(manifest, run_) if "records" in run_ else None
        except ServeError as e:
            results["errors"].append("kvault serve: %s" % e)
            print("ERROR: %s" % e, file=sys.stderr, flush=True)
        (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")  # kept if what follows dies
    if "amd" in parts:
        limit = args.amd_limit_s or 0
        if args.budget_s:
            left = args.budget_s - (time.monotonic() - t_begin) - 30
            if left < 60:
                results["errors"].append("AMD's way: not run, %.0f s of the %d s budget left" % (left + 30, args.budget_s))
                left = 0
            limit = min(limit, left) if limit else left
        if not args.budget_s or limit > 0:
            try:
                results["amd"] = report.amd_section(manifest, amd_part(args, step, out, limit))
            except ServeError as e:
                results["errors"].append(str(e))
    results["wall_s"] = round(time.monotonic() - t_begin, 1)
    finish(results, out)
    return 0 if results["ok"] and (not args.require_goals or all(
        g["met"] for g in results["comparison"]["goals"].values())) else 1


def merge(paths, out):
    """One results.json from parts run in separate calls (the kvault part of one, the
    AMD part of another), on the same step (same manifest text)."""
    out.mkdir(parents=True, exist_ok=True)
    loaded = [json.loads(Path(p).read_text()) for p in paths]
    first = next((r for r in loaded if r.get("kvault")), loaded[0])
    for other in loaded:
        # AMD's side runs the amd/ files, which are the same for both formats of a seed
        keys = ("format", "lang", "seed", "sizes", "step_candidates") if other.get("kvault") else (
            "lang", "seed", "sizes", "step_candidates")
        for key in keys:
            if other[key] != first[key]:
                raise SystemExit("cannot merge: %s differs (%r, %r)" % (key, first[key], other[key]))
    results = {k: v for k, v in first.items() if k not in ("kvault", "amd", "comparison", "failures", "ok")}
    results["errors"] = [e for r in loaded for e in r.get("errors", [])]
    results["merged_from"] = [{"file": str(p), "format": r["format"], "parts": [k for k in ("kvault", "amd")
                                                                               if r.get(k)]}
                              for p, r in zip(paths, loaded)]
    for side in ("kvault", "amd"):
        have = [r[side] for r in loaded if r.get(side)]
        if len(have) > 1:
            raise SystemExit("cannot merge: more than one file has a %s part" % side)
        if have:
            results[side] = have[0]
    finish(results, out)
    return 0 if results["ok"] else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step", help="a folder written by make_step.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--merge", nargs="+", metavar="RESULTS")
    default_bin = ROOT / ".carry" / "kvault"
    ap.add_argument("--kvault", default=os.environ.get("KVAULT") or str(
        default_bin if default_bin.exists() else ROOT / "build" / "kvault"))
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--devices", help="kvault serve --devices (default: the server's)")
    ap.add_argument("--lanes", type=int, help="kvault serve --lanes-per-device (default: the server's)")
    ap.add_argument("--parts", default="kvault,amd")
    ap.add_argument("--kvault-limit-s", type=float, default=600)
    ap.add_argument("--amd-count", type=int, default=64, help="stratified subset for AMD's way (0: all)")
    ap.add_argument("--amd-workers", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--amd-limit-s", type=float, default=0)
    ap.add_argument("--amd-device", default="cuda")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="the whole run's seconds: AMD's way gets what the kvault part left, less 30 s")
    ap.add_argument("--no-prewarm", dest="prewarm", action="store_false")
    ap.add_argument("--python", default=os.environ.get("KVAULT_PYTHON") or sys.executable,
                    help="Python with PyTorch, for AMD's way")
    ap.add_argument("--work", default=None, help="where the fresh caches go (default: the temp folder)")
    ap.add_argument("--keep-work", action="store_true")
    ap.add_argument("--require-goals", action="store_true", help="exit 1 also when a goal is not met")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, Path(args.out))
    if not args.step:
        ap.error("--step is required (or --merge)")
    if not set(args.parts.split(",")) <= {"kvault", "amd"}:
        ap.error("--parts wants kvault, amd or kvault,amd")
    if "kvault" in args.parts and not Path(args.kvault).exists():
        ap.error("no kvault binary at %s (--kvault or $KVAULT)" % args.kvault)
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
