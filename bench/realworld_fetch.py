#!/usr/bin/env python3
"""Builds the real-world set (DEVSET) from mirrors of its source repositories.

    python3 bench/realworld_fetch.py MIRRORS.json DEVSET [--kernelbench-out DIR]
    python3 bench/realworld_fetch.py --mirror TAG=GITDIR ... DEVSET

MIRRORS.json maps each tag (kbleaderboard, technoabsurdist, yenhao, hzeng and
kernelbench) to a git directory holding that repository (a bare mirror will do;
nothing is checked out, every file is read with `git show COMMIT:PATH`). Each
repository is read at the commit named in SOURCES below when the mirror has it,
else at its HEAD; the commit used goes into manifest.json and sources.json and is
printed.

Writes into DEVSET (removed and made again, so two runs on the same mirrors give the
same bytes):
  tasks/<task>.py           KernelBench's task file at its commit (l1_19_ReLU.py is
                            KernelBench/level1/19_ReLU.py)
  cands/<task>.<tag>.py     one ModelNew file (torch.utils.cpp_extension.load_inline)
                            per task, from the source the task is assigned to
  manifest.json             per file: name, task, model, source (the tag),
                            source_repo, commit, path (in the source repository),
                            holdout, picked (how the model was chosen, below),
                            task_identical_to_source_copy (the source's own copy of
                            the task is KernelBench's byte for byte)
  sources.json              per repository: repo, commit, license (SPDX id; "" when
                            the repository has no licence file), tag, holdout
  subset.txt, subset6.txt   the subsets the GPU benchmarks run (7 files a source; 6)

Which task comes from which source is fixed (ASSIGN: the 195 tasks of the set as
first built on 2026-12-06; --names FILE builds another list of cands names instead).
A source's file for a task is usable when it parses as Python, defines class ModelNew
and calls load_inline; each model's first usable run counts. Of a task's usable files
the model is, in this order: the one the benchmarks recorded (RECORDED, the subset;
picked "recorded"), the one the recorded compile-only results single out (INFERRED;
"inferred"), else the model the source has given fewest files so far, tasks taken
in (level, problem) order, ties to the earlier model in SOURCES ("balanced"): the
first build's choice for those was not recorded, so a "balanced" file may be another
model's than the one measured before 2026-12-07. A task with no usable file is reported as not recovered (exit status 1).
--kernelbench-out DIR also writes KernelBench's tree at its commit there (the
harness's checkout: KernelBench/level1..3, src/) with the hash in DIR/COMMIT.
Prints the files per source and model, the commits used, the files passed over (-v
lists them) and what was not recovered. DEVSET and DIR are replaced only when they
are empty or hold an earlier output (manifest.json; COMMIT).
"""
import argparse
import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

KERNELBENCH = {"repo": "ScalingIntelligence/KernelBench", "commit": "423217d"}

QWEN = "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8"
OPUS = "claude-opus-4-1-20250805"
GEMMA = "gemma-4-26B-A4B-it (Q4_K_XL gguf)"

