# score, compare and report over a small store made by `kvault eval`; the report
# renders in headless Chromium without console errors (docs/scoring.md).
source "$(dirname "$0")/lib.sh"
need_torch
S="$TMP/suite"; A="$TMP/cands-a"; B="$TMP/cands-b"; mkdir -p "$S" "$A" "$B"
task() { printf 'import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.%s(x)\ndef get_inputs():\n    return [torch.randn(256, 64)]\ndef get_init_inputs():\n    return []\n' "$1" > "$S/$1.py"; }
task relu; task tanh
printf 'import torch\nthis is not python\n' > "$S/broken.py"
cand() { printf 'import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        %s\n' "$2" > "$1"; }
# Run a: relu 1 of 2 correct, tanh 0 of 2 (both ran), broken only task_error.
cand "$A/relu.ok.py" "return torch.relu(x)"
cand "$A/relu.wrong.py" "return x.abs()"
cand "$A/tanh.wrong.py" "return x"
cand "$A/tanh.wrong2.py" "return x * 0.5"
cand "$A/broken.py" "return x"
# Run b: both correct.
cand "$B/relu.py" "return torch.relu(x)"
cand "$B/tanh.py" "return torch.tanh(x)"
DB="$TMP/kv.db"
for r in a b; do
  dir="$A"; [ $r = b ] && dir="$B"
  "$KVAULT" eval --suite "$S" --candidates "$dir" --backend cpu --run-timeout 20 --db "$DB" --run $r \
    > "$TMP/eval-$r.txt" 2>&1 || { cat "$TMP/eval-$r.txt"; fail "eval $r exited $?"; }
done

"$KVAULT" score --suite "$S" --run a --k 1,2,3 --db "$DB" --json > "$TMP/score.json" || fail "score exited $?"
python3 - "$TMP/score.json" <<'PY' || fail "wrong scores"
import json, sys
j = json.load(open(sys.argv[1]))
def near(a, b): return a is not None and abs(a - b) < 1e-9
# relu n=2 c=1, tanh n=2 c=0; broken excluded.
checks = {
  "pass@1": near(j["pass_at_k"]["1"], 0.25), "pass@2": near(j["pass_at_k"]["2"], 0.5),
  "pass@3 (n<k)": near(j["pass_at_k"]["3"], 0.5), "Comp@2": near(j["comp_at_k"]["2"], 1.0),
  "Corr@2": near(j["corr_at_k"]["2"], 0.5), "fast_0": near(j["fast_p"]["0"], 0.5),
  "excluded": j["excluded"] == ["broken"], "scored": j["scored"] == 2 and j["tasks"] == 3,
  "ci": j["ci"]["pass_at_k"]["1"][0] <= 0.25 <= j["ci"]["pass_at_k"]["1"][1],
}
bad = [k for k, ok in checks.items() if not ok]
print(json.dumps({k: j[k] for k in ("pass_at_k", "comp_at_k", "corr_at_k", "fast_p", "excluded")}))
if bad: print("bad:", bad); sys.exit(1)
PY
"$KVAULT" score --suite "$S" --run a --db "$DB" > "$TMP/score.txt" || fail "score (text) exited $?"
grep -q "pass@1" "$TMP/score.txt" || fail "score text lacks pass@1"
"$KVAULT" score --suite "$S" --run nosuchrun --db "$DB"; [ $? -eq 2 ] || fail "unknown run should exit 2"
"$KVAULT" score --suite "$S" --run a --db "$TMP/missing.db"; [ $? -eq 2 ] || fail "missing store should exit 2"

"$KVAULT" compare --run a --run b --db "$DB" --json > "$TMP/cmp.json" || fail "compare exited $?"
python3 - "$TMP/cmp.json" <<'PY' || fail "wrong comparison"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["common_tasks"] == 2, j
assert j["solved"]["b_only"] == 1 and j["solved"]["both"] == 1, j
assert abs(j["solved"]["sign_test_p"] - 1.0) < 1e-12, j
assert sorted(t["task"] for t in j["differing_tasks"]) == ["relu", "tanh"], j
PY
"$KVAULT" compare --run a --run b --db "$DB" > /dev/null || fail "compare (text) exited $?"
"$KVAULT" compare --run a --db "$DB"; [ $? -eq 2 ] || fail "compare with one run should exit 2"

"$KVAULT" report --run a --run b --suite "$S" --k 1,2 --db "$DB" -o "$TMP/r.html" || fail "report exited $?"
grep -qiE 'https?://|src=|<script' "$TMP/r.html" && fail "report is not self-contained"

CHROME=$(command -v chromium || command -v chromium-browser) || skip "chromium is not installed (apt-get install chromium)"
# A fresh profile per run; stderr carries the page's console messages (INFO:CONSOLE).
timeout 120 "$CHROME" --headless --disable-gpu --no-sandbox --user-data-dir="$TMP/profile" \
  --enable-logging=stderr --v=0 --screenshot="$TMP/shot.png" --window-size=1280,2000 \
  "file://$TMP/r.html" > "$TMP/chrome.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/chrome.log"; fail "chromium exited $rc"; }
if grep -E "CONSOLE|Uncaught" "$TMP/chrome.log"; then fail "console messages from the report"; fi
[ -f "$TMP/shot.png" ] || fail "no screenshot"
size=$(stat -c %s "$TMP/shot.png")
[ "$size" -gt 20000 ] || fail "screenshot is only $size bytes"
# Not one flat color: the PNG's pixel data is more than a blank page compresses to.
python3 - "$TMP/shot.png" <<'PY' || fail "screenshot looks blank"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR": w, h = struct.unpack(">II", data[pos + 8:pos + 16])
    if kind == b"IDAT": idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
colors = len(set(raw[i:i + 3] for i in range(1, min(len(raw), 4_000_000), 97)))
print("screenshot", w, "x", h, "sampled byte triples:", colors)
assert colors > 20
PY
[ -n "${KVAULT_KEEP_SCREENSHOT:-}" ] && cp "$TMP/shot.png" "$TMP/r.html" "$KVAULT_KEEP_SCREENSHOT/"
echo "ok"
