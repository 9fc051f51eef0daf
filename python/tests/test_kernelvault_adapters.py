"""The trainer adapters, called exactly as each trainer calls them, against a scripted
stand-in of `kvault serve`: verl (kernelvault.rewards), TRL (kernelvault.trl),
OpenRLHF (kernelvault.openrlhf) and slime (kernelvault.slime)."""
import argparse
import asyncio
import dataclasses
import http.client
import importlib
import importlib.util
import inspect
import json
import math
import threading

import pytest

import kernelvault.openrlhf as kv_openrlhf
from kernelvault import InfrastructureError, TaskError
from kernelvault.rewards import compute_score, compute_score_async, compute_score_batch
from kernelvault.trl import AsyncKernelVaultReward, KernelVaultReward
from kernelvault_fake import fake  # noqa: F401 (fixture)

TASK = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
RECORD = {"kernel_name": "relu", "pytorch_module_code": TASK, "pytorch_functional_code": "def module_fn(x): ...",
          "hip_code": "__global__ void relu_kernel() {}", "atol": 1e-4, "rtol": 1e-3, "lang": "HIP"}
GOOD = "<think>a plan</think>\n```hip\n// GOOD\n```"
WRONG = "```hip\n// WRONG\n```"
RAW_KEYS = {"score", "compiled", "correct", "speedup", "status", "reference_ms", "candidate_ms", "message"}


def last_verify(fake):
    return fake.bodies("POST", "/v1/verify")[-1]


# ---- verl ----------------------------------------------------------------------

def test_verl_compute_score_as_the_naive_manager_calls_it(fake):
    # verl's per-sample managers call by keyword; reward_kwargs arrive merged in.
    answer = compute_score(data_source="hip2hip-train", solution_str=GOOD, ground_truth=RECORD,
                           extra_info={"index": 7, "num_turns": None, "rollout_reward_scores": {}},
                           reward_router_address=None)
    assert set(answer) == RAW_KEYS
    assert answer["score"] == 1.4 and answer["correct"] is True and answer["status"] == "passed"
    sent = last_verify(fake)
    assert sent["task_source"] == TASK and sent["task_name"] == "relu" and sent["completion"] == GOOD
    assert sent["baseline_code"] == RECORD["hip_code"] and sent["language"] == "hip"
    assert (sent["atol"], sent["rtol"]) == (1e-4, 1e-3)
    assert "pytorch_functional_code" not in sent and "code" not in sent


def test_verl_ground_truth_as_json_and_reward_kwargs(fake):
    answer = compute_score("hip2hip-train", WRONG, json.dumps(RECORD), None, reward="hip-rl")
    assert answer["score"] == 0.4 and math.isnan(answer["speedup"])
    assert last_verify(fake)["reward"] == "hip-rl"


def test_verl_extra_info_sets_the_server_and_the_trajectory(fake, monkeypatch):
    monkeypatch.setenv("KVAULT_URL", "http://127.0.0.1:1")  # wrong: extra_info wins
    answer = compute_score("d", GOOD, {"ground_truth": RECORD},
                           {"kvault_url": fake.url, "previous_rewards": [0.4, 1.4], "discount": 0.6})
    assert answer["score"] == pytest.approx(0.4 + 0.6 * 1.4 + 0.36 * 1.4)
    assert last_verify(fake)["previous_rewards"] == [0.4, 1.4]


def test_verl_task_errors_raise_unless_a_score_is_configured(fake):
    broken = dict(RECORD, pytorch_module_code="TASKERR")
    with pytest.raises(TaskError):
        compute_score("d", GOOD, broken, {})
    answer = compute_score("d", GOOD, broken, {}, task_error_score=0.0)
    assert answer["status"] == "task_error" and answer["score"] == 0.0


def test_verl_infrastructure_failures_raise_never_zero(fake):
    with pytest.raises(InfrastructureError):
        compute_score("d", GOOD, dict(RECORD, pytorch_module_code="INFRA"), {})
    assert len(fake.sleeps) == 2


