"""TRL reward functions scored by `kvault serve` (docs/rl.md, "TRL").

    from kernelvault.trl import KernelVaultReward
    trainer = GRPOTrainer(model=..., reward_funcs=[KernelVaultReward()], train_dataset=ds, ...)

The conventions matched (huggingface/trl, trl/trainer/grpo_trainer.py,
GRPOTrainer._calculate_rewards, read at commit f2cd577):
- a custom reward function is called by keyword with prompts=, completions=,
  completion_ids=, trainer_state=, log_extra=, log_metric= (and environments= when
  the trainer has them), plus every dataset column but prompt/completion as a list
  with one item per completion; it returns one float or None ("not applicable") per
  completion; None becomes NaN and the other reward functions decide that sample;
- completions are strings, or in the conversational format lists of messages;
- it is treated as async when inspect.iscoroutinefunction(func) is true, then
  awaited with asyncio.gather beside the other async reward functions on the
  trainer's own event loop;
- its name in the logs is `__name__` (trl/trainer/utils.py, get_callable_name),
  else the class name.

The task comes from the dataset: a `ground_truth` column (AMD's RL record, a dict or
JSON text), or verl's `reward_model` column ({"ground_truth": ...}), or the record's
fields as columns of their own (`pytorch_module_code`, `kernel_name`, `hip_code`,
`language`/`lang`, `reward`, `atol`, `rtol`). Optional columns `previous_rewards` and
`discount` make the reward the discounted return of a multi-turn trajectory.

A row without a task, and a task the server cannot run (task_error), get None; an
infrastructure failure raises InfrastructureError after the client's retries.
Each call logs a `kvault_status` column and the metrics `kvault/compiled`,
`kvault/correct` (shares of the judged completions) through TRL's log_extra/log_metric.
"""
import inspect

from .client import problem_of
from .records import OVERRIDES, build_request, completion_text, has_task, parse_ground_truth, score_of
from .shared import shared_client

# Keyword arguments TRL adds that are not dataset columns.
_TRAINER_KWARGS = ("log_extra", "log_metric", "environments")
_RECORD_COLUMNS = ("pytorch_module_code", "task_source", "pytorch_functional_code", "kernel_name", "task_name",
                   "hip_code", "language", "lang", "reward", "atol", "rtol", "backend", "format")


def _record(value):
    """A ground truth cell as a record; {} for another task's answer (a row of a
    multi-task dataset: a number, or text that is not a JSON object)."""
    if value is None or isinstance(value, (int, float)):
        return {}
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return {}
    return parse_ground_truth(value)


def _row_record(columns, i):
    """The ground truth of row i from the columns ({} when the row has none)."""
    if columns.get("ground_truth") is not None:
        return _record(columns["ground_truth"][i])
    if columns.get("reward_model") is not None:
        return _record(columns["reward_model"][i])
    return {name: columns[name][i] for name in _RECORD_COLUMNS
            if columns.get(name) is not None and columns[name][i] is not None}


class KernelVaultReward:
    """A TRL reward function (synchronous): one verify_batch per call.

    url, token: the server (default $KVAULT_URL, $KVAULT_TOKEN).
    reward, policy, language, run, discount, deadline_s: request settings for every
        row (a row's ground truth sets its own reward kind and language unless given here).
    name: the name TRL logs the reward under (`__name__`), default "kernelvault".
    client: a Client to use instead of the process's shared one (tests).
    """

    def __init__(self, url=None, token=None, *, name="kernelvault", client=None, **settings):
        unknown = sorted(set(settings) - set(OVERRIDES))
        if unknown:
            raise TypeError("KernelVaultReward: unknown settings %s (known: %s)" % (unknown, ", ".join(OVERRIDES)))
        self.url, self.token, self.settings = url, token, settings
        self.client = client
        self.__name__ = name

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.__name__)

    def _client(self, asynchronous=False):
        return self.client or shared_client(self.url, self.token, asynchronous=asynchronous)

    def _requests(self, completions, columns):
        """One request per completion, None for a row without a task."""
        requests = []
        for i, completion in enumerate(completions):
            record = _row_record(columns, i)
            if not has_task(record):
                requests.append(None)
                continue
            overrides = {name: columns[name][i] for name in ("previous_rewards", "discount")
                         if columns.get(name) is not None}
            overrides.update(self.settings)
            requests.append(build_request(record, completion_text(completion), overrides))
        return requests

    def _rewards(self, requests, results, columns):
        """Scores in completion order (None: not applicable); logs through TRL's hooks."""
        rewards, statuses, judged = [], [], []
        it = iter(results)
        for request in requests:
            result = next(it) if request is not None else None
            if result is None or problem_of(result) == "task":
                rewards.append(None)
                statuses.append("task_error" if result is not None else "")
                continue
            rewards.append(score_of(result))
            statuses.append(str(result.get("status") or ""))
            judged.append(result)
        if callable(columns.get("log_extra")):
            columns["log_extra"]("kvault_status", statuses)
        if callable(columns.get("log_metric")) and judged:
            columns["log_metric"]("kvault/compiled", sum(bool(r.get("compiled")) for r in judged) / len(judged))
            columns["log_metric"]("kvault/correct", sum(bool(r.get("correct")) for r in judged) / len(judged))
        return rewards

    def __call__(self, prompts, completions, completion_ids=None, trainer_state=None, **columns):
        requests = self._requests(completions, columns)
        todo = [r for r in requests if r is not None]
        results = self._client().verify_batch(todo) if todo else []
        return self._rewards(requests, results, columns)


async def _trl_signature(prompts, completions, completion_ids=None, trainer_state=None, **columns):
    """The call signature AsyncKernelVaultReward instances show to `inspect`."""


class AsyncKernelVaultReward(KernelVaultReward):
    """The same reward as a coroutine function: TRL awaits it on its event loop, beside
    its other async reward functions. `inspect.iscoroutinefunction(instance)` is true:
    marked with inspect.markcoroutinefunction where Python has it (3.12+), else given
    the function attributes inspect reads (__code__ and defaults of an async function
    with TRL's signature)."""

    _MARKS = ("_is_coroutine_marker", "__code__", "__defaults__", "__kwdefaults__", "__annotations__")

    def __init__(self, url=None, token=None, **options):
        super().__init__(url, token, **options)
        self._mark()

    def _mark(self):
        if hasattr(inspect, "markcoroutinefunction"):
            inspect.markcoroutinefunction(self)
        else:
            for attr in self._MARKS[1:]:
                setattr(self, attr, getattr(_trl_signature, attr))

    def __getstate__(self):  # the marks are not picklable; __setstate__ sets them again
        return {k: v for k, v in self.__dict__.items() if k not in self._MARKS}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._mark()

    async def __call__(self, prompts, completions, completion_ids=None, trainer_state=None, **columns):
        requests = self._requests(completions, columns)
        todo = [r for r in requests if r is not None]
        results = await self._client(asynchronous=True).verify_batch(todo) if todo else []
        return self._rewards(requests, results, columns)
