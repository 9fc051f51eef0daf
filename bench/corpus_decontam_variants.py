#!/usr/bin/env python3
"""Recall of `kvault corpus decontaminate` through the CLI, on planted rewrites of every
KernelBench task, and its false positives on tasks of operations KernelBench lacks
(docs/corpus.md, "Decontamination").

    python3 bench/corpus_decontam_variants.py --kernelbench .../KernelBench --out DIR \
        [--kvault build/kvault]

Writes DIR/rows.json (aig-v0.2 rows: the rewritten task as `question_code`, a
placeholder as `answer_code`), imports them into DIR/vault.db, runs `corpus
decontaminate --suite KERNELBENCH --json`, and prints one JSON object: per rewrite and
level, found/planted; the unrelated tasks flagged; the misses. Rewrites (Python's
`ast`, so every one is also re-formatted and loses its comments):

    resized    every number of a module-level assignment changed
    renamed    module constants, __init__/forward parameters renamed everywhere
    reordered  module constants moved after the functions, get_init_inputs first
    restyled   docstrings replaced, comments added, annotations dropped, super(),
               torch.nn.functional as F
    inlined    get_inputs' local variables inlined into its return
    randn      torch.rand -> torch.randn
    combined   all of the above but randn
"""
import argparse
import ast
import collections
import json
import pathlib
import subprocess
import sys


def _module_assigns(tree):
    return [st for st in tree.body if isinstance(st, ast.Assign)]


