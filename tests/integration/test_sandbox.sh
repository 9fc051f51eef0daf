#!/usr/bin/env bash
# The sandbox confines a candidate: no network, no reference cache, no store, no
# secrets from the engine's environment, a read-only harness, a private HOME, and
# setsid'd children die with the worker. The same candidate run with KVAULT_SANDBOX=off
# fails, which shows that the checks can fail.
# First, without PyTorch: the program the helper starts holds no capability, so it
# cannot undo the mounts (unmount a hidden path, remount the root read-write), not
# and a seccomp filter refuses it a user namespace of its own; with keep_capabilities it can, which shows
# that those checks can fail too. Then the private layers (its own /dev/shm and IPC, hidden folders
# with a kept one), and last the shared-state cheats of examples/adversarial across workers and runs,
# each with the sandbox (no gain, no harm) and without it (the cheat wins).
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

# Private scratch, IPC and hidden folders, without PyTorch: the program gets a /dev/shm of
# its own (bounded, with HOME and TMPDIR in it), sees no System V IPC object of the host,
# sees only the kept folder of a hidden one, and leaves nothing on the host. The same
# program with a plan that has none of these finds every leak.
[ -n "$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('ipc_namespace','missing'))" "$probe")" ] &&
  skip "sandbox layer ipc_namespace unavailable here"
KEY=$(( 0x4B560000 + ($$ & 0xffff) ))
KEY_INSIDE=$(( KEY + 0x10000 ))
sysv() {  # sysv create|exists|remove KEY: a System V shared-memory segment of the host
  python3 - "$@" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
op, key = sys.argv[1], int(sys.argv[2])
if op == "create":
    sys.exit(0 if libc.shmget(key, 4096, 0o1000 | 0o600) >= 0 else 1)
shmid = libc.shmget(key, 0, 0)
if op == "exists":
    sys.exit(0 if shmid >= 0 else 1)
if shmid >= 0:
    libc.shmctl(shmid, 0, None)  # IPC_RMID
PY
}
mkdir -p "$TMP/scr/hidden/keep/me" "$TMP/scr/hidden/other" "$TMP/scr/private"
echo secret > "$TMP/scr/hidden/other/answers"
SHM_MARK="/dev/shm/kvault-sandbox-test-$$"
echo host > "$SHM_MARK"
sysv create "$KEY" || fail "cannot create a System V segment on the host"
cleanup_host() {
  rm -rf "$SHM_MARK" "/dev/shm/kvault-left-$$" "/dev/shm/kvault-fill-$$"
  sysv remove "$KEY"; sysv remove "$KEY_INSIDE"
}
trap 'cleanup_host; rm -rf "$TMP"' EXIT
cat > "$TMP/scr/inside.py" <<'PY'
# Prints "private: all" or "PROBLEMS: ...".
import ctypes, errno, os, sys
mark, hidden, kept, key, key_inside, pid = sys.argv[1:7]
libc = ctypes.CDLL(None, use_errno=True)
problems = []
if os.path.exists(mark): problems.append("host /dev/shm visible")
if libc.shmget(int(key), 0, 0) >= 0: problems.append("host System V segment visible")
libc.shmget(int(key_inside), 4096, 0o1000 | 0o600)  # must end with the namespace
try:
    with open("/dev/shm/kvault-fill-" + pid, "wb") as f:
        for _ in range(8):
            f.write(b"\0" * (1 << 20))
            f.flush()
    problems.append("/dev/shm unbounded")
except OSError as e:
    if e.errno != errno.ENOSPC: problems.append("filling /dev/shm: %s" % e)
os.unlink("/dev/shm/kvault-fill-" + pid)
for d in ("/dev/shm/home", "/dev/shm/tmp"):
    if not (os.path.isdir(d) and os.access(d, os.W_OK)): problems.append(d + " missing")
with open("/dev/shm/kvault-left-" + pid, "w") as f:
    f.write("left behind")
seen = sorted(os.listdir(hidden))
if seen != ["keep"] or os.listdir(os.path.join(hidden, "keep")) != ["me"]:
    problems.append("hidden folder shows %s" % seen)
if os.path.exists(os.path.join(hidden, "other", "answers")): problems.append("hidden file readable")
try:
    open(os.path.join(kept, "written"), "w").close()
except OSError as e:
    problems.append("kept folder not writable: %s" % e)
