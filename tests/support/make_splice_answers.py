#!/usr/bin/env python3
"""Answers for the kernel2kernel replay test (tests/gpu/gen_kernel2kernel_gpu.sh):
from each HIP example whose translation unit has exactly one `__global__` kernel,
the kernel alone, renamed to <name>_v2 (what a model answering "rewrite this kernel"
sends), so `kvault gen --mode kernel2kernel` must splice it into the baseline and
rename it back. Also the wrong variants' kernels the same way, and the baselines
(the correct examples) in their own folder.

    make_splice_answers.py --examples examples/hip --answers DIR --baselines DIR
"""
import argparse
import glob
import os
import re


def kernels(source):
    """[(name, start, end)] of the `__global__` definitions (a `template <...>` line
    just before one belongs to it)."""
    found = []
    for m in re.finditer(r"__global__", source):
        start = source.rfind("\n", 0, m.start()) + 1
        before = source[:start].rstrip("\n")
        prev = before[before.rfind("\n") + 1:]
        if prev.lstrip().startswith("template"):
            start = before.rfind("\n") + 1
        paren = source.index("(", m.end())
        name = re.findall(r"(\w+)\s*$", source[m.end():paren])[0]
        depth, i = 0, source.index("{", paren)
        while True:
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            i += 1
            if depth == 0:
                break
        found.append((name, start, i))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", required=True)
    ap.add_argument("--answers", required=True)
    ap.add_argument("--baselines", required=True)
    a = ap.parse_args()
    os.makedirs(a.answers, exist_ok=True)
    os.makedirs(a.baselines, exist_ok=True)
    correct = {}  # task -> its kernel snippet: a wrong variant whose bug is outside the kernel is skipped
    paths = sorted(glob.glob(os.path.join(a.examples, "*.hip")), key=lambda p: ".wrong-" in p)
    for path in paths:
        base = os.path.basename(path)
        task, _, variant = base[:-len(".hip")].partition(".")
        if variant and not variant.startswith("wrong-"):
            continue
        source = open(path).read()
        found = kernels(source)
        if len(found) != 1:
            continue
        name, start, end = found[0]
        snippet = re.sub(r"\b%s\b" % re.escape(name), name + "_v2", source[start:end]) + "\n"
        if variant and correct.get(task) in (None, snippet):
            continue
        open(os.path.join(a.answers, base), "w").write(snippet)
        if not variant:
            correct[task] = snippet
            open(os.path.join(a.baselines, base), "w").write(source)


if __name__ == "__main__":
    main()