# tag -> repository, the commit the set was first built from, holdout, and each model's
# files in the order models are preferred at a tie: (model, {level: path template of
# problem p, KernelBench's number}). A model may have several runs (tried in turn).
SOURCES = {
    "kbleaderboard": {
        "repo": "anneouyang/KernelBenchLeaderboard", "commit": "170ca79", "holdout": False,
        # docs/assets/data.json: per "Level L: <task>" the models' entries, each naming
        # docs/assets/solutions/<file>.py; these are the display names there.
        "models": ["gpt-o1", "claude-3.5-sonnet", "gpt-4o", "deepseek-coder", "gemini-1.5-flash",
                   "llama-3.1-405b", "llama-3.1-70b"],
    },
    "technoabsurdist": {
        "repo": "technoabsurdist/KernelBench", "commit": "9202a5c", "holdout": False,
        "models": [
            (QWEN, {1: "runs/qwencoder_level1_run/level_1_problem_{p}_sample_0_kernel.py",
                    2: "runs/qwencoder_level2_run/level_2_problem_{p}_sample_0_kernel.py"}),
            (QWEN, {1: "runs/qwen3_level1_run/level_1_problem_{p}_sample_0_kernel.py"}),
            (OPUS, {2: "runs/opus4_level2_20250903_065424/problem_{p}_kernel.py"}),
            ("gemini-2.5-pro", {1: "runs/gemini_level1_run/level_1_problem_{p}_sample_0_kernel.py",
                                2: "runs/gemini_level2_run/level_2_problem_{p}_sample_0_kernel.py"}),
        ],
    },
    "yenhao": {
        "repo": "yenhao-huang/KernelBench", "commit": "62472a6", "holdout": False,
        # the runs its docs/leaderboard.md names for each model
        "models": [
            ("deepseek-v4-pro", {L: "runs/openrouter_deepseek_v4_pro_leaderboard_l%d/level_%d_problem_{p}_sample_0_kernel.py"
                                 % (L, L) for L in (1, 2)}),
            (GEMMA, {L: "runs/ralph_gemma4_cuda_all/generated_kernels/level_%d/problem_{p}.py" % L for L in (1, 2)}),
            ("gpt-5.5 (codex cli)", {L: "runs/ralph_codex_cuda_all/generated_kernels/level_%d/problem_{p}.py" % L
                                     for L in (1, 2)}),
            ("qwen3.6 (local server)", {
                L: "runs/ralph_qwen36_cuda_all_gpu1_server_isolated/generated_kernels/level_%d/problem_{p}.py" % L
                for L in (1, 2)}),
        ],
    },
    "hzeng": {
        "repo": "hzeng2000/KernelBench", "commit": "833e16d", "holdout": True,
        "models": [(m, {L: "runs/level_%d_backend_cuda_model_%s/level_%d_problem_{p}_sample_0_kernel.py" % (L, m, L)
                        for L in (1, 2)})
                   for m in ("Kimi-K2-0905", "grok-code-fast-1")],
    },
}
ORDER = ["kbleaderboard", "technoabsurdist", "yenhao", "hzeng"]

# The tasks each source gives, per level, as KernelBench's problem numbers.
ASSIGN = {
    "kbleaderboard": {1: "1-23 25-27 29-34 36-40 42-43 45 47-49 52-54 66 69 88-91 93-94 96"},
    "technoabsurdist": {1: "24 28 35 44 50-51 55-56 58-62 64-65 67-68 71 73-77 79 82-87 97 99-100",
                        2: "4-7 11 15 21 25 34 37 43 52-57"},
    "yenhao": {1: "41 46 57 63 70 72 78 80-81 92 95 98",
               2: "3 8 10 12 16 19 23 26 29 33 39 42 44 46-50 58-63 66-67 69 72 76 78 80-82 86-89 92"},
    "hzeng": {2: "2 13 17-18 20 22 24 27-28 30-32 35-36 38 40-41 45 51 64-65 68 70-71 73-75 77 79 83-85 "
                 "90-91 93-95 97-99"},
}
# Picks fixed by what the benchmarks recorded, (level, problem) -> model. RECORDED: the
# subset's 28 files (7 a source), models as bench/results/h100-2026-12-06-realworld/
# subset.csv names them; subset.txt is these files. INFERRED: where the CPU compile-only
# runs (bench/results/cpu-2026-12-07-lite-coverage/files-after.csv, units-after.csv)
# leave one model whose file has the recorded number of load_inline calls and the
# recorded compiler error at its line.
RECORDED = {
    "kbleaderboard": {(1, 10): "llama-3.1-405b", (1, 17): "gpt-4o", (1, 25): "llama-3.1-70b",
                      (1, 33): "deepseek-coder", (1, 42): "claude-3.5-sonnet", (1, 53): "claude-3.5-sonnet",
                      (1, 89): "claude-3.5-sonnet"},
    "technoabsurdist": {(1, 55): QWEN, (1, 85): QWEN, (1, 100): QWEN, (1, 64): "gemini-2.5-pro",
                        (1, 75): "gemini-2.5-pro", (2, 21): OPUS, (2, 53): OPUS},
    "yenhao": {(1, 41): "gpt-5.5 (codex cli)", (1, 80): "deepseek-v4-pro", (2, 66): "deepseek-v4-pro",
               (2, 81): "gpt-5.5 (codex cli)", (2, 3): GEMMA, (2, 16): GEMMA, (2, 50): "qwen3.6 (local server)"},
    "hzeng": {(2, 13): "grok-code-fast-1", (2, 32): "grok-code-fast-1", (2, 24): "Kimi-K2-0905",
              (2, 45): "Kimi-K2-0905", (2, 70): "Kimi-K2-0905", (2, 79): "Kimi-K2-0905", (2, 93): "Kimi-K2-0905"},
}
INFERRED = {
    "technoabsurdist": {(1, 51): "gemini-2.5-pro", (1, 67): "gemini-2.5-pro", (1, 84): "gemini-2.5-pro",
                        (2, 37): OPUS, (2, 55): OPUS},
    "hzeng": {(2, 28): "grok-code-fast-1", (2, 36): "grok-code-fast-1", (2, 75): "grok-code-fast-1",
              (2, 51): "Kimi-K2-0905", (2, 85): "Kimi-K2-0905", (2, 90): "Kimi-K2-0905"},
}
SUBSET6 = [(1, 100, "technoabsurdist"), (1, 10, "kbleaderboard"), (1, 17, "kbleaderboard"), (1, 41, "yenhao"),
           (1, 80, "yenhao"), (2, 13, "hzeng")]

LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING")
SPDX_FIRST_LINES = [("MIT License", "MIT"), ("Apache License", "Apache-2.0"),
                    ("BSD 3-Clause", "BSD-3-Clause"), ("BSD 2-Clause", "BSD-2-Clause")]


def numbers(spec):
    out = []
    for part in spec.split():
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


class Repo:
    def __init__(self, gitdir, want):
        self.gitdir = gitdir
        self.commit = self._resolve(want) or self._resolve("HEAD")
        if not self.commit:
            sys.exit("%s: neither %s nor HEAD is a commit there" % (gitdir, want))
        self.fell_back = not self.commit.startswith(want)
        listing = self._git("ls-tree", "-r", "-z", "--name-only", self.commit)
        self.paths = set(p for p in listing.decode().split("\0") if p)

    def _git(self, *args, check=True):
        r = subprocess.run(["git", "--git-dir", self.gitdir] + list(args), capture_output=True)
        if check and r.returncode:
            sys.exit("git %s: %s" % (" ".join(args), r.stderr.decode().strip()))
        return r.stdout

    def _resolve(self, rev):
        out = self._git("rev-parse", "--verify", "-q", rev + "^{commit}", check=False).decode().strip()
        return out or None

    def read(self, path):
        if path not in self.paths:
            return None
        return self._git("show", "%s:%s" % (self.commit, path))

    def license(self):
        for name in LICENSE_FILES:
            text = self.read(name)
            if text is not None:
                first = text.decode("utf-8", "replace").strip().splitlines()[0].strip()
                for head, spdx in SPDX_FIRST_LINES:
                    if first.startswith(head):
                        return spdx
                return "NOASSERTION"
        return ""


def usable(data):
    """Why a candidate file is not one ModelNew load_inline file, or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return "does not parse: line %s" % e.lineno
    nodes = list(ast.walk(tree))
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in nodes):
        return "no class ModelNew"
    calls = [n.func for n in nodes if isinstance(n, ast.Call)]
    if not any(getattr(f, "id", None) == "load_inline" or getattr(f, "attr", None) == "load_inline" for f in calls):
        return "no load_inline call"
    return None


def kernelbench_tasks(kb):
    """(level, problem) -> path of KernelBench's task file."""
    tasks = {}
    for p in kb.paths:
        m = re.match(r"KernelBench/level([123])/(\d+)_[^/]+\.py$", p)
        if m:
            tasks[(int(m.group(1)), int(m.group(2)))] = p
    return tasks


def task_name(level, path):
    return "l%d_%s" % (level, os.path.basename(path)[:-3])


def leaderboard_options(repo, tag, level, task_stem):
    """The leaderboard's files for one task in the source's model order: (model, path)."""
    if not hasattr(repo, "_board"):
        repo._board = json.loads(repo.read("docs/assets/data.json"))
    entries = repo._board.get("Level %d: %s" % (level, task_stem), [])
    by_model = {e["display_name"]: "docs/assets/solutions/%s.py" % e["file"] for e in entries}
    return [(m, by_model[m]) for m in SOURCES[tag]["models"] if m in by_model]


def run_options(tag, level, problem):
    out = []
    for model, templates in SOURCES[tag]["models"]:
        if level in templates:
            out.append((model, templates[level].format(p=problem)))
    return out