print("PROBLEMS: " + ", ".join(problems) if problems else "private: all")
PY
scratch_plan() {  # $1: true for the private layers, false for none of them
  local extra='"ipc_namespace":false,"private_scratch_bytes":0,"hidden":[],"visible":[],"writable":["/dev"]'
  [ "$1" = true ] && extra='"ipc_namespace":true,"private_scratch_bytes":4194304,"hidden":["'"$TMP/scr/hidden"'"],''"visible":["'"$TMP/scr/hidden/keep/me"'"],"writable":["'"$TMP/scr/hidden/keep/me"'"]'
  echo '{"mode":"auto","pid_namespace":true,"network_namespace":true,"mount_namespace":true,'"$extra"',''"limits":{"cpu_seconds":0,"address_space_bytes":0,"file_size_bytes":0,"open_files":0,"processes":0,"no_core_dumps":true},''"private_dir":"'"$TMP/scr/private"'","scrub_environment":false,"env_allow":[],"env_set":[],''"fresh_proc":false,"syscall_filter":true}'
}
scratch_run() {
  "$KVAULT" sandbox-exec "$(scratch_plan "$1")" -- "$PYTHON3" "$TMP/scr/inside.py" "$SHM_MARK" \
    "$TMP/scr/hidden" "$TMP/scr/hidden/keep/me" "$KEY" "$KEY_INSIDE" "$$" 2>&1 | tee "$TMP/scr/$1.out"
}
scratch_run true
grep -qx "private: all" "$TMP/scr/true.out" || fail "the private layers leak"
[ -e "/dev/shm/kvault-left-$$" ] && fail "a file the sandboxed program left in its /dev/shm is on the host"
sysv exists "$KEY_INSIDE" && fail "a System V segment made in the sandbox outlived it"
[ -f "$TMP/scr/hidden/keep/me/written" ] || fail "the kept folder's file did not reach the host"
scratch_run false
for leak in "host /dev/shm visible" "host System V segment visible" "/dev/shm unbounded" "hidden file readable"; do
  grep -q "$leak" "$TMP/scr/false.out" || fail "without the private layers the check should find: $leak"
done
[ -e "/dev/shm/kvault-left-$$" ] || fail "without the private layers the left file should be on the host"
cleanup_host
echo "private /dev/shm, IPC and hidden folders hold; without them the same program finds every leak"

need_torch
export KVAULT_CACHE_DIR="$TMP/cache"
mkdir -p "$TMP/cands" "$KVAULT_CACHE_DIR/refs/ab" && echo secret > "$KVAULT_CACHE_DIR/refs/ab/leak"
# Another run's cache beside this one, and host state a candidate must not see.
mkdir -p "$TMP/othercache/refs/cd" "$TMP/othercache/build" && echo secret > "$TMP/othercache/refs/cd/leak"
mkdir -p "$TMP/enginehome/.ssh" && echo secret > "$TMP/enginehome/.ssh/id_test"  # the engine user's keys
echo host > "$SHM_MARK"
sysv create "$KEY" || fail "cannot create a System V segment on the host"
cat > "$TMP/cands/relu.py" <<PY
import ctypes, os, socket, subprocess, sys, torch, torch.nn as nn
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
check(os.environ.get("HOME") == "/dev/shm/home" and os.environ.get("TMPDIR") == "/dev/shm/tmp", "HOME not private")
check(os.environ.get("TORCH_EXTENSIONS_DIR", "").startswith("/dev/shm/"), "extension builds shared")
check(not os.path.exists("$SHM_MARK"), "host /dev/shm visible")
check(ctypes.CDLL(None).shmget($KEY, 0, 0) < 0, "host System V segment visible")
check(not [p for p in sys.path if os.access(p or os.getcwd(), os.W_OK)], "writable folder on sys.path")
check(not os.path.exists("$TMP/othercache/refs/cd/leak"), "another cache's reference readable")
check(not os.path.exists("$TMP/enginehome/.ssh/id_test"), "the engine user's keys readable")
check(set(os.listdir("$KVAULT_CACHE_DIR")) <= {"build", "tmp"}, "cache folders beyond build/ visible")
seen = os.listdir("$KVAULT_CACHE_DIR/tmp")
check(len(seen) == 1 and (os.getcwd() + "/").startswith("$KVAULT_CACHE_DIR/tmp/" + seen[0] + "/"),
      "other folders of the cache's tmp/ visible")
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
  HOME="$TMP/enginehome" KVAULT_TEST_SECRET=1 "$KVAULT" eval --suite "$KVAULT_SOURCE_ROOT/examples/suite" --candidates "$TMP/cands" \
    --db "$TMP/store.db" --run "$1" --no-timing --json --force > "$TMP/$1.json" 2> "$TMP/$1.err"
  json_get "$TMP/$1.json" "j['attempts'][0]['status']"
}
KVAULT_SANDBOX=auto run sandboxed | tee "$TMP/s1"
grep -qx passed "$TMP/s1" || { cat "$TMP/sandboxed.json" "$TMP/sandboxed.err"; fail "sandboxed candidate did not pass"; }
sleep 1
pgrep -f "^sleep 1000[.]$$\$" >/dev/null && fail "a setsid child outlived its sandboxed worker"
KVAULT_SANDBOX=off run unsandboxed | tee "$TMP/s2"
rm -f "$KVAULT_SOURCE_ROOT/python/kvault_worker/planted.py"  # what the unconfined run wrote into the harness
pkill_own() { for p in $(pgrep -f "^sleep 1000[.]$$\$"); do kill "$p"; done; }
pkill_own
grep -qx load_error "$TMP/s2" || { cat "$TMP/unsandboxed.json"; fail "without the sandbox the checks should fail"; }
grep -q "sandbox leaks" "$TMP/unsandboxed.json" || fail "expected the leak list in the message"
echo "sandbox confines the candidate; without it the same candidate is caught leaking"

