#!/usr/bin/env bash
# The sandbox confines a candidate: no network, no reference cache, no store, no
# secrets from the engine's environment, a read-only harness, a private HOME, and
# setsid'd children die with the worker. The same candidate run with KVAULT_SANDBOX=off
# fails, which shows that the checks can fail.
# First, without PyTorch: the program the helper starts holds no capability, so it
# cannot undo the mounts (unmount a hidden path, remount the root read-write), not
# and a seccomp filter refuses it a user namespace of its own; with keep_capabilities it can, which shows
# that those checks can fail too.
source "$(dirname "$0")/lib.sh"
probe=$("$KVAULT" sandbox-exec --probe) || fail "sandbox probe failed: $probe"
echo "probe: $probe"
for layer in user_namespace network_namespace mount_namespace pid_namespace read_only_root hidden_paths syscall_filter; do
  why=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['$layer'])" "$probe")
  [ -z "$why" ] || skip "sandbox layer $layer unavailable here: $why"
done

mkdir -p "$TMP/caps/hidden" "$TMP/caps/ro" "$TMP/caps/private"
echo secret > "$TMP/caps/hidden/ref.kvt"
cat > "$TMP/caps/undo_mounts.py" <<'PY'
# Tries every way back we know of to the hidden file or to a writable root, from the
# sandbox itself and from a new user namespace inside it. Prints what each attempt
# did; the last line is "ways back: none" or "PROBLEMS: ...".
import ctypes, os, sys
hidden, ro_dir, scratch = sys.argv[1:4]
secret = os.path.join(hidden, "ref.kvt")
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MS_REC, MNT_DETACH = 32, 4096, 16384, 2
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
SYS_mount_setattr, AT_FDCWD, MOUNT_ATTR_RDONLY = 442, -100, 1  # 442 on every architecture
class MountAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("attr_set", "attr_clr", "propagation", "userns_fd")]

def tried(what, r):
    print(f"  {what}: {'succeeded' if r == 0 else os.strerror(ctypes.get_errno())}", flush=True)
    return r == 0

def status(field):
    return next((l.split(":", 1)[1].strip() for l in open("/proc/self/status") if l.startswith(field + ":")), "?")

def readable(path):
    try:
        with open(path) as f: return "secret" in f.read()
    except OSError: return False

def writable(folder):
    try: open(os.path.join(folder, "planted"), "w").close(); return True
    except OSError: return False

def attempts():
    """The mount calls that undo a hidden path or the read-only root; True for each that worked."""
    clear_ro = MountAttr(attr_clr=MOUNT_ATTR_RDONLY)
    return {
        "umount hidden": tried("umount", libc.umount2(hidden.encode(), 0)),
        "lazy umount hidden": tried("umount -l", libc.umount2(hidden.encode(), MNT_DETACH)),
        "remount / read-write": tried("remount,bind,rw /", libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None)),
        # Only /, not AT_RECURSIVE: a submount that was read-only before the sandbox
        # (/sys in a container) is locked read-only and would fail the whole call.
        "mount_setattr / read-write": tried("mount_setattr -ro /", libc.syscall(
            SYS_mount_setattr, AT_FDCWD, b"/", 0, ctypes.byref(clear_ro), ctypes.sizeof(clear_ro))),
    }

problems = []
print("in the sandbox:")
for f in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs"):
    print(f"  {f}: {status(f)}")
    if (status(f) != "1") if f == "NoNewPrivs" else (status(f).strip("0") != ""):
        problems.append(f"{f} {status(f)}")
if readable(secret): problems.append("hidden file readable before any attempt")
problems += [what for what, worked in attempts().items() if worked]
if readable(secret): problems.append("hidden file readable")
if writable(ro_dir): problems.append("read-only folder writable")

# A user namespace of its own gives the candidate every capability again, but over a
# copy of the mount table whose mounts the kernel has locked.
print("in a nested user + mount namespace:", flush=True)
r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(r)
    found = []
    if tried("unshare -U -m", libc.unshare(CLONE_NEWUSER | CLONE_NEWNS)):
        found.append("a nested user namespace was created (no syscall filter)")
        print(f"  CapEff: {status('CapEff')} (of the nested namespace)")
        attempts()
        peek = os.path.join(scratch, "peek")
        os.makedirs(peek, exist_ok=True)
        parent = os.path.dirname(hidden)
        # A bind mount of the hidden path's parent without its submounts would show
        # the hidden file; the kernel refuses it (locked submounts). With them, the
        # copy of the hidden mount is locked as well.
        tried("bind parent of hidden", libc.mount(parent.encode(), peek.encode(), None, MS_BIND, None))
        if readable(os.path.join(peek, os.path.basename(hidden), "ref.kvt")): found.append("hidden file readable through a bind mount")
        tried("rbind parent of hidden", libc.mount(parent.encode(), peek.encode(), None, MS_BIND | MS_REC, None))
        copy = os.path.join(peek, os.path.basename(hidden))
        tried("umount the copy of hidden", libc.umount2(copy.encode(), MNT_DETACH))
        if readable(os.path.join(copy, "ref.kvt")): found.append("hidden file readable through an rbind copy")
        if readable(secret): found.append("hidden file readable")
        if writable(ro_dir): found.append("read-only folder writable")
    os.write(w, ",".join(f"nested: {p}" for p in found).encode())
    os._exit(0)