def source_task_copy(repo, tag, level, problem, task_stem):
    """The source repository's own copy of the task, as its files were generated from."""
    if tag == "kbleaderboard":
        return repo.read("docs/assets/problems/l%d_p%d.py" % (level, problem))
    return repo.read("KernelBench/level%d/%s.py" % (level, task_stem))


def wanted_names(args):
    if args.names:
        names = [l.strip() for l in open(args.names) if l.strip()]
        out = []
        for n in names:
            m = re.match(r"l([12])_(\d+)_.*\.([A-Za-z0-9_-]+)\.py$", n)
            if not m or m.group(3) not in SOURCES:
                sys.exit("%s: not a name of the form l<level>_<id>_<Task>.<source>.py" % n)
            out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
        return out
    return [(L, p, tag) for tag in ORDER for L, spec in sorted(ASSIGN[tag].items()) for p in numbers(spec)]


def fresh_dir(path, marker):
    """Empties `path` for a new output: only an empty folder or an earlier output."""
    if os.path.exists(path):
        if os.listdir(path) and not os.path.exists(os.path.join(path, marker)):
            sys.exit("%s: not empty and holds no %s; not replacing it" % (path, marker))
        shutil.rmtree(path)
    os.makedirs(path)


def export_kernelbench(kb, dest):
    fresh_dir(dest, "COMMIT")
    data = kb._git("archive", "--format=tar", kb.commit)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    with open(os.path.join(dest, "COMMIT"), "w") as f:
        f.write(kb.commit + "\n")


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="[MIRRORS.json] DEVSET")
    ap.add_argument("--mirror", action="append", default=[], metavar="TAG=GITDIR")
    ap.add_argument("--names", help="a file of cands names (one a line) to build instead of the set's")
    ap.add_argument("--kernelbench-out", help="also write KernelBench's tree at its commit here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every file passed over")
    args = ap.parse_args()
    if len(args.paths) > 2:
        ap.error("at most MIRRORS.json and DEVSET")
    mirrors = {}
    if len(args.paths) == 2:
        mirrors.update(json.load(open(args.paths[0])))
    for m in args.mirror:
        tag, _, d = m.partition("=")
        mirrors[tag] = d
    out = args.paths[-1]
    missing = [t for t in ORDER + ["kernelbench"] if t not in mirrors]
    if missing:
        ap.error("no mirror given for " + ", ".join(missing))

    kb = Repo(mirrors["kernelbench"], KERNELBENCH["commit"])
    repos = {tag: Repo(mirrors[tag], SOURCES[tag]["commit"]) for tag in ORDER}
    kb_tasks = kernelbench_tasks(kb)

    fresh_dir(out, "manifest.json")
    os.makedirs(os.path.join(out, "tasks"))
    os.makedirs(os.path.join(out, "cands"))

    # Every wanted task's usable files, one per model (its first usable run), in the
    # source's order; then the pinned picks; then the rest, balanced.
    lost, passed_over, slots = [], [], []
    for level, problem, tag in wanted_names(args):
        repo = repos[tag]
        kb_path = kb_tasks.get((level, problem))
        if kb_path is None:
            lost.append(("l%d_%d.%s" % (level, problem, tag), "KernelBench has no such task"))
            continue
        stem = os.path.basename(kb_path)[:-3]
        name = "%s.%s.py" % (task_name(level, kb_path), tag)
        if tag == "kbleaderboard":
            options = leaderboard_options(repo, tag, level, stem)
        else:
            options = run_options(tag, level, problem)
        files = {}
        for model, path in options:
            if model in files:
                continue
            data = repo.read(path)
            why = "no such file" if data is None else usable(data)
            if why is None:
                files[model] = (path, data)
            elif data is not None:
                passed_over.append((name, model, path, why))
        if not files:
            lost.append((name, "no usable file (%d tried)" % len(options)))
            continue
        slots.append({"level": level, "problem": problem, "tag": tag, "name": name, "kb_path": kb_path,
                      "stem": stem, "files": files, "model": None, "picked": None})
    uses = {tag: {} for tag in ORDER}
    for slot in slots:
        for how, table in (("recorded", RECORDED), ("inferred", INFERRED)):
            want = table.get(slot["tag"], {}).get((slot["level"], slot["problem"]))
            if want is None or slot["model"]:
                continue
            if want in slot["files"]:
                slot["model"], slot["picked"] = want, how
                uses[slot["tag"]][want] = uses[slot["tag"]].get(want, 0) + 1
            else:
                passed_over.append((slot["name"], want, "-", "the %s model has no usable file" % how))
    # The rest in (level, problem) order: the source's least used model so far, ties
    # going to the earlier model of SOURCES.
    for slot in sorted(slots, key=lambda s: (s["level"], s["problem"], s["tag"])):
        if slot["model"]:
            continue
        order = [m if isinstance(m, str) else m[0] for m in SOURCES[slot["tag"]]["models"]]
        counts = uses[slot["tag"]]
        model = min(slot["files"], key=lambda m: (counts.get(m, 0), order.index(m)))
        slot["model"], slot["picked"] = model, "balanced"
        counts[model] = counts.get(model, 0) + 1

    manifest = []
    for slot in slots:
        tag, model = slot["tag"], slot["model"]
        repo = repos[tag]
        path, data = slot["files"][model]
        task = task_name(slot["level"], slot["kb_path"])
        task_data = kb.read(slot["kb_path"])
        write(os.path.join(out, "tasks", task + ".py"), task_data)
        write(os.path.join(out, "cands", slot["name"]), data)
        copy = source_task_copy(repo, tag, slot["level"], slot["problem"], slot["stem"])
        manifest.append({
            "name": slot["name"], "task": "tasks/%s.py" % task, "model": model, "source": tag,
            "source_repo": SOURCES[tag]["repo"], "commit": repo.commit, "path": path,
            "holdout": SOURCES[tag]["holdout"], "picked": slot["picked"],
            "task_identical_to_source_copy": copy == task_data,
        })
    manifest.sort(key=lambda e: e["name"])
    names = {e["name"] for e in manifest}

    def subset_names(spec):
        out_names = []
        for level, problem, tag in spec:
            kb_path = kb_tasks.get((level, problem))
            n = kb_path and "%s.%s.py" % (task_name(level, kb_path), tag)
            if n in names:
                out_names.append(n)
        return sorted(out_names)

    sources = [{"repo": SOURCES[t]["repo"], "commit": repos[t].commit, "license": repos[t].license(),
                "tag": t, "holdout": SOURCES[t]["holdout"]} for t in ORDER]
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "sources.json"), "w") as f:
        json.dump(sources, f, indent=1)
        f.write("\n")
    subset = [(L, p, tag) for tag in ORDER for (L, p) in RECORDED.get(tag, {})]
    for fname, spec in (("subset.txt", subset), ("subset6.txt", SUBSET6)):
        with open(os.path.join(out, fname), "w") as f:
            f.write("".join(n + "\n" for n in subset_names(spec)))

    if args.kernelbench_out:
        export_kernelbench(kb, args.kernelbench_out)

    print("files: %d (%d tasks)" % (len(manifest), len({e["task"] for e in manifest})))
    for t in ORDER:
        mine = [e for e in manifest if e["source"] == t]
        models = {}
        for e in mine:
            models[e["model"]] = models.get(e["model"], 0) + 1
        print("  %-16s %-34s %s%s: %d files; %s" % (
            t, SOURCES[t]["repo"], repos[t].commit[:7], " (HEAD: %s not in the mirror)" % SOURCES[t]["commit"]
            if repos[t].fell_back else "", len(mine), ", ".join("%s %d" % kv for kv in sorted(models.items()))))
    print("  kernelbench      %-34s %s%s" % (KERNELBENCH["repo"], kb.commit[:7],
                                           " (HEAD: %s not in the mirror)" % KERNELBENCH["commit"] if kb.fell_back else ""))
    print("task copies identical to KernelBench's: %d of %d" % (
        sum(e["task_identical_to_source_copy"] for e in manifest), len(manifest)))
    print("picked: %s" % ", ".join("%s %d" % (how, sum(e["picked"] == how for e in manifest))
                                   for how in ("recorded", "inferred", "balanced")))
    print("files passed over: %d" % len(passed_over))
    reasons = {}
    for name, model, path, why in passed_over:
        key = "%s, %s" % (model, re.sub(r": line \d+$", "", why))
        reasons[key] = reasons.get(key, 0) + 1
        if args.verbose:
            print("  %s: %s %s: %s" % (name, model, path, why))
    if not args.verbose:
        for key, n in sorted(reasons.items()):
            print("  %s: %d" % (key, n))
    print("not recovered: %d" % len(lost))
    for name, why in lost:
        print("  %s: %s" % (name, why))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