# Cheats of examples/adversarial that work through state shared between workers, each
# run with the sandbox (it must gain nothing and harm no one) and without it (the same
# cheat must win or do harm, which shows that the check can fail). Runs from a folder of
# its own with HOME in $TMP: without the sandbox the cheats write where they can.
adv="$KVAULT_SOURCE_ROOT/examples/adversarial"
mkdir -p "$TMP/home"
cheat_eval() {  # MODE NAME CACHE [FLAGS...] -- CANDIDATES...: prints "candidate status" per attempt
  local mode=$1 name=$2 cache=$3 flags=() c
  shift 3
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  mkdir -p "$TMP/$name/cands" "$TMP/$name/run"
  for c in "$@"; do cp "$adv/kernelbench/$c" "$TMP/$name/cands/"; done
  (cd "$TMP/$name/run" && HOME="$TMP/home" KVAULT_CACHE_DIR="$cache" KVAULT_SANDBOX=$mode "$KVAULT" eval \
    --suite "$adv/tasks" --candidates "$TMP/$name/cands" --backend cpu --jobs 1 --run-timeout 60 \
    --db "$TMP/$name.db" --run "$name" --json "${flags[@]}" > "$TMP/$name.json" 2> "$TMP/$name.err")
  # Exit 3 says an attempt ended in infra_error: its status is checked below, like any.
  local rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$TMP/$name.err"; fail "eval $name exited with an error ($rc)"; }
  python3 -c 'import json, os, sys
for a in json.load(open(sys.argv[1]))["attempts"]:
    print(os.path.basename(a["candidate"]), a["status"], a.get("message", "")[:200])' "$TMP/$name.json" |
    tee "$TMP/$name.status"
}
status_of() { awk -v c="$2" '$1 == c {print $2}' "$TMP/$1.status"; }
cleanup_answers() { rm -rf /dev/shm/kvault-answers /tmp/kvault-answers "$TMP/home/kvault-answers"; sysv remove $((0x4B564131)); }
trap 'cleanup_host; cleanup_answers; rm -rf "$TMP"' EXIT
cleanup_answers

# 1. Answers left in /dev/shm, /tmp, $HOME and System V IPC by one candidate, replayed by
#    a candidate of a later kvault run.
for mode in auto off; do
  cheat_eval $mode "leave-$mode" "$TMP/cache-shm-$mode" --no-timing -- relu.shm-leave.py
  [ "$(status_of "leave-$mode" relu.shm-leave.py)" = passed ] || fail "relu.shm-leave should pass ($mode)"
  cheat_eval $mode "replay-$mode" "$TMP/cache-shm-$mode" --no-timing -- relu.shm-replay.py
done
[ "$(status_of replay-auto relu.shm-replay.py)" = mismatch ] || fail "answers left by a sandboxed candidate were replayed"
[ "$(status_of replay-off relu.shm-replay.py)" = passed ] ||
  fail "without the sandbox the replay should win (the check cannot fail otherwise)"
cleanup_answers

# 2. A module planted where a later worker of the same lane imports from.
for mode in auto off; do
  cheat_eval $mode "plant-$mode" "$TMP/cache-plant-$mode" --no-timing -- relu.plant-module.py relu.plant-victim.py
done
for c in relu.plant-module.py relu.plant-victim.py; do
  [ "$(status_of plant-auto $c)" = passed ] || fail "$c should pass with the sandbox"
done
[ "$(status_of plant-off relu.plant-victim.py)" = passed ] &&
  fail "without the sandbox the planted module should break the honest candidate"

# 3. Directories where the reference worker writes, in the verification scratch, and files
#    in other workers' folders (timing on: the re-check's reference output goes there).
for mode in auto off; do
  cheat_eval $mode "sabotage-$mode" "$TMP/cache-sabotage-$mode" -- relu.sabotage-scratch.py relu.py
done
for c in relu.sabotage-scratch.py relu.py; do
  [ "$(status_of sabotage-auto $c)" = passed ] || fail "$c should pass with the sandbox"
done
case "$(status_of sabotage-off relu.sabotage-scratch.py)" in
  task_error|infra_error) ;;
  *) fail "without the sandbox the sabotage should be blamed on the task or the engine" ;;
esac

# 4. Reference outputs of another cache on the host, found by input digest.
cheat_eval auto fill "$TMP/cache-filled" --no-timing -- relu.py
[ "$(status_of fill relu.py)" = passed ] || fail "the honest relu should pass"
for mode in auto off; do
  cheat_eval $mode "other-$mode" "$TMP/cache-other-$mode" --no-timing -- relu.other-cache.py
done
[ "$(status_of other-auto relu.other-cache.py)" = mismatch ] || fail "another cache's references were replayed"
[ "$(status_of other-off relu.other-cache.py)" = passed ] ||
  fail "without the sandbox the other cache's references should be replayed"
echo "shared-state cheats gain nothing and harm no one with the sandbox; without it they win"