class _Resize(ast.NodeTransformer):
    def visit_Constant(self, n):
        v = n.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return n
        if isinstance(v, int):
            v = v if v in (0, 1, -1) else max(2, v // 3 + 1)
        elif v not in (0.0, 1.0):
            v = v * 1.5
        return ast.copy_location(ast.Constant(v), n)


def resized(tree):
    for st in _module_assigns(tree):
        _Resize().visit(st)
    return tree


def renamed(tree):
    mapping = {}
    for st in _module_assigns(tree):
        for target in st.targets:
            for e in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(e, ast.Name):
                    mapping[e.id] = e.id + "_v"
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for f in node.body:
                if isinstance(f, ast.FunctionDef):
                    for a in f.args.args[1:]:
                        mapping.setdefault(a.arg, "p_" + a.arg)

    class Rename(ast.NodeTransformer):
        def visit_Name(self, n):
            n.id = mapping.get(n.id, n.id)
            return n

        def visit_arg(self, a):
            a.arg = mapping.get(a.arg, a.arg)
            return a

    return Rename().visit(tree)  # keyword names (f(dim=...)) are ast.keyword: kept


def reordered(tree):
    consts = _module_assigns(tree)
    funcs = [st for st in tree.body if isinstance(st, ast.FunctionDef)][::-1]
    other = [st for st in tree.body if not isinstance(st, (ast.Assign, ast.FunctionDef))]
    tree.body = other + funcs + consts[::-1]
    return tree


def restyled(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            for a in node.args.args:
                a.annotation = None
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body = body[1:] or [ast.Pass()]
            node.body = [ast.Expr(ast.Constant("Planted docstring: " + node.name))] + body
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            node.args = []
    src = ast.unparse(tree).replace("torch.nn.functional.", "F.")
    if "F." in src:
        src = "import torch.nn.functional as F\n" + src
    lines = [line + ("  # note" if line.strip().startswith("return") else "") for line in src.splitlines()]
    return "# a planted copy\n" + "\n".join(lines) + "\n"


def inlined(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_inputs":
            values = {st.targets[0].id: st.value for st in node.body
                      if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)}

            class Inline(ast.NodeTransformer):
                def visit_Name(self, n):
                    return values.get(n.id, n) if isinstance(n.ctx, ast.Load) else n

            rest = [Inline().visit(st) for st in node.body if not (isinstance(st, ast.Assign) and
                                                                   st.targets[0].__class__ is ast.Name and
                                                                   st.targets[0].id in values)]
            node.body = rest or node.body
    return tree


def randn(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "rand" and getattr(node.value, "id", "") == "torch":
            node.attr = "randn"
    return tree


REWRITES = {
    "resized": lambda t: ast.unparse(resized(t)),
    "renamed": lambda t: ast.unparse(renamed(t)),
    "reordered": lambda t: ast.unparse(reordered(t)),
    "restyled": restyled,
    "inlined": lambda t: ast.unparse(inlined(t)),
    "randn": lambda t: ast.unparse(randn(t)),
    "combined": lambda t: restyled(inlined(reordered(renamed(resized(t))))),
}

# Operations KernelBench has no task of.
UNRELATED = {
    "roll_mix": "torch.roll(a, shifts=3, dims=1) * 0.5 + torch.flip(b, dims=[0])",
    "lerp_where": "torch.where(a > b, torch.lerp(a, b, torch.sigmoid(a - b)), b.square())",
    "outer_bias": "torch.outer(a[0], b[0]) + 1.0",
    "flip_cummax": "torch.cummax(a.flip(0), 0).values - b",
    "clamp_poly": "a.clamp(-1, 1) ** 3 - a * b",
    "rot90_add": "torch.rot90(a, 1, (0, 1)) + b.t()",
    "tril_scale": "torch.tril(a) * 2 + torch.triu(b, 1)",
    "atan2_mix": "torch.atan2(a, b.abs() + 1) * a",
}

UNRELATED_TASK = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return {expr}


S = 256


def get_inputs():
    return [torch.randn(S, S), torch.randn(S, S)]


def get_init_inputs():
    return []
"""


def build_rows(kernelbench):
    rows, truth = [], {}
    for path in sorted(p for level in ("level1", "level2", "level3") for p in (kernelbench / level).glob("*.py")):
        task = str(path.relative_to(kernelbench))[:-3]
        for kind, rewrite in REWRITES.items():
            try:
                code = rewrite(ast.parse(path.read_text()))
            except (SyntaxError, ValueError) as e:
                print("cannot rewrite %s (%s): %s" % (task, kind, e), file=sys.stderr)
                continue
            name = "%s-%d" % (kind, len(rows))
            rows.append({"kernel_name": name, "question_code": code, "language": "python",
                         "answer_code": "# placeholder %d\nprint(%d)\n" % (len(rows), len(rows))})
            truth[name] = (kind, task)
    for name, expr in UNRELATED.items():
        rows.append({"kernel_name": "unrelated-" + name, "question_code": UNRELATED_TASK.format(expr=expr),
                     "language": "python", "answer_code": "# placeholder %s\nprint(0)\n" % name})
        truth["unrelated-" + name] = ("unrelated", None)
    return rows, truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernelbench", required=True, help="the KernelBench/ folder of a checkout")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kvault", default="build/kvault")
    a = ap.parse_args()
    kb, out = pathlib.Path(a.kernelbench), pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, truth = build_rows(kb)
    (out / "rows.json").write_text(json.dumps(rows))
    vault = out / "vault.db"
    for suffix in ("", "-wal", "-shm"):
        pathlib.Path(str(vault) + suffix).unlink(missing_ok=True)
    run = lambda *args: subprocess.run([a.kvault, "corpus", *args, "--vault", str(vault)], check=True,
                                       capture_output=True, text=True).stdout
    run("import", "--from", "aig-v0.2", str(out / "rows.json"), "--json")
    report = json.loads(run("decontaminate", "--suite", str(kb), "--name", "kernelbench", "--json"))
    run("export", "--format", "records", "-o", str(out / "records.jsonl"), "--include-duplicates")
    names = {}
    with open(out / "records.jsonl") as f:
        for line in f:
            r = json.loads(line)
            names[r["id"]] = r["task"]["name"]
    hits = collections.defaultdict(set)
    for h in report["hits"]:
        hits[names[h["record"]]].add(h["task"])
    found, planted, misses, flagged = collections.Counter(), collections.Counter(), collections.defaultdict(list), []
    for name, (kind, task) in truth.items():
        if task is None:
            if hits[name]:
                flagged.append({"task": name, "flagged_as": sorted(hits[name])})
            continue
        key = "%s %s" % (kind, task.split("/")[0])
        planted[key] += 1
        if task in hits[name]:
            found[key] += 1
        else:
            misses[kind].append(task)
    print(json.dumps({
        "found": {k: "%d/%d" % (found[k], planted[k]) for k in sorted(planted)},
        "by_rewrite": {kind: "%d/%d" % (sum(found[k] for k in planted if k.startswith(kind + " ")),
                                        sum(planted[k] for k in planted if k.startswith(kind + " ")))
                       for kind in REWRITES},
        "unrelated_flagged": "%d/%d" % (len(flagged), len(UNRELATED)), "flagged": flagged,
        "misses": misses}, indent=1))


if __name__ == "__main__":
    main()
