#!/usr/bin/env bash
# kvault corpus end to end (docs/corpus.md): every import format from the fixtures,
# malformed rows reported by number, stats (JSON and HTML), every export format, the
# verl Parquet read by pyarrow and fed to python/kernelvault/records.py, the hf folder
# opened by datasets.load_dataset, and records -> import -> records unchanged.
source "$(dirname "$0")/lib.sh"
FIX=$KVAULT_SOURCE_ROOT/tests/fixtures/corpus
PY=${KVAULT_PYTHON:-python3}
"$PY" -c "import pyarrow, datasets" >/dev/null 2>&1 || skip "pyarrow and datasets are not importable by $PY"
V=$TMP/vault.db
corpus() { "$KVAULT" corpus "$@" --vault "$V"; }
expect() {  # expect FILE 'python expression over j' : the expression must be true
  json_get "$1" "$2" | grep -x True >/dev/null || fail "$1: not $2: $(cat "$1")"
}

for f in verl_rows verl_text_rows; do
  PYTHONPATH=$KVAULT_SOURCE_ROOT/python "$PY" -m kvault_export.rows to-parquet "$FIX/$f.jsonl" "$TMP/$f.parquet" ||
    fail "cannot write $f.parquet"
done

corpus import --from sft "$FIX/sft.jsonl" --json >"$TMP/sft.json" 2>"$TMP/sft.err" || fail "sft import"
expect "$TMP/sft.json" 'j["imported"] == 2 and [p["line"] for p in j["malformed_rows"]] == [3, 4, 6]'
grep -q "sft.jsonl:3: not JSON" "$TMP/sft.err" || fail "malformed line 3 not reported: $(cat "$TMP/sft.err")"

corpus import --from verl "$TMP/verl_rows.parquet" "$TMP/verl_text_rows.parquet" --json >"$TMP/verl.json" ||
  fail "verl import"
expect "$TMP/verl.json" 'j["imported"] == 2 and j["skipped"] == 1 and [(p["file"].split("/")[-1], p["line"]) for p in j["malformed_rows"]] == [("verl_rows.parquet", 3), ("verl_text_rows.parquet", 2)]'

corpus import --from aig-v0.1 "$FIX/aig_v01" --json >"$TMP/aig1.json" || fail "aig-v0.1 import"
expect "$TMP/aig1.json" 'j["imported"] == 2 and j["malformed"] == 2'
corpus import --from aig-v0.2 "$FIX/aig_v02.json" --json >"$TMP/aig2.json" || fail "aig-v0.2 import"
expect "$TMP/aig2.json" 'j["imported"] == 2 and [p["line"] for p in j["malformed_rows"]] == [3]'
corpus import --from kernelbench "$FIX/kernelbench" --suite "$FIX/tasks" --json >"$TMP/kb.json" ||
  fail "kernelbench import"
expect "$TMP/kb.json" 'j["imported"] == 2 and j["skipped"] == 1 and j["malformed"] == 1'
"$KVAULT" corpus import --vault "$TMP/geak.db" --from geak "$KVAULT_SOURCE_ROOT/tests/fixtures/tritonbench_g" --json \
  >"$TMP/geak.json" 2>/dev/null || fail "geak import"
expect "$TMP/geak.json" 'j["imported"] == 7 and [p["file"].split("/")[-1] for p in j["malformed_rows"]] == ["no_separator.py"]'

# One kernel seen in sft, verl, aig-v0.1 and aig-v0.2 is one record: 6 in all.
corpus stats --json --html "$TMP/stats.html" >"$TMP/stats.json" || fail "stats"
expect "$TMP/stats.json" 'j["records"] == 6 and j["by_language"] == {"cuda": 1, "hip": 3, "python": 2} and j["speedup"]["correct_kernels"] == 0 and j["by_status"] == {"unverified": 6} and j["by_claimed_status"].get("passed", 0) >= 1'
corpus stats --json --claims >"$TMP/stats-claims.json" || fail "stats --claims"
expect "$TMP/stats-claims.json" 'j["speedup"]["correct_kernels"] >= 1'
grep -q "<svg" "$TMP/stats.html" || fail "stats --html has no chart"