def test_verl_ground_truth_without_a_task_is_refused(fake):
    with pytest.raises(ValueError, match="pytorch_module_code"):
        compute_score("d", GOOD, {"kernel_name": "relu"}, {})


def test_numbers_json_cannot_carry_are_refused_before_sending(fake):
    # NaN and infinity would reach the server as invalid JSON (its 400 then names a
    # parse error); a string of previous rewards would be read character by character.
    for record, extra, said in ((dict(RECORD, atol=float("inf")), {}, "atol must be a finite number"),
                                (dict(RECORD, rtol="nan"), {}, "rtol must be a finite number"),
                                (RECORD, {"previous_rewards": [float("nan")]}, "previous_rewards must be a finite"),
                                (RECORD, {"previous_rewards": "0.4,1.4"}, "previous_rewards must be a list"),
                                (RECORD, {"discount": float("-inf")}, "discount must be a finite number")):
        with pytest.raises(ValueError, match=said):
            compute_score("d", GOOD, record, extra)
    assert fake.bodies("POST", "/v1/verify") == []


def test_the_client_refuses_nan_in_a_request_of_its_own(fake):
    from kernelvault import Client, RequestError
    with pytest.raises(RequestError, match="NaN or infinity"):
        Client(fake.url).verify(task_source=TASK, completion=GOOD, atol=float("nan"))
    assert fake.bodies("POST", "/v1/verify") == []


def test_a_hip_to_hip_record_declares_hip(fake):
    # AMD's HIP-to-HIP record often names no language: its hip_code says HIP, so a
    # server that cannot run HIP refuses the request instead of scoring it 0.
    hip_to_hip = {k: v for k, v in RECORD.items() if k != "lang"}
    compute_score("d", GOOD, hip_to_hip, {})
    assert last_verify(fake)["language"] == "hip"
    compute_score("d", GOOD, dict(hip_to_hip, language="cpp"), {})  # a declared language wins
    assert last_verify(fake)["language"] == "cpp"
    compute_score("d", GOOD, dict(hip_to_hip, hip_code=" "), {})
    assert "language" not in last_verify(fake)


def test_verl_batch_manager_convention(fake):
    # verl/workers/reward_manager/batch.py: keyword sequences, plus the reward kwargs.
    answers = compute_score_batch(data_sources=("a", "a", "a"), solution_strs=[GOOD, WRONG, "no code"],
                                  ground_truths=[RECORD, json.dumps(RECORD), RECORD],
                                  extra_infos=[{"rollout_reward_scores": {}} for _ in range(3)], reward="paper")
    assert [a["score"] for a in answers] == [1.4, 0.4, 0.0]
    assert all(set(a) == RAW_KEYS for a in answers)
    (batch,) = fake.bodies("POST", "/v1/batches")
    assert [r["completion"] for r in batch["requests"]] == [GOOD, WRONG, "no code"]
    with pytest.raises(TaskError):
        compute_score_batch(["a"], [GOOD], [dict(RECORD, pytorch_module_code="TASKERR")], [{}])


def test_verl_async_reward_loop(fake):
    assert inspect.iscoroutinefunction(compute_score_async)
    answer = asyncio.run(compute_score_async(data_source="d", solution_str=GOOD, ground_truth=RECORD,
                                             extra_info={}))
    assert answer["score"] == 1.4


# ---- TRL -------------------------------------------------------------------------

def trl_kwargs(completions, logged, **columns):
    """What GRPOTrainer._calculate_rewards passes: keyword lists, one item per completion."""
    n = len(completions)
    return dict(prompts=[[{"role": "user", "content": "write relu"}]] * n, completions=completions,
                completion_ids=[[1, 2, 3]] * n, trainer_state=object(),
                log_extra=lambda column, values: logged.setdefault(column, values),
                log_metric=lambda name, value: logged.setdefault(name, value), **columns)


def conversation(text):
    return [{"role": "assistant", "content": text}]


