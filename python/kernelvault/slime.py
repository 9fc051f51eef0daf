"""slime's custom reward model, scored by `kvault serve` (docs/rl.md, "slime").

    --custom-rm-path kernelvault.slime.reward_func            # add --group-rm for one batch a group

The conventions matched (THUDM/slime, slime/rollout/rm_hub/__init__.py and
slime/utils/types.py, read at commit 624b824):
- `--custom-rm-path` names a function by its dotted path (slime.utils.misc.load_function);
  async_rm awaits it as rm(args, sample) for one Sample, and batched_async_rm (with
  --group-rm, or when a generate function returns several samples) as
  rm(args, samples) for a list, expecting a list of rewards in order;
- a Sample has `response` (the generated text, without the prompt), `label` (the
  dataset's label column) and `metadata` (a dict);
- a reward is a number, or a dict from which `--reward-key` picks the number.

The task: `sample.label` (AMD's RL record, a dict or JSON text), else
`sample.metadata["ground_truth"]`, else the record's fields in `sample.metadata`.
`sample.metadata` may also set `kvault_url`, `previous_rewards` and `discount`
(multi-turn: the reward is the discounted return), `kvault_reward`, `kvault_policy`.
The server: metadata's `kvault_url`, else $KVAULT_URL, else slime's `--rm-url`.

The reward: a float; when `--reward-key` is set, a dict holding the score under that
key (and under "score") with the raw fields (compiled, correct, speedup, status,
reference_ms, candidate_ms, message). A broken task raises TaskError, an
infrastructure failure InfrastructureError: never a reward of 0.
"""
import os

from .client import error_for, problem_of
from .records import build_request, has_task, overrides_from, parse_ground_truth, raw_fields, score_of
from .shared import shared_client


def _metadata(sample):
    metadata = getattr(sample, "metadata", None)
    return metadata if isinstance(metadata, dict) else {}


def _record(sample):
    record = parse_ground_truth(getattr(sample, "label", None))
    if has_task(record):
        return record
    metadata = _metadata(sample)
    if metadata.get("ground_truth") is not None:
        return parse_ground_truth(metadata["ground_truth"])
    return metadata


def _url(args, sample):
    return _metadata(sample).get("kvault_url") or os.environ.get("KVAULT_URL") or getattr(args, "rm_url", None)


def _reward(args, result):
    score = score_of(result)
    key = getattr(args, "reward_key", None)
    if not key:
        return score
    reward = dict(raw_fields(result), score=score)
    reward[key] = score
    return reward


def request_of(sample):
    """The request of one Sample."""
    return build_request(_record(sample), sample.response, overrides_from(_metadata(sample)))


async def reward_func(args, sample, **kwargs):
    """slime's custom RM: one Sample -> its reward; a list of Samples -> their rewards."""
    samples = list(sample) if isinstance(sample, (list, tuple)) else [sample]
    by_server = {}
    for i, s in enumerate(samples):
        by_server.setdefault(_url(args, s), []).append(i)
    rewards = [None] * len(samples)
    for url, indexes in by_server.items():
        client = shared_client(url, asynchronous=True)
        requests = [request_of(samples[i]) for i in indexes]
        results = await (client.verify(requests[0]) if len(requests) == 1 else client.verify_batch(requests))
        results = results if isinstance(results, list) else [results]
        for i, result in zip(indexes, results):
            if problem_of(result) is not None:
                raise error_for(result, "sample %d" % i)
            rewards[i] = _reward(args, result)
    return rewards if isinstance(sample, (list, tuple)) else rewards[0]