# The supervised formats take passed kernels: none is verified here.
corpus export --format sft -o "$TMP/default.sft.jsonl" --json >"$TMP/default.sft.json" || fail "default sft export"
expect "$TMP/default.sft.json" 'j["rows"] == 0 and j["not_passed"] == 6'
for format in records sft alpaca sharegpt dpo; do
  any=; case $format in sft|alpaca|sharegpt) any=--any-status ;; esac
  corpus export --format $format $any -o "$TMP/out.$format.jsonl" --json >"$TMP/export.$format.json" ||
    fail "export --format $format"
done
expect "$TMP/export.records.json" 'j["rows"] == 6 and j["unlicensed"] == 6'
expect "$TMP/export.sft.json" 'j["rows"] == 6'
corpus export --format verl -o "$TMP/rl.parquet" >/dev/null || fail "export --format verl"
# Two records with a licence, four without: the card says "other", names it, links LICENSE.md.
corpus import --from sft "$FIX/sft.jsonl" --license MIT >/dev/null 2>&1 || fail "sft import with a licence"
corpus export --format records --licensed-only -o "$TMP/licensed.jsonl" --json >"$TMP/licensed.json" ||
  fail "export --licensed-only"
expect "$TMP/licensed.json" 'j["rows"] == 2 and j["unlicensed"] == 0'
# Imported again without --license, the two keep their licence; a path that holds no
# row at all is named and, when nothing was read from any path, is misuse (exit 2).
corpus import --from sft "$FIX/sft.jsonl" >/dev/null 2>&1 || fail "sft import again"
corpus export --format records --licensed-only -o "$TMP/licensed2.jsonl" --json >"$TMP/licensed2.json" ||
  fail "export --licensed-only after a re-import"
expect "$TMP/licensed2.json" 'j["rows"] == 2'
: >"$TMP/empty.jsonl"
rc=0; corpus import --from sft "$TMP/empty.jsonl" --json >"$TMP/empty.json" 2>"$TMP/empty.err" || rc=$?
[ "$rc" -eq 2 ] || fail "an import that read nothing exited $rc, want 2"
grep -q "nothing read from $TMP/empty.jsonl" "$TMP/empty.err" || fail "the empty path is not named: $(cat "$TMP/empty.err")"
# hf writes both sides of the split whatever --split says.
corpus export --format hf --split train -o "$TMP/hf" >/dev/null 2>"$TMP/hf.err" || fail "export --format hf"
grep -q "4 row(s) come from sources that state no licence" "$TMP/hf.err" || fail "no licence warning: $(cat "$TMP/hf.err")"
# Imported verdicts are claims: no record is verified until this vault's engine says so.
corpus export --format sft --status passed --hardware "AMD Instinct MI300X" -o "$TMP/mi300x.jsonl" --json \
  >"$TMP/filtered.json" || fail "filtered export"
expect "$TMP/filtered.json" 'j["rows"] == 0'
corpus export --format sft --status passed --hardware "AMD Instinct MI300X" --claims -o "$TMP/mi300x.jsonl" --json \
  >"$TMP/filtered.json" || fail "filtered export of claims"
expect "$TMP/filtered.json" 'j["rows"] == 2'