def test_trl_reward_with_conversational_completions(fake):
    reward = KernelVaultReward()
    assert reward.__name__ == "kernelvault" and not inspect.iscoroutinefunction(reward)
    logged = {}
    ground_truth = [json.dumps(RECORD), RECORD, dict(RECORD, pytorch_module_code="TASKERR"), "42", None]
    completions = [conversation(GOOD), conversation(WRONG), conversation(GOOD), conversation(GOOD),
                   [{"role": "assistant", "content": [{"type": "text", "text": GOOD}]}]]
    rewards = reward(**trl_kwargs(completions, logged, ground_truth=ground_truth, data_source=["x"] * 5))
    assert rewards == [1.4, 0.4, None, None, None]
    assert logged["kvault_status"] == ["passed", "mismatch", "task_error", "", ""]
    assert logged["kvault/correct"] == 0.5 and logged["kvault/compiled"] == 1.0
    (batch,) = fake.bodies("POST", "/v1/batches")
    assert [r["completion"] for r in batch["requests"]] == [GOOD, WRONG, GOOD]


def test_trl_reward_with_flat_columns_and_plain_completions(fake):
    reward = KernelVaultReward(name="kv_hip", reward="hip-rl")
    rewards = reward(**trl_kwargs([GOOD, WRONG], {}, pytorch_module_code=[TASK, TASK], kernel_name=["relu", "relu"],
                                  hip_code=[None, "__global__ void k() {}"], previous_rewards=[[0.4], None]))
    assert rewards == [pytest.approx(0.4 + 0.6 * 1.4), 0.4]
    first, second = fake.bodies("POST", "/v1/batches")[0]["requests"]
    assert first["reward"] == "hip-rl" and "baseline_code" not in first and second["baseline_code"]
    assert reward.__name__ == "kv_hip"


def test_trl_reward_model_column(fake):
    rewards = KernelVaultReward()(**trl_kwargs([GOOD], {}, reward_model=[{"style": "rule", "ground_truth": RECORD}]))
    assert rewards == [1.4]


def test_trl_infrastructure_failure_raises(fake):
    with pytest.raises(InfrastructureError):
        KernelVaultReward()(**trl_kwargs([GOOD], {}, ground_truth=[dict(RECORD, pytorch_module_code="INFRA")]))


def test_trl_async_reward_as_grpo_trainer_awaits_it(fake):
    reward = AsyncKernelVaultReward(name="kv_async")
    assert inspect.iscoroutinefunction(reward)  # how GRPOTrainer tells async reward functions
    loop = asyncio.new_event_loop()              # GRPOTrainer: an event loop on a daemon thread
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        async def gather():
            return await asyncio.gather(
                reward(**trl_kwargs([GOOD, WRONG], {}, ground_truth=[RECORD, RECORD])),
                reward(**trl_kwargs([conversation(WRONG)], {}, ground_truth=[RECORD])))
        assert asyncio.run_coroutine_threadsafe(gather(), loop).result(timeout=30) == [[1.4, 0.4], [0.4]]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


# ---- OpenRLHF ------------------------------------------------------------------------

PROMPT = "<|im_start|>user\nOptimize this:\n```python\n" + TASK + "```<|im_end|>\n<|im_start|>assistant\n"


