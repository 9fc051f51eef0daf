#!/usr/bin/env python3
"""Writes the inputs of one RL step: 64 tasks x 8 samples = 512 distinct candidates.

Per task (ops.py: elementwise activations, scaled/shifted and two-input ops,
per-channel ops with parameters, reductions over a dimension, softmax and
normalisations, small matmuls), eight samples in a seeded order:
  5 correct   different launch parameters (threads, items per thread, unroll, tile)
  1 wrong     off by one (an index shifted, or the last element of a reduction dropped)
  1 wrong     wrong math (a wrong constant, or a slip such as a missing sqrt)
  1 broken    a compile error (undeclared name, missing semicolon, write through a
              const pointer, undefined function, invalid conversion)
Every candidate's first lines name its task, sample, seed and a tag derived from
them, so no two candidates of one step, nor of two steps of different seeds, share
their text: every build is cold, as in a real RL step where every sample is new code.

Layout under --out:
  tasks/<task>.py             KernelBench format (Model, get_inputs, get_init_inputs;
                              module_fn twins where the model has parameters;
                              KVAULT_META with the tolerances both harnesses use)
  native/<task>.s<k>.cu|cpp   --format native (docs/native-format.md)
  extension/<task>.s<k>.cu|cpp  --format extension (docs/candidate-formats.md)
  (--format kernelbench: kvault gets the amd/ files themselves, load_inline and all)
  amd/<task>.s<k>.py          the same kernel as a KernelBench ModelNew built by
                              torch.utils.cpp_extension.load_inline (amd_way.py)
  manifest.json               tasks, and per candidate: index in the batch, files,
                              kind, bug and expected status

  make_step.py --out DIR [--format native|extension|kernelbench] [--seed N] [--lang cuda|cpu]
               [--sizes gpu|cpu] [--tasks 64]

--lang cpu writes C++ candidates (and, by default, small sizes) for a dry run on the
CPU backend; the kernels compute the same math in the same order of passes.
"""
import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import codegen  # noqa: E402
from ops import OPS  # noqa: E402

SAMPLES = 8
KINDS = ["correct"] * 5 + ["offbyone", "wrong", "broken"]
EXPECTED = {"correct": "passed", "offbyone": "mismatch", "wrong": "mismatch", "broken": "compile_error"}

CUDA_VARIANTS = {
    "ew": [{"threads": t, "items": i} for t in (128, 256, 512, 1024) for i in (1, 2, 4, 8)],
    "row": [{"threads": t, "unroll": u} for t in (32, 64, 128, 256, 512) for u in (1, 2, 4)],
    "mid": [{"threads": t, "unroll": u} for t in (64, 128, 256, 512) for u in (1, 4, 8)],
    "gemm": [{"tile": t, "unroll": u} for t, u in ((16, 1), (16, 4), (16, 16), (32, 1), (32, 4), (32, 8),
                                                   (32, 32))],
}
CPU_VARIANTS = {
    "ew": [{"chunk": c} for c in (256, 1024, 4096, 16384, 65536)],
    "lanes": [{"lanes": n} for n in (1, 2, 4, 8, 16)],
}


def variants_for(op, lang):
    fam = op["family"]
    if lang == "cpu":
        return CPU_VARIANTS["ew" if fam.startswith("ew") else "lanes"]
    if fam.startswith("ew"):
        return CUDA_VARIANTS["ew"]
    if fam in ("rowred", "rownorm"):
        cols = op["dims"]["gpu"][-1]
        return [v for v in CUDA_VARIANTS["row"] if v["threads"] <= max(32, cols)]
    return CUDA_VARIANTS["mid" if fam == "midred" else "gemm"]


def describe(variant):
    return ", ".join("%s %s" % kv for kv in sorted(variant.items()))