PYTHONPATH=$KVAULT_SOURCE_ROOT/python "$PY" - "$TMP" <<'PYEOF' || fail "exports not readable by their consumers"
import json, sys
import pyarrow.parquet as pq
import datasets
from kernelvault import records
tmp = sys.argv[1]
rows = pq.read_table(tmp + "/rl.parquet").to_pylist()
assert len(rows) == 6, len(rows)
for row in rows:
    # gen's prompts: its system message, then its generator prompt with the task.
    assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["ability"] == "kernel"
    assert "exactly one fenced code block" in row["prompt"][0]["content"], row["prompt"][0]
    assert row["prompt"][1]["content"].startswith("task: "), row["prompt"][1]
    request = records.build_request(row["reward_model"], "```hip\n__global__ void k() {}\n```")
    assert request["task_source"] == row["reward_model"]["ground_truth"]["pytorch_module_code"]
    assert request["task_name"] == row["reward_model"]["ground_truth"]["kernel_name"]
hf = datasets.load_dataset(tmp + "/hf", cache_dir=tmp + "/hf-cache")
assert sum(split.num_rows for split in hf.values()) == 6 and "candidate_source" in hf["train"].column_names, hf
if "test" in hf:  # the split is by task: no task on both sides
    assert not set(hf["train"]["task_name"]) & set(hf["test"]["task_name"]), hf
card = open(tmp + "/hf/README.md").read()
assert "## Decontamination" in card and "AIG-Datasets v0.1" in card, card
assert card.startswith("---\nlicense: other\nlicense_name: per-source\nlicense_link: LICENSE.md\n"), card
licences = open(tmp + "/hf/LICENSE.md").read()
assert "| MIT | 2 |" in licences and "4 rows come from sources that state no licence" in licences, licences
# Published: no machine details (environment fingerprints, file paths) in the rows.
for split in hf.values():
    for row in split:
        assert tmp not in json.dumps(row) and "/tests/fixtures/" not in json.dumps(row), row
        assert all("environment" not in r for r in json.loads(row["results"])), row["results"]
# Training formats are published by default: no environment, no claim's file.
for line in open(tmp + "/out.sft.jsonl"):
    meta = json.loads(line)["metadata"]
    assert all("environment" not in r and "claim" not in r for r in meta["results"]), meta["results"]
for line in open(tmp + "/out.sharegpt.jsonl"):
    assert [m["from"] for m in json.loads(line)["conversations"]] == ["human", "gpt"]
PYEOF

# Exported again into the same folder, the hf dataset is read anew, not from the cache
# of the first export (datasets keys it on the card's data_files when the card lists them).
corpus export --format hf --licensed-only -o "$TMP/hf" >/dev/null 2>&1 || fail "export --format hf again"
"$PY" - "$TMP" <<'PYEOF' || fail "datasets read the rows of an earlier export of the hf folder"
import sys
import datasets
hf = datasets.load_dataset(sys.argv[1] + "/hf", cache_dir=sys.argv[1] + "/hf-cache")
assert sum(split.num_rows for split in hf.values()) == 2, hf
PYEOF

# The round trip: the vault's own records through a second vault, byte for byte.
"$KVAULT" corpus import --vault "$TMP/again.db" --from records "$TMP/out.records.jsonl" >/dev/null ||
  fail "records import"
"$KVAULT" corpus export --vault "$TMP/again.db" --format records -o "$TMP/again.jsonl" >/dev/null ||
  fail "records export of the second vault"
cmp -s "$TMP/out.records.jsonl" "$TMP/again.jsonl" || fail "records differ after a round trip"

