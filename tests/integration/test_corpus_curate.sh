# `kvault corpus dedup | decontaminate | qa` end to end on small fixtures
# (tests/fixtures/corpus_curate): planted exact and near duplicates marked and a
# different kernel kept; a renamed and reordered benchmark task flagged by signature
# and dropped from a decontaminated export, its look-alike not; QA mining against the
# loopback LLM server keeps grounded pairs, drops ungrounded ones, and continues after
# a dead server without asking again what it finished.
source "$(dirname "$0")/lib.sh"
fx="$KVAULT_SOURCE_ROOT/tests/fixtures/corpus_curate"
V="$TMP/vault.db"

"$KVAULT" corpus import --from records "$fx/records.jsonl" --vault "$V" > /dev/null || fail "import"

# ---- dedup ----
"$KVAULT" corpus dedup --vault "$V" --json --marks "$TMP/marks.jsonl" > "$TMP/dedup.json" || fail "dedup"
[ "$(json_get "$TMP/dedup.json" "j['records'], j['exact_duplicates'], j['near_duplicates'], j['kept']")" = "6 1 1 4" ] ||
  { cat "$TMP/dedup.json"; fail "dedup counts"; }
python3 - "$fx/records.jsonl" "$TMP/marks.jsonl" <<'PY' || fail "dedup marks"
import hashlib, json, struct, sys
def rid(r):  # corpus/record.cc RecordId
    h = hashlib.sha256()
    ref = hashlib.sha256(r["task"]["reference_source"].encode()).hexdigest() if r["task"]["reference_source"] else ""
    for tag, v in [("reference_sha256", ref), ("candidate", r["candidate_source"]),
                   ("language", r["language"]), ("format", r["format"])]:
        h.update(struct.pack("<Q", len(tag)) + tag.encode() + struct.pack("<Q", len(v.encode())) + v.encode())
    return h.hexdigest()
ids = [rid(json.loads(l)) for l in open(sys.argv[1])]
marks = {m["record"]: (m["duplicate_of"], m["kind"]) for m in map(json.loads, open(sys.argv[2]))}
want = {ids[0]: (ids[1], "exact"), ids[2]: (ids[1], "near")}  # the passed, faster copy is kept
assert marks == want, (marks, want)
PY

# ---- decontaminate ----
"$KVAULT" corpus decontaminate --vault "$V" --suite "$fx/suite" --name kb --json > "$TMP/dc.json" || fail "decontaminate"
[ "$(json_get "$TMP/dc.json" "j['records_flagged'], j['hits'][0]['task'], j['hits'][0]['reason']")" = \
  "1 level2/1_Conv2D_ReLU_BiasAdd signature" ] || { cat "$TMP/dc.json"; fail "decontamination hits"; }
"$KVAULT" corpus decontaminate --vault "$V" --suite "$fx/suite" --name kb > "$TMP/dc.txt" || fail "decontaminate (text)"
grep -q "1 of 6 kernel record(s) overlap" "$TMP/dc.txt" || { cat "$TMP/dc.txt"; fail "text report"; }
"$KVAULT" corpus decontaminate --vault "$V" --suite "$TMP/no-such-suite" 2> "$TMP/err.txt"
[ $? = 2 ] && grep -q "not a readable folder" "$TMP/err.txt" || fail "a missing suite is misuse"
"$KVAULT" corpus export --vault "$V" --format records --decontaminated-only -o "$TMP/clean.jsonl" > /dev/null || fail "export"
python3 -c "
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
names = sorted(r['task']['name'] for r in rs)
assert 'conv_relu_bias' not in names and 'conv_sigmoid' in names, names
assert len(rs) == 3, names  # 6 - 2 duplicates - 1 contaminated
" "$TMP/clean.jsonl" || fail "the export keeps a contaminated or duplicate record"

# ---- qa ----
cat > "$TMP/script.json" <<'JSON'
{"rules": [{"match": ["blas1/axpy.cpp"], "responses": [{"content":
  "{\"pairs\": [{\"question\": \"When does axpy_reference return early?\", \"answer\": \"When `n` is 0 or `alpha` equals `T(0)`.\", \"lines\": [9, 14]}, {\"question\": \"How many blocks does axpy_grid_size use?\", \"answer\": \"`n` rounded up to whole blocks of `kAxpyBlock`: (n + kAxpyBlock - 1) / kAxpyBlock.\", \"lines\": [17, 19], \"code\": \"int n = 1000; int blocks = (n + 255) / 256;\"}, {\"question\": \"What block size?\", \"answer\": \"Blocks of 512 threads.\", \"lines\": [17, 19]}, {\"question\": \"Where?\", \"answer\": \"`axpy_reference`\", \"lines\": [300, 310]}]}"}]}],
 "default": {"content": "no JSON here"}}
JSON
support="$KVAULT_SOURCE_ROOT/tests/support"
python3 "$support/openai_replay_server.py" --script "$TMP/script.json" --log "$TMP/llm.jsonl" --port 0 > "$TMP/port.txt" 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 600); do grep -q "^PORT " "$TMP/port.txt" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/^PORT /{print $2}' "$TMP/port.txt")
[ -n "$PORT" ] || fail "replay server did not start"
qa() {  # endpoint, extra flags
  "$KVAULT" corpus qa --vault "$V" --source-tree "$fx/qa_tree" --endpoint "$1" --model replay --license MIT \
    --timeout 5 --retries 0 --json "${@:2}"
}
# A dead server: exit 3, the reason, nothing stored, nothing marked done.
qa "http://127.0.0.1:9/v1" > "$TMP/dead.json" 2> "$TMP/dead.txt"
[ $? = 3 ] && grep -q "failed" "$TMP/dead.txt" || { cat "$TMP/dead.txt"; fail "a dead server is exit 3"; }
qa "http://127.0.0.1:$PORT/v1" > "$TMP/qa.json" || fail "qa"
[ "$(json_get "$TMP/qa.json" "j['asked'], j['kept'], j['dropped'].get('term_not_in_cited_lines'), j['dropped'].get('lines_outside_chunk'), j['code'].get('compiled')")" = \
  "1 2 1 1 1" ] || { cat "$TMP/qa.json"; fail "qa counts"; }
qa "http://127.0.0.1:$PORT/v1" > "$TMP/qa2.json" || fail "qa again"
[ "$(json_get "$TMP/qa2.json" "j['asked'], j['skipped_done']")" = "0 1" ] || { cat "$TMP/qa2.json"; fail "qa resume"; }
"$KVAULT" corpus export --vault "$V" --format records --kind qa -o "$TMP/qa.jsonl" > /dev/null || fail "export qa"
python3 -c "
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 2 and {r['qa']['citation'] for r in rs} == {'blas1/axpy.cpp:9-14', 'blas1/axpy.cpp:17-19'}, rs
assert all(r['provenance']['license'] == 'MIT' and r['provenance']['pipeline'] == 'qa-mine' for r in rs)
" "$TMP/qa.jsonl" || fail "stored qa records"
echo "PASS"