def make(out, fmt, seed, lang, sizes, n_tasks):
    ext = ".cu" if lang == "cuda" else ".cpp"
    kernelbench = fmt == "kernelbench"  # the amd/ files are kvault's candidates too
    for sub in ("tasks", "amd") if kernelbench else ("tasks", fmt, "amd"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    tasks, candidates, seen = [], [], set()
    for t, op in enumerate(OPS[:n_tasks]):
        name = "t%02d_%s" % (t, op["name"])
        task_file = Path("tasks") / (name + ".py")
        (out / task_file).write_text(codegen.task_source(op, t, sizes))
        tasks.append({"name": name, "file": str(task_file), "family": op["family"], "reference": op["torch"],
                      "rtol": op["tol"][0], "atol": op["tol"][1]})
        rng = random.Random("%d/%s" % (seed, name))
        kinds = KINDS[:]
        rng.shuffle(kinds)
        pool = variants_for(op, lang)
        correct = rng.sample(pool, 5) if len(pool) >= 5 else [pool[i % len(pool)] for i in range(5)]
        broken_kinds = sorted(codegen.BROKEN)
        for k, kind in enumerate(kinds):
            variant = correct.pop() if kind == "correct" else rng.choice(pool)
            bug = {"correct": None, "offbyone": "offbyone", "wrong": "wrong",
                   "broken": "broken:" + rng.choice(broken_kinds)}[kind]
            tag = hashlib.sha256(("%d/%s/%d" % (seed, name, k)).encode()).hexdigest()[:10]
            header = ["%s, sample %d of the RL-step benchmark (seed %d, %s)" % (name, k, seed, tag),
                      "launch: " + describe(variant)]
            cid = "%s.s%d" % (name, k)
            amd = codegen.amd_source(op, lang, variant, bug, header, "rl%d_%s_s%d_%s" % (seed, name, k, tag))
            code = amd if kernelbench else codegen.candidate_source(op, lang, fmt, variant, bug, header)
            digest = hashlib.sha256(code.encode()).hexdigest()
            if digest in seen:
                raise SystemExit("two candidates with the same text: %s" % cid)
            seen.add(digest)
            amd_file = Path("amd") / (cid + ".py")
            cand_file = amd_file if kernelbench else Path(fmt) / (cid + ext)
            (out / cand_file).write_text(code)
            (out / amd_file).write_text(amd)
            candidates.append({"index": len(candidates), "id": cid, "task": name, "sample": k, "kind": kind,
                               "bug": bug, "expected": EXPECTED[kind], "file": str(cand_file),
                               "amd_file": str(amd_file),
                               "language": "python" if kernelbench else "cuda" if lang == "cuda" else "cpp",
                               "variant": variant, "sha256": digest})
    counts = {}
    for c in candidates:
        counts[c["expected"]] = counts.get(c["expected"], 0) + 1
    manifest = {"generator": "bench/rl_step/make_step.py", "seed": seed, "format": fmt, "lang": lang,
                "sizes": sizes, "samples_per_task": SAMPLES, "expected_counts": counts,
                "tasks": tasks, "candidates": candidates}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--format", default="native", choices=("native", "extension", "kernelbench"))
    ap.add_argument("--seed", type=int, default=0, help="another seed: other (equivalent) candidate text")
    ap.add_argument("--lang", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--sizes", choices=("gpu", "cpu"), help="task sizes (default: gpu for cuda, cpu for cpu)")
    ap.add_argument("--tasks", type=int, default=len(OPS), help="the first N tasks only (dry runs)")
    args = ap.parse_args(argv)
    if not 1 <= args.tasks <= len(OPS):
        ap.error("--tasks wants 1..%d" % len(OPS))
    if (args.out / "manifest.json").exists():
        ap.error("%s already holds a step; give an empty folder" % args.out)
    sizes = args.sizes or ("gpu" if args.lang == "cuda" else "cpu")
    m = make(args.out, args.format, args.seed, args.lang, sizes, args.tasks)
    print("%d tasks, %d candidates (%s, %s, seed %d): %s" % (
        len(m["tasks"]), len(m["candidates"]), args.format, args.lang, args.seed,
        ", ".join("%s %d" % kv for kv in sorted(m["expected_counts"].items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