# Verify again through the engine on the cpu (the two KernelBench kernels), then resume.
if "$PY" -c "import torch" >/dev/null 2>&1; then
  K=$TMP/kb.db
  "$KVAULT" corpus import --vault "$K" --from kernelbench "$FIX/kernelbench" --suite "$FIX/tasks" >/dev/null 2>&1 ||
    fail "kernelbench import for verify"
  "$KVAULT" corpus verify --vault "$K" --backend cpu --no-timing --json >"$TMP/verify.json" 2>"$TMP/verify.err" ||
    fail "verify: $(cat "$TMP/verify.err")"
  expect "$TMP/verify.json" 'j["selected"] == 2 and j["verified"] == 2 and j["not_recorded"] == 0'
  "$KVAULT" corpus verify --vault "$K" --backend cpu --no-timing --json >"$TMP/verify2.json" 2>/dev/null ||
    fail "verify again"
  expect "$TMP/verify2.json" 'j["already"] == 2 and j["verified"] == 0'
  # Another machine's name: verified anew, never answered from this one's attempts in
  # the scratch store (they would carry this machine's run as the other's result).
  "$KVAULT" corpus verify --vault "$K" --backend cpu --no-timing --as-hardware other-machine --json \
    >"$TMP/verify-other.json" 2>/dev/null || fail "verify as other hardware"
  expect "$TMP/verify-other.json" 'j["verified"] == 2'
  "$KVAULT" corpus export --vault "$K" --format records -o "$TMP/kb-both.jsonl" >/dev/null || fail "export of both"
  "$PY" - "$TMP/kb-both.jsonl" <<'PYEOF' || fail "a result of other-machine was this machine's attempt"
import json, sys
for line in open(sys.argv[1]):
    engine = [r for r in json.loads(line)["results"] if r["origin"] == "engine"]
    assert len(engine) == 2, engine
    assert engine[0]["verified_at"] != engine[1]["verified_at"], engine
PYEOF
  "$KVAULT" corpus export --vault "$K" --format records -o "$TMP/kb.jsonl" --status passed --json >"$TMP/kb-export.json" ||
    fail "export of verified records"
  expect "$TMP/kb-export.json" 'j["rows"] == 2'

  # A hostile import: a kernel that returns zeros, claiming it passed 3.7x faster on
  # this very machine and toolchain. It is verified like any other and never exported
  # as passed.
  "$PY" - "$TMP/verify.json" "$FIX/tasks/relu.py" >"$TMP/hostile.jsonl" <<'PYEOF' || fail "hostile row"
import json, sys
machine = json.load(open(sys.argv[1]))
reference = open(sys.argv[2]).read()
zeros = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.zeros_like(x)\n"
print(json.dumps({"messages": [{"role": "user", "content": "```python\n" + reference + "```\n"},
                               {"role": "assistant", "content": "```python\n" + zeros + "```"}],
                  "metadata": {"kernel_name": "relu", "pass_exe": True, "speedup": 3.7, "language": "python",
                               "hardware": machine["hardware"], "toolchain": machine["toolchain"], "backend": "cpu"}}))
PYEOF
  "$KVAULT" corpus import --vault "$K" --from sft "$TMP/hostile.jsonl" --json >"$TMP/hostile-import.json" ||
    fail "hostile import"
  expect "$TMP/hostile-import.json" 'j["imported"] == 1'
  "$KVAULT" corpus export --vault "$K" --format sft --status passed -o "$TMP/hostile-before.jsonl" --json \
    >"$TMP/hostile-before.json" || fail "export before verify"
  expect "$TMP/hostile-before.json" 'j["rows"] == 2'
  "$KVAULT" corpus verify --vault "$K" --backend cpu --no-timing --json >"$TMP/verify3.json" 2>/dev/null ||
    fail "verify of the hostile import"
  expect "$TMP/verify3.json" 'j["already"] == 2 and j["verified"] == 1'
  "$KVAULT" corpus export --vault "$K" --format sft -o "$TMP/hostile.sft.jsonl" >/dev/null || fail "sft export"
  ! grep -q zeros_like "$TMP/hostile.sft.jsonl" || fail "sft (passed kernels only) holds the hostile kernel"
  "$KVAULT" corpus export --vault "$K" --format sft --any-status -o "$TMP/hostile.sft.jsonl" >/dev/null ||
    fail "sft export of every status"
  "$PY" - "$TMP/hostile.sft.jsonl" <<'PYEOF' || fail "the hostile kernel was exported as passed"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