def test_openrlhf_reward_func_loaded_from_its_file(fake):
    # SingleTurnAgentExecutor: spec_from_file_location("reward_func", path), called in a thread.
    spec = importlib.util.spec_from_file_location("reward_func", kv_openrlhf.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    queries, prompts = [PROMPT + GOOD + "<|im_end|>"], [PROMPT]
    answer = asyncio.run(asyncio.to_thread(module.reward_func, queries, prompts, [json.dumps(RECORD)]))
    assert answer == {"rewards": [1.4], "scores": [1.0],
                      "extra_logs": {"kvault_compiled": [1.0], "kvault_correct": [1.0], "kvault_speedup": [1.0]}}
    assert fake.bodies("POST", "/v1/batches")[0]["requests"][0]["completion"] == GOOD + "<|im_end|>"


def test_openrlhf_response_is_found_when_decoding_changed_the_prompt():
    assert kv_openrlhf.response_of(" " + PROMPT + WRONG, PROMPT).lstrip() == WRONG
    assert kv_openrlhf.response_of("unrelated", PROMPT) == "unrelated"


def test_openrlhf_failures_raise(fake):
    with pytest.raises(TaskError):
        kv_openrlhf.reward_func([PROMPT + GOOD], [PROMPT], [json.dumps(dict(RECORD, pytorch_module_code="TASKERR"))])
    with pytest.raises(InfrastructureError):
        kv_openrlhf.reward_func([PROMPT + GOOD], [PROMPT], [json.dumps(dict(RECORD, pytorch_module_code="INFRA"))])


def test_openrlhf_http_endpoint(fake):
    from kernelvault.shared import shared_client

    server = kv_openrlhf.make_server("127.0.0.1", 0, shared_client())
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def post(payload):
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        conn.request("POST", "/get_reward", body=json.dumps(payload), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())

    try:
        # the payload of OpenRLHF's _fetch_rewards_via_http
        status, answer = post({"query": [PROMPT + GOOD, PROMPT + WRONG], "prompts": [PROMPT, PROMPT],
                               "labels": [json.dumps(RECORD)] * 2})
        assert status == 200 and answer["rewards"] == [1.4, 0.4] and answer["scores"] == [1.0, 0.0]
        infra = json.dumps(dict(RECORD, pytorch_module_code="INFRA"))
        assert post({"query": [PROMPT + GOOD], "prompts": [PROMPT], "labels": [infra]})[0] == 503
        task = json.dumps(dict(RECORD, pytorch_module_code="TASKERR"))
        assert post({"query": [PROMPT + GOOD], "prompts": [PROMPT], "labels": [task]})[0] == 422
        assert post({"query": "not a list"})[0] == 400
    finally:
        server.shutdown()
        server.server_close()


# ---- slime -----------------------------------------------------------------------------

@dataclasses.dataclass
class Sample:  # the fields of slime.utils.types.Sample the reward reads
    prompt: str = ""
    response: str = ""
    label: object = None
    reward: object = None
    metadata: dict = dataclasses.field(default_factory=dict)


def slime_args(**kw):
    return argparse.Namespace(reward_key=kw.get("reward_key"), rm_url=kw.get("rm_url"),
                              custom_rm_path="kernelvault.slime.reward_func")


def load_function(path):  # as slime.utils.misc.load_function
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def test_slime_one_sample_and_a_group(fake):
    rm = load_function(slime_args().custom_rm_path)
    assert inspect.iscoroutinefunction(rm)
    one = Sample(prompt="p", response=GOOD, label=json.dumps(RECORD))
    assert asyncio.run(rm(slime_args(), one)) == 1.4
    group = [Sample(response=WRONG, label=json.dumps(RECORD)),
             Sample(response=GOOD, metadata={"ground_truth": RECORD, "previous_rewards": [1.4]})]
    assert asyncio.run(rm(slime_args(), group)) == [0.4, pytest.approx(1.4 + 0.6 * 1.4)]
    assert len(fake.bodies("POST", "/v1/batches")[0]["requests"]) == 2


def test_slime_reward_key_gives_a_dict(fake):
    reward = asyncio.run(load_function("kernelvault.slime.reward_func")(
        slime_args(reward_key="score"), Sample(response=WRONG, metadata=dict(RECORD))))
    assert reward["score"] == 0.4 and reward["status"] == "mismatch" and set(reward) == RAW_KEYS


def test_slime_failures_raise(fake):
    rm = load_function("kernelvault.slime.reward_func")
    with pytest.raises(TaskError):
        asyncio.run(rm(slime_args(), Sample(response=GOOD, label=dict(RECORD, pytorch_module_code="TASKERR"))))
    with pytest.raises(InfrastructureError):
        asyncio.run(rm(slime_args(), [Sample(response=GOOD, label=dict(RECORD, pytorch_module_code="INFRA"))] * 2))
