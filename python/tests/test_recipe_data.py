"""The training recipe's data loading (recipes/kvault_recipes/data.py): AMD's SFT JSONL
samples and veRL RL rows (Parquet and JSON Lines) -> prompts, the fixture made from
examples/, and the errors for bad samples. No torch, transformers or trl needed."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "recipes"))

from kvault_recipes import data  # noqa: E402
from kvault_recipes.trainers import sft_rows  # noqa: E402

EXAMPLES = ROOT / "examples"


def _passing(folder, backend):
    expected = json.loads((EXAMPLES / "expected.json").read_text())
    return sorted(k for k, v in expected.items()
                  if k.startswith(folder + "/") and v["status"] == "passed" and backend in v["backends"])


def test_the_fixture_holds_every_passing_native_cpu_candidate_with_its_task():
    sft, rl = data.fixture(EXAMPLES, "cpu", ("native",))
    keys = _passing("native/cpu", "cpu")
    assert sorted(s["metadata"]["source"] for s in sft) == ["examples/" + k for k in keys]
    for sample in sft:
        source = (ROOT / sample["metadata"]["source"]).read_text()
        prompt, answer = data.sft_prompt_and_answer(sample)
        assert answer == "```cpp\n" + source + "```"
        name = sample["metadata"]["kernel_name"]
        assert (EXAMPLES / "suite" / (name + ".py")).read_text() in prompt[0]["content"]
    assert {r["reward_model"]["ground_truth"]["kernel_name"] for r in rl} == {s["metadata"]["kernel_name"] for s in sft}
    for row in rl:
        record = row["reward_model"]["ground_truth"]
        assert record["pytorch_module_code"] == (EXAMPLES / "suite" / (record["kernel_name"] + ".py")).read_text()
        assert row["extra_info"]["interaction_kwargs"] == {"name": "kvault", "ground_truth": record}


def test_cuda_fixture_takes_native_cuda_and_hip_candidates():
    sft, _ = data.fixture(EXAMPLES, "cuda", ("native",))
    assert sorted(s["metadata"]["source"] for s in sft) == \
        ["examples/" + k for k in _passing("native/cuda", "cuda") + _passing("native/hip", "cuda")]
    assert {s["metadata"]["lang"] for s in sft} == {"cuda", "hip"}


def test_written_fixture_reads_back_from_jsonl_and_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    paths = data.write_fixture(EXAMPLES, tmp_path, "cpu")
    sft, rl = data.fixture(EXAMPLES, "cpu")
    assert data.read_sft_jsonl(paths["sft"]) == sft
    from_jsonl = data.read_rl_prompts(paths["rl_jsonl"])
    from_parquet = data.read_rl_prompts(paths["rl_parquet"])
    assert len(from_jsonl) == len(rl)
    for a, b, row in zip(from_jsonl, from_parquet, rl):
        assert a["prompt"] == b["prompt"] == row["prompt"]
        assert a["ground_truth"] == row["reward_model"]["ground_truth"]
        assert b["ground_truth"]["pytorch_module_code"] == a["ground_truth"]["pytorch_module_code"]
        assert a["kernel_name"] == b["kernel_name"] == row["extra_info"]["kernel_name"]


def test_rl_row_with_json_ground_truth_and_text_prompt():
    record = {"kernel_name": "k", "pytorch_module_code": "class Model: ...", "hip_code": "__global__ void f() {}"}
    p = data.rl_prompt({"prompt": "write it", "reward_model": {"style": "rule", "ground_truth": json.dumps(record)}})
    assert p["prompt"] == [{"role": "user", "content": "write it"}]
    assert p["ground_truth"] == record and p["kernel_name"] == "k"


@pytest.mark.parametrize("row, why", [
    ({"prompt": [{"role": "user", "content": "x"}], "reward_model": {"ground_truth": {"kernel_name": "k"}}},
     "no pytorch_module_code"),
    ({"prompt": [], "reward_model": {"ground_truth": {"pytorch_module_code": "m"}}}, "non-empty list"),
    ({"prompt": [{"role": "robot", "content": "x"}], "reward_model": {"ground_truth": {"pytorch_module_code": "m"}}},
     "message 0"),
    ({"prompt": [{"role": "user", "content": "x"}], "reward_model": {"ground_truth": "{not json"}}, "not JSON"),
])
def test_bad_rl_rows_say_where_and_why(row, why):
    with pytest.raises(data.DataError, match="row 7: .*" + why):
        data.rl_prompt(row, "row 7")


def test_bad_sft_lines_say_where_and_why(tmp_path):
    good = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "metadata": {}}
    cases = {"{oops": "not JSON", json.dumps([1]): "JSON object",
             json.dumps({"messages": good["messages"][:1]}): "assistant's answer",
             json.dumps({"messages": [{"role": "assistant", "content": "a"}]}): "no user message",
             json.dumps(dict(good, metadata=[])): "metadata"}
    for line, why in cases.items():
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(good) + "\n\n" + line + "\n")
        with pytest.raises(data.DataError, match=r"s\.jsonl:3: .*" + why):
            data.read_sft_jsonl(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(data.DataError, match="no samples"):
        data.read_sft_jsonl(tmp_path / "empty.jsonl")


def test_sft_rows_put_the_loss_on_the_answer_only():
    sample = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                           {"role": "assistant", "content": "a"}], "metadata": {}}
    assert sft_rows([sample]) == [{"prompt": sample["messages"][:2],
                                   "completion": [{"role": "assistant", "content": "a"}]}]


def test_feedback_turn_samples_show_the_first_answer_and_teach_the_verified_one():
    sft, _ = data.fixture(EXAMPLES, "cpu")
    sample = sft[0]
    verdict = {"status": "mismatch", "compiled": True, "correct": False,
               "feedback": '<execution_result>\n{"status": "mismatch", "compiled": true, "correct": false}\n'
                           '</execution_result>\n'}
    [two_turn] = data.feedback_turn_samples([(sample, "```cpp\nwrong\n```")], [verdict])
    messages = two_turn["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0] == sample["messages"][0] and messages[1]["content"] == "```cpp\nwrong\n```"
    assert '"turn": 1' in messages[2]["content"] and "Fix it" in messages[2]["content"]
    assert messages[3] == sample["messages"][-1]
    assert two_turn["metadata"]["first_status"] == "mismatch" and two_turn["metadata"]["n_iter"] == 2
    prompt, answer = sft_rows([two_turn])[0]["prompt"], sft_rows([two_turn])[0]["completion"]
    assert prompt == messages[:3] and answer == [messages[3]]


def test_verl_rows_get_interaction_kwargs_and_keep_their_own(tmp_path):
    pytest.importorskip("pyarrow")
    record = {"pytorch_module_code": "class Model: ...", "kernel_name": "k", "language": "hip"}
    rows = [{"prompt": [{"role": "user", "content": "p"}], "reward_model": {"ground_truth": record},
             "extra_info": {"index": 0}},
            {"prompt": [{"role": "user", "content": "q"}], "reward_model": {"ground_truth": record},
             "extra_info": {"interaction_kwargs": {"name": "other"}}}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data.main(["--verl-rows", str(source), str(tmp_path / "out.parquet")])
    out = data.read_rl_rows(tmp_path / "out.parquet")
    assert out[0]["extra_info"]["interaction_kwargs"]["name"] == "kvault"
    assert out[0]["extra_info"]["interaction_kwargs"]["ground_truth"]["pytorch_module_code"] == "class Model: ..."
    assert out[0]["extra_info"]["index"] == 0
    assert out[1]["extra_info"]["interaction_kwargs"]["name"] == "other"


def test_the_recipe_reads_the_vaults_sft_and_verl_exports(tmp_path):
    """The recipe trains on `kvault corpus export` as it is: the SFT JSONL and the veRL
    Parquet of the same records load as samples and prompts, nothing rewritten."""
    kvault = ROOT / "build" / "kvault"
    if not kvault.exists():
        pytest.skip("build/kvault is not built")
    pytest.importorskip("pyarrow")
    vault = tmp_path / "vault.db"

    def corpus(*args):
        import subprocess
        run = subprocess.run([str(kvault), "corpus", *args, "--vault", str(vault)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr

    corpus("import", "--from", "aig-v0.2", str(ROOT / "tests" / "fixtures" / "corpus" / "aig_v02.json"))
    # Imported, never verified: sft takes passed kernels only unless --any-status.
    corpus("export", "--format", "sft", "--any-status", "-o", str(tmp_path / "sft.jsonl"))
    corpus("export", "--format", "verl", "-o", str(tmp_path / "rl.parquet"))
    samples = data.read_sft_jsonl(tmp_path / "sft.jsonl")
    prompts = data.read_rl_prompts(tmp_path / "rl.parquet")
    assert samples and len(prompts) == len(samples)
    for sample in samples:
        prompt, answer = data.sft_prompt_and_answer(sample)
        assert prompt and answer.startswith("```")
