"""The lite extension build against the full one with g++, on this machine's PyTorch.

Builds src/toolchain/testdata/lite_extension.cpp (every name of include_lite/) and
binding_extension.cpp (every binding kind) twice, the full way and the lite way, with
the flags of flags.cc, then runs RealCompilerTest's call scripts (kLiteExtCalls,
kBindingCalls, read from real_compiler_test.cc so that there is one copy) against both
modules and compares every line. For a PyTorch other than the CI machine's (the H200's
2.11); RealCompilerTest does the same through BuildExtension there.

    python3 bench/lite_vs_full_gxx.py          (about a minute; exit 1 on any difference)
"""
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time

import torch
from torch.utils import cpp_extension

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(ROOT, "src", "toolchain", "testdata")


def call_script(name):
    text = open(os.path.join(ROOT, "src", "toolchain", "real_compiler_test.cc")).read()
    start = text.index("constexpr char %s[] =" % name)
    body = text[start:text.index(";\n", start)]
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
    return "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)


def flags():
    inc = []
    for p in cpp_extension.include_paths() + [sysconfig.get_paths()["include"]]:
        inc += ["-isystem", p]
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from kvault_worker.build_info import cxx_standard  # PyTorch's own -std= for extensions
    std = "-std=" + cxx_standard(cpp_extension)
    defs = ["-D_GLIBCXX_USE_CXX11_ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI), "-DTORCH_API_INCLUDE_EXTENSION_H"]
    libs = []
    for p in cpp_extension.library_paths():
        libs += ["-L" + p, "-Wl,-rpath," + p]
    libs += ["-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"]
    return ["-O2", std, "-fPIC"] + defs + inc, libs


def build(cmd):
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        raise SystemExit("build failed: " + " ".join(cmd[:3]))
    return time.time() - t0


def run(module, path, script):
    code = ("import importlib.machinery, importlib.util, torch\n"
            "loader = importlib.machinery.ExtensionFileLoader(%r, %r)\n"
            "m = importlib.util.module_from_spec(importlib.util.spec_from_file_location(%r, %r, loader=loader))\n"
            "loader.exec_module(m)\n" % (module, path, module, path)) + script
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return r.stdout + r.stderr


def main():
    cflags, libs = flags()
    work = tempfile.mkdtemp()
    print("torch", torch.__version__)
    lite_o = os.path.join(work, "lite.o")
    print("lite.o (once): %.1f s" % build(["g++"] + cflags + ["-c", os.path.join(ROOT, "include_lite/kvault_lite/lite.cc"),
                                                            "-o", lite_o]))
    status = 0
    for source, calls in (("lite_extension.cpp", "kLiteExtCalls"), ("binding_extension.cpp", "kBindingCalls")):
        src = os.path.join(TESTDATA, source)
        text = open(src).read().lower()
        half = ["-DKVAULT_LITE_HALF=1"] if ("half" in text or "bfloat" in text) else []
        out = {}
        for way in ("full", "lite"):
            name = "kv_%s_%s" % (source.split(".")[0], way)
            so = os.path.join(work, name + ".so")
            extra = ["-I", os.path.join(ROOT, "include_lite")] + half if way == "lite" else []
            objs = [lite_o] if way == "lite" else []
            secs = build(["g++"] + cflags[:3] + extra + cflags[3:] + ["-DTORCH_EXTENSION_NAME=" + name, src] + objs +
                         ["-shared", "-o", so] + libs)
            print("%s %s: %.1f s" % (source, way, secs))
            out[way] = run(name, so, call_script(calls))
        same = out["full"] == out["lite"]
        print("%s: %s (%d lines)" % (source, "same results" if same else "DIFFERENT", len(out["full"].splitlines())))
        if not same:
            status = 1
            print("--- full\n" + out["full"] + "--- lite\n" + out["lite"])
    return status


if __name__ == "__main__":
    sys.exit(main())
