# Usage: python3 bench/cpu_pch_builds.py [repeats]  (KVAULT=path/to/kvault; needs /usr/bin/python3 with torch)
# Benchmark driver for the PCH change: engine-driven builds (build.seconds, wall) and
# the exact g++ commands the engine ran, re-run under /usr/bin/time (wall/user/sys).
import json, os, re, shlex, shutil, subprocess, sys, glob, time
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
KV = os.environ.get("KVAULT", ROOT + "/build/kvault")
PCH_CACHE, PLAIN_CACHE = "/tmp/pchcache", "/tmp/pchcache-plain"
CANDS = [("relu", "examples/suite/relu.py", "examples/cpu/relu.cpp"),
         ("layer_norm", "examples/suite/layer_norm.py", "examples/cpu/layer_norm.cpp")]
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3
log = []

def load():
    return open("/proc/loadavg").read().split()[0]

def verify(task, cand, cache, pch):
    env = dict(os.environ, KVAULT_PYTHON="/usr/bin/python3", KVAULT_CACHE_DIR=cache)
    if not pch: env["KVAULT_PCH"] = "0"
    la = load()
    p = subprocess.run([KV, "verify", "--task", task, "--candidate", cand, "--backend", "cpu", "--json"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    j = json.loads(p.stdout[p.stdout.find("{"):])
    return j, la

def drop_entries(cache):  # candidate entries only; keeps <cache>/pch
    for d in glob.glob(cache + "/build/[0-9a-f][0-9a-f]"):
        shutil.rmtree(d)

def timed(argv, cwd):
    la = load()
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M"] + argv, cwd=cwd, capture_output=True, text=True)
    m = re.search(r"TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)", p.stderr)
    assert p.returncode == 0, p.stderr[-2000:]
    return dict(wall=float(m[1]), user=float(m[2]), sys=float(m[3]), maxrss_kb=int(m[4]), load=la)

def record(kind, **kw):
    kw["kind"] = kind
    log.append(kw)
    print(json.dumps(kw), flush=True)

# 1. Engine-driven. Cold: the first PCH build happens inside relu's build.
for c in (PCH_CACHE, PLAIN_CACHE): shutil.rmtree(c, ignore_errors=True)
commands = {}
for rnd in range(N):
    for name, task, cand in CANDS:
        for pch in (True, False):
            cache = PCH_CACHE if pch else PLAIN_CACHE
            drop_entries(cache)
            j, la = verify(task, cand, cache, pch)
            b = j.get("build", {})
            record("engine", round=rnd, cand=name, pch=pch, build_seconds=b.get("seconds"),
                   cache_hit=b.get("cache_hit"), status=j.get("status"), load=la,
                   cold_pch=(pch and rnd == 0 and name == "relu"))
            commands[(name, pch)] = b.get("command")

# 2. Exact commands under /usr/bin/time (compile + link into a scratch .so).
pch_meta = glob.glob(PCH_CACHE + "/pch/*/*/build.json")
assert len(pch_meta) == 1, pch_meta
pch_cmd = shlex.split(json.load(open(pch_meta[0]))["command"])
scratch = "/tmp/pchbench/scratch"
shutil.rmtree(scratch, ignore_errors=True); os.makedirs(scratch)
def retarget(argv):  # write the output into scratch instead of the engine's temp dir
    a = list(argv); i = a.index("-o"); a[i + 1] = scratch + "/" + os.path.basename(a[i + 1]); return a
# Cold PCH build (header copied into scratch), once.
hdr = pch_cmd[pch_cmd.index("c++-header") + 1]
shutil.copy(glob.glob(PCH_CACHE + "/pch/*/*/kvault_torch_pch.h")[0], scratch + "/kvault_torch_pch.h")
a = list(pch_cmd); a[a.index(hdr)] = scratch + "/kvault_torch_pch.h"; a = retarget(a)
record("gxx", what="pch-build", **timed(a, scratch))
for rnd in range(N):
    for name, _, _ in CANDS:
        for pch in (True, False):
            record("gxx", what="candidate", cand=name, pch=pch, round=rnd,
                   **timed(retarget(shlex.split(commands[(name, pch)])), scratch))
json.dump(log, open("/tmp/pchbench/results.json", "w"), indent=1)
