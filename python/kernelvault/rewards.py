"""verl's custom reward function, scored by `kvault serve` (docs/rl.md, "verl").

    custom_reward_function.path=pkg://kernelvault.rewards
    custom_reward_function.name=compute_score_async    # the reward loop (naive, dapo managers)
    custom_reward_function.name=compute_score          # reward_model.use_reward_loop=False, naive / dapo
    custom_reward_function.name=compute_score_batch    # ... with reward_model.reward_manager=batch

The conventions matched (volcengine/verl, read at commit b178a3c):
- verl/trainer/ppo/reward.py, get_custom_reward_fn: the function is loaded with
  load_extern_object (a file path, or "pkg://module"), called with the config's
  `custom_reward_function.reward_kwargs` merged into its keyword arguments, and
  awaited when inspect.iscoroutinefunction says it is a coroutine function.
- verl/workers/reward_manager/naive.py and dapo.py, and the reward loop's managers
  (verl/experimental/reward_loop/reward_manager/naive.py, limited.py, remote.py):
  one call per response, by keyword: data_source=, solution_str=, ground_truth=,
  extra_info= (plus reward_router_address=, reward_model_tokenizer= with a reward
  model); a dict answer must hold "score", its other keys are logged per sample
  (numbers averaged, strings skipped) and must be the same for every sample. The
  `limited` manager scores a raised exception or a timeout 0.0: not for this function.
- verl/workers/reward_manager/batch.py: one call per batch, by keyword:
  data_sources=, solution_strs=, ground_truths=, extra_infos= (each a sequence), plus
  the reward kwargs; a list answer, dict items read by "score".

ground_truth: AMD's RL record, `reward_model.ground_truth` of the row (records.py has
the fields). extra_info may set `kvault_url` (else $KVAULT_URL), `previous_rewards`
and `discount` (multi-turn: the score is then the discounted return), and
`kvault_reward` / `kvault_policy` / `kvault_language` / `kvault_deadline_s`. The
same names without the prefix (`reward`, `policy`, ...) and `kvault_url`,
`kvault_token`, `task_error_score` may come as reward_kwargs.

The answer: {"score": float, "compiled", "correct", "speedup", "status",
"reference_ms", "candidate_ms", "message"}. An infrastructure failure raises
InfrastructureError after the client's retries; a broken task raises TaskError unless
`task_error_score` (a reward kwarg) gives the number to use for it.
"""
from .client import problem_of
from .errors import TaskError
from .records import build_request, overrides_from, raw_fields, score_of
from .shared import shared_client


def _settings(extra_info, kwargs):
    """(url, token, request overrides, task_error_score) of one call."""
    extra = extra_info if hasattr(extra_info, "get") else {}
    url = extra.get("kvault_url") or kwargs.get("kvault_url")
    token = kwargs.get("kvault_token")
    overrides = {name: kwargs[name] for name in ("reward", "policy", "run", "language", "deadline_s", "discount")
                 if kwargs.get(name) is not None}
    overrides.update(overrides_from(extra))
    return url, token, overrides, kwargs.get("task_error_score")


def _answer(result, task_error_score):
    """A result -> verl's dict; a task error -> TaskError, or task_error_score."""
    if problem_of(result) == "task":
        if task_error_score is None:
            error = result.get("error") if isinstance(result.get("error"), dict) else {}
            raise TaskError("kernelvault: task error: %s" % (error.get("message") or result.get("message")),
                            kind="task", result=result)
        return dict(raw_fields(result), score=float(task_error_score))
    return dict(raw_fields(result), score=score_of(result))


def _task_error_answer(error, task_error_score):
    if task_error_score is None:
        raise error
    return _answer(error.result or {"status": "task_error", "message": error.message}, task_error_score)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's per-response reward: one POST /v1/verify."""
    url, token, overrides, task_error_score = _settings(extra_info, kwargs)
    request = build_request(ground_truth, solution_str, overrides)
    try:
        result = shared_client(url, token).verify(request)
    except TaskError as e:
        return _task_error_answer(e, task_error_score)
    return _answer(result, task_error_score)


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """compute_score as a coroutine function, for verl's async reward loop."""
    url, token, overrides, task_error_score = _settings(extra_info, kwargs)
    request = build_request(ground_truth, solution_str, overrides)
    try:
        result = await shared_client(url, token, asynchronous=True).verify(request)
    except TaskError as e:
        return _task_error_answer(e, task_error_score)
    return _answer(result, task_error_score)


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's BatchRewardManager calling convention: every response of the batch in
    one verify_batch per server; a list of compute_score's dicts, in order."""
    n = len(solution_strs)
    extra_infos = [None] * n if extra_infos is None else list(extra_infos)
    ground_truths = list(ground_truths)
    if len(ground_truths) != n or len(extra_infos) != n:
        raise ValueError("kernelvault: %d responses, %d ground truths, %d extra_infos"
                         % (n, len(ground_truths), len(extra_infos)))
    by_server = {}
    task_error_score = kwargs.get("task_error_score")
    for i in range(n):
        url, token, overrides, _ = _settings(extra_infos[i], kwargs)
        request = build_request(ground_truths[i], solution_strs[i], overrides)
        by_server.setdefault((url, token), []).append((i, request))
    answers = [None] * n
    for (url, token), items in by_server.items():
        results = shared_client(url, token).verify_batch([request for _, request in items])
        for (i, _), result in zip(items, results):
            answers[i] = _answer(result, task_error_score)
    return answers