os.close(w)
nested = os.read(r, 4096).decode()
os.waitpid(child, 0)
problems += [p for p in nested.split(",") if p]
print("PROBLEMS: " + ", ".join(problems) if problems else "ways back: none")
PY
PYTHON3=$(python3 -c "import sys; print(sys.executable)")
caps_plan() {  # $1: keep_capabilities
  echo '{"mode":"auto","pid_namespace":true,"network_namespace":true,"mount_namespace":true,'\
'"limits":{"cpu_seconds":0,"address_space_bytes":0,"file_size_bytes":0,"open_files":0,"processes":0,"no_core_dumps":true},'\
'"writable":["/dev"],"hidden":["'"$TMP/caps/hidden"'"],"private_dir":"'"$TMP/caps/private"'",'\
'"scrub_environment":false,"env_allow":[],"env_set":[],"fresh_proc":false,"syscall_filter":true,"keep_capabilities":'"$1"'}'
}
undo_mounts() {
  "$KVAULT" sandbox-exec "$(caps_plan "$1")" -- "$PYTHON3" "$TMP/caps/undo_mounts.py" \
    "$TMP/caps/hidden" "$TMP/caps/ro" "$TMP/caps/private" > "$TMP/caps/$1.out" 2>&1
  echo "sandbox-exec exited $?" >> "$TMP/caps/$1.out"
  cat "$TMP/caps/$1.out"
}
undo_mounts false
grep -qx "ways back: none" "$TMP/caps/false.out" || fail "the sandboxed program could undo the mounts"
grep -qx "sandbox-exec exited 0" "$TMP/caps/false.out" || fail "the capability checks did not run to the end"
rm -f "$TMP/caps/ro/planted"
undo_mounts true
grep -q "^PROBLEMS: .*CapEff.*umount hidden.*hidden file readable" "$TMP/caps/true.out" ||
  fail "with keep_capabilities the same checks should find the ways back"
echo "without capabilities the mounts stay; with keep_capabilities the same checks undo them"

need_torch
export KVAULT_CACHE_DIR="$TMP/cache"
mkdir -p "$TMP/cands" "$KVAULT_CACHE_DIR/refs/ab" && echo secret > "$KVAULT_CACHE_DIR/refs/ab/leak"
cat > "$TMP/cands/relu.py" <<PY
import os, socket, subprocess, torch, torch.nn as nn
problems = []
def check(ok, what):
    if not ok: problems.append(what)
check(not os.path.exists("$KVAULT_CACHE_DIR/refs/ab/leak"), "reference cache readable")
check(os.path.getsize("$TMP/store.db") == 0, "store readable")
check("KVAULT_TEST_SECRET" not in os.environ, "engine environment leaked")
pid = os.fork()  # the syscall filter: no user namespace of its own
if pid == 0:
    import ctypes
    os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0 else 1)
check(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1, "a user namespace could be created")
check(os.environ.get("HOME", "").startswith("$KVAULT_CACHE_DIR/tmp/worker-"), "HOME not private")
try:
    open("$KVAULT_SOURCE_ROOT/python/kvault_worker/planted.py", "w").close(); problems.append("harness writable")
except OSError: pass
try:
    s = socket.create_connection(("1.1.1.1", 53), timeout=2); problems.append("network reachable")
except OSError: pass
# A child that leaves the process group; it must not outlive the worker.
subprocess.Popen(["sleep", "1000.$$"], start_new_session=True)
try:
    open("$TMP/outside", "w").close(); problems.append("files outside the private folder writable")
except OSError: pass
if problems: raise RuntimeError("sandbox leaks: " + ", ".join(problems))
class ModelNew(nn.Module):
    def forward(self, x): return torch.relu(x)
PY
run() {
  KVAULT_TEST_SECRET=1 "$KVAULT" eval --suite "$KVAULT_SOURCE_ROOT/examples/suite" --candidates "$TMP/cands" \
    --db "$TMP/store.db" --run "$1" --no-timing --json --force > "$TMP/$1.json" 2> "$TMP/$1.err"
  json_get "$TMP/$1.json" "j['attempts'][0]['status']"
}
KVAULT_SANDBOX=auto run sandboxed | tee "$TMP/s1"
grep -qx passed "$TMP/s1" || { cat "$TMP/sandboxed.json" "$TMP/sandboxed.err"; fail "sandboxed candidate did not pass"; }
sleep 1
pgrep -f "^sleep 1000[.]$$\$" >/dev/null && fail "a setsid child outlived its sandboxed worker"
KVAULT_SANDBOX=off run unsandboxed | tee "$TMP/s2"
pkill_own() { for p in $(pgrep -f "^sleep 1000[.]$$\$"); do kill "$p"; done; }
pkill_own
grep -qx load_error "$TMP/s2" || { cat "$TMP/unsandboxed.json"; fail "without the sandbox the checks should fail"; }
grep -q "sandbox leaks" "$TMP/unsandboxed.json" || fail "expected the leak list in the message"
echo "sandbox confines the candidate; without it the same candidate is caught leaking"
