"""The benchmark's own tools (bench/): the candidate generator's repeated contents and
the summary's count of what a step verified."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_distinct_variants_repeat_contents_under_their_own_names(tmp_path):
    make = _module("make_candidates")
    manifest = make.make(ROOT / "examples", tmp_path, {"extension": 9, "load_inline": 7}, "cuda", distinct=3)
    ext = [e for e in manifest if e["format"] == "extension"]
    assert [e["content"] for e in ext] == [0, 1, 2] * 3
    assert len({e["file"] for e in ext}) == 9  # every file its own
    text = {e["file"]: (tmp_path / e["file"]).read_text() for e in manifest}
    for e in ext:
        first = ext[e["content"]]
        assert text[e["file"]] == text[first["file"]] and e["expected"] == first["expected"]
    assert len({text[e["file"]] for e in ext}) == 3
    li = [e for e in manifest if e["format"] == "load_inline"]
    assert len({text[e["file"]] for e in li}) == 3  # same module name for the same content
    every = make.make(ROOT / "examples", tmp_path / "all", {"extension": 4}, "cuda")
    assert len({(tmp_path / "all" / e["file"]).read_text() for e in every}) == 4


def test_a_step_counts_each_candidate_once(tmp_path):
    summarize = _module("summarize_throughput")
    attempts = [{"candidate": "a.cu", "status": "passed", "seconds": 2.0},
                {"candidate": "b.cu", "status": "mismatch", "seconds": 4.0},
                {"candidate": "a.cu", "status": "passed", "seconds": 2.0}]  # recorded earlier
    row = summarize.step_summary("s", {"attempts": attempts}, 60.0, 0, {"a.cu": "passed"})
    assert row["candidates"] == 2 and row["recorded_earlier"] == 1
    assert row["throughput_per_min"] == 2.0 and row["statuses"] == {"passed": 1, "mismatch": 1}
    assert row["expected_known"] == 1 and row["expected_agree"] == 1


def test_a_stopped_forced_step_is_counted_from_its_progress_lines(tmp_path):
    summarize = _module("summarize_throughput")
    log = tmp_path / "warm.log"
    # Today's lines carry the elapsed time and a failure's message; older engines' did not.
    log.write_text("kvault eval: 5 candidate(s) for 15 task(s) on backend cuda, 14 lane(s), run 'w'\n"
                   "[1/5] relu <- relu.v000.cu: passed\n"
                   "[2/5 0m25s, ~1m26s left] relu <- relu.v001.cu: passed\n"
                   "[3/5 0m28s, ~0m40s left] relu <- relu.v000.cu: passed (recorded earlier)\n"
                   "[4/5 1m02s, ~0m15s left] relu <- relu.wrong-v003.cu: mismatch: case default seed 1: output\n"
                   "kvault: no worker zygote (the zygote ended); starting workers from scratch\n"
                   "[5/5 1m10s] relu <- relu.v004.cu: passed\n")
    data = summarize.from_log(str(log), "w")
    assert [a["candidate"] for a in data["attempts"]] == ["relu.v000.cu", "relu.v001.cu", "relu.wrong-v003.cu",
                                                          "relu.v004.cu"]
    assert [a.get("at_s") for a in data["attempts"]] == [None, 25, 62, 70]
    row = summarize.step_summary("w", json.loads(json.dumps(data)), 30.0, 124, {})
    assert row["candidates"] == 4 and row["statuses"] == {"passed": 3, "mismatch": 1}
    assert row["latency_p50_s"] is None  # the lines carry no seconds


def test_poked_variants_fall_on_every_correct_example(tmp_path):
    make = _module("make_candidates")
    manifest = make.make(ROOT / "examples", tmp_path, {"native": 64}, "cuda", poke=4)
    correct_bases = {e["base"] for e in manifest if e["expected"] == "passed"}
    poked = [e for e in manifest if e["base"].endswith("(poked)")]
    assert {e["base"][:-len(" (poked)")] for e in poked} == correct_bases
    assert all(e["expected"] == "mismatch" and "wrong-poke" in e["file"] for e in poked)
    per_base = len(manifest) // (len(correct_bases) + 1) // 4  # one in four of each
    assert all(sum(e["base"].startswith(b) for e in poked) == per_base for b in correct_bases)


def test_worker_profile_splits_a_workers_first_run_from_later_ones(tmp_path, monkeypatch):
    from kvault_worker import profiling
    report = _module("worker_profile")
    for _ in range(2):  # two workers, each with a hello and three runs
        monkeypatch.setattr(profiling.os, "getpid", lambda: 7)  # pids repeat across namespaces
        profiler = profiling.RequestProfiler(str(tmp_path))
        for op in ("hello", "run", "run", "run"):
            profiler.call(op, lambda: sum(range(1000)))
    rows = report.read_requests(str(tmp_path))
    kinds = sorted(r["kind"] for r in rows)
    assert kinds == ["hello"] * 2 + ["run#1"] * 2 + ["run#2+"] * 4
    assert all(Path(r["prof"]).exists() for r in rows)
    table = report.table(rows)
    assert "| run#2+ | 4 |" in table and "| run#1 | 2 |" in table
    assert "run#1: 2 requests" in report.functions(rows, "run#1", 5, "tottime")


# A stand-in for a KernelBench checkout: what the harness calls, with the arguments
# KernelBench's batch evaluation passes, and a utils module that imports an LLM client.
_FAKE_KERNELBENCH_EVAL = '''
import os
class Result:
    def __init__(self, **fields): self.__dict__.update(fields)
def build_compile_cache(custom_model_src, verbose, build_dir):
    os.makedirs(build_dir, exist_ok=True)
    with open(os.path.join(build_dir, "built-for"), "w") as f:
        f.write(os.environ.get("TORCH_CUDA_ARCH_LIST", ""))
    return ("BROKEN" not in custom_model_src, "", "nvcc said no" if "BROKEN" in custom_model_src else None)
def eval_kernel_against_ref(original_model_src, custom_model_src, build_dir, device, **kw):
    assert (kw["num_correct_trials"], kw["num_perf_trials"], kw["measure_performance"]) == (5, 100, True)
    assert "class Model" in original_model_src
    if "CRASH" in custom_model_src:
        os._exit(3)
    built = os.path.exists(os.path.join(build_dir, "built-for"))
    ok = built and "BROKEN" not in custom_model_src
    return Result(compiled=ok, correctness=ok and "WRONG" not in custom_model_src, runtime=1.5,
                  ref_runtime=3.0, metadata={"built_before": built})
'''


def test_the_kernelbench_harness_builds_then_evaluates_each_candidate(tmp_path):
    import subprocess
    import sys
    kb = tmp_path / "kb" / "src" / "kernelbench"
    kb.mkdir(parents=True)
    (kb / "__init__.py").write_text("")
    (kb / "utils.py").write_text("from openai import OpenAI\nimport os\n"
                                 "def set_gpu_arch(a): os.environ['TORCH_CUDA_ARCH_LIST'] = ';'.join(a)\n")
    (kb / "eval.py").write_text(_FAKE_KERNELBENCH_EVAL)
    tasks, cands = tmp_path / "tasks", tmp_path / "cands"
    tasks.mkdir(), cands.mkdir()
    for t in ("a", "b"):
        (tasks / f"{t}.py").write_text("class Model: pass\n")
    for name, text in {"a.s0": "", "a.s1": "WRONG", "b.s0": "BROKEN", "b.s1": "CRASH"}.items():
        (cands / f"{name}.py").write_text(f"# {text}\nclass ModelNew: pass\n")
    out = tmp_path / "kb.json"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "kernelbench_harness.py"),
                          "--kernelbench", str(tmp_path / "kb"), "--tasks", str(tasks), "--candidates", str(cands),
                          "--out", str(out), "--cpu-workers", "2", "--timeout", "60"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text())
    by = {r["candidate"]: r for r in data["results"]}
    assert by["a.s0.py"]["built"] and by["a.s0.py"]["correct"] and by["a.s0.py"]["metadata"]["built_before"] == "True"
    assert by["a.s1.py"]["compiled"] and not by["a.s1.py"]["correct"]
    assert not by["b.s0.py"]["built"] and by["b.s0.py"]["build_error"] == "nvcc said no"
    assert not by["b.s0.py"]["compiled"] and by["b.s0.py"]["answered"]
    assert not by["b.s1.py"]["correct"] and "process died (exit 3)" in by["b.s1.py"]["error"]
    assert by["b.s1.py"]["seconds"] < 30  # not held until the timeout
    assert data["summary"]["unanswered"] == [] and data["summary"]["correct"] == 1
    assert (tmp_path / "kernelbench-build" / "a.s0" / "built-for").read_text() == "Hopper"