zeros = [r for r in rows if "zeros_like" in r["messages"][-1]["content"]]
assert len(zeros) == 1, rows
meta = zeros[0]["metadata"]
assert meta["pass_exe"] is False and meta["speedup"] is None, meta
origins = sorted((r["origin"], r["status"]) for r in meta["results"])
assert origins[0][0] == "engine" and origins[0][1] != "passed" and origins[1] == ("import", "passed"), origins
PYEOF

  # A KernelBench file whose load_inline builds CUDA cannot run on this cpu machine:
  # counted as unsupported and given no result (never its own compile_error here).
  "$PY" - "$FIX/tasks/relu.py" >"$TMP/cuda.jsonl" <<'PYEOF' || fail "cuda row"
import json, sys
reference = open(sys.argv[1]).read()
cuda = """__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::zeros_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}"""
code = ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
        "mod = load_inline(name='relu_cuda', cpp_sources='torch::Tensor relu(torch::Tensor x);', "
        "cuda_sources=%r, functions=['relu'], verbose=True, extra_cflags=[''])\n\n\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return mod.relu(x.contiguous())\n" % cuda)
print(json.dumps({"messages": [{"role": "user", "content": "```python\n" + reference + "```\n"},
                               {"role": "assistant", "content": "```python\n" + code + "```"}],
                  "metadata": {"kernel_name": "relu", "pass_exe": True, "speedup": 2.0}}))
PYEOF
  "$KVAULT" corpus import --vault "$K" --from sft "$TMP/cuda.jsonl" >/dev/null || fail "cuda import"
  "$KVAULT" corpus verify --vault "$K" --backend cpu --no-timing --json >"$TMP/verify4.json" 2>/dev/null ||
    fail "verify of a cuda record on cpu"
  expect "$TMP/verify4.json" 'j["unsupported"] == 1 and j["verified"] == 0 and j["not_recorded"] == 0'
  "$KVAULT" corpus export --vault "$K" --format records -o "$TMP/kb-cuda.jsonl" >/dev/null || fail "records export"
  grep -q relu_kernel "$TMP/kb-cuda.jsonl" || fail "the cuda record is missing"
  "$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if "relu_kernel" in l]
assert [r["origin"] for r in rows[0]["results"]] == ["import"], rows[0]["results"]' "$TMP/kb-cuda.jsonl" ||
    fail "verify on cpu gave the cuda record a result"
fi

# Bad input: a clear message and the misuse exit code, nothing lost.
"$KVAULT" corpus import --vault "$V" --from sft "$TMP/missing.jsonl" 2>"$TMP/missing.err"
[ $? -eq 2 ] && grep -q "missing.jsonl" "$TMP/missing.err" || fail "a missing file: $(cat "$TMP/missing.err")"
# A text file named .parquet, a folder, a truncated JSON Lines row, a row of wrong types:
# each said (the file, and why), exit 2, and the vault as it was.
echo "<html>502 Bad Gateway</html>" > "$TMP/rows.parquet"
mkdir -p "$TMP/a-folder"
head -c 200 "$FIX/verl_rows.jsonl" > "$TMP/truncated.jsonl"
printf '%s\n' '{"reward_model": {"ground_truth": {"kernel_name": "t", "hip_code": "k"}}, "extra_info": {"pass_exe": "yes"}}' > "$TMP/typed.jsonl"
for bad in "rows.parquet:not a Parquet file" "a-folder:a folder" "truncated.jsonl:not JSON" "typed.jsonl:extra_info.pass_exe: not true or false"; do
  rc=0; "$KVAULT" corpus import --vault "$V" --from verl "$TMP/${bad%%:*}" >/dev/null 2>"$TMP/bad.err" || rc=$?
  [ $rc -eq 2 ] && grep -q -- "${bad#*:}" "$TMP/bad.err" || fail "import of ${bad%%:*}: exit $rc, $(cat "$TMP/bad.err")"
done
corpus stats --json >"$TMP/stats2.json" && expect "$TMP/stats2.json" 'j["records"] == 6'
echo PASS
