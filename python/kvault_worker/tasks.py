"""Loading task files (docs/task-format.md) and checking what they return.

A Task holds a freshly executed module (fresh_module.exec_file) plus what was
found in it: the Model class, the optional functional twin, the input cases and
the validated KVAULT_META. Every problem with the file is a WorkerError of kind
task_error with a message that names the problem.
"""
import inspect
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional

import torch

from kvault_worker import distributions, fresh_module, held_out, op_policy
from kvault_worker.errors import TASK_ERROR, WorkerError, attributed

CASE_KINDS = {"correctness": (True, False), "performance": (False, True), "both": (True, True)}
MIN_SEEDS = 3
NAN_POLICIES = ("match", "forbid")


@dataclass
class Case:
    name: str
    correctness: bool
    performance: bool
    get_inputs: Callable
    get_init_inputs: Callable

    def to_json(self):
        return {"name": self.name, "correctness": self.correctness, "performance": self.performance}


@dataclass
class Meta:
    rtol: Optional[float] = None
    atol: Optional[float] = None
    nan_policy: str = "match"
    seeds: int = MIN_SEEDS
    policy: str = "any"
    input_distributions: List[str] = field(default_factory=lambda: list(distributions.EXTRA))
    plausible_speedup: Optional[float] = None
    held_out: bool = True  # held-out sizes' cases for tasks written for one (held_out.py)

    def to_json(self):
        return {"rtol": self.rtol, "atol": self.atol, "nan_policy": self.nan_policy,
                "seeds": self.seeds, "policy": self.policy,
                "input_distributions": list(self.input_distributions),
                "plausible_speedup": self.plausible_speedup}


@dataclass
class Task:
    path: str
    name: str
    module: object
    model_class: type
    twin_fn: Optional[Callable]  # module_fn when the task has a functional twin
    cases: List[Case]
    meta: Meta
    # The task run again at each held-out case's sizes (held_out.py).
    held_out_modules: List[object] = field(default_factory=list)

    @property
    def has_twin(self):
        return self.twin_fn is not None


def _fail(message):
    return WorkerError(TASK_ERROR, message)


def load_task(path):
    """Executes the task file as a fresh module and inspects it. Raises task_error."""
    with attributed(TASK_ERROR, "task does not import"):
        module = fresh_module.exec_file(path, "task")
    try:
        return _inspect(path, module)
    except BaseException:
        fresh_module.release(module)
        raise


def release_task(task):
    if task is not None:
        fresh_module.release(task.module)
        for module in task.held_out_modules:
            fresh_module.release(module)


def _inspect(path, module):
    model_class = getattr(module, "Model", None)
    if model_class is None:
        raise _fail("task defines no class Model")
    if not (inspect.isclass(model_class) and issubclass(model_class, torch.nn.Module)):
        raise _fail("Model must be a torch.nn.Module subclass, got %s" % _type_name(model_class))
    get_inputs = getattr(module, "get_inputs", None)
    if get_inputs is None:
        raise _fail("task defines no function get_inputs")
    if not callable(get_inputs):
        raise _fail("get_inputs must be a function, got %s" % _type_name(get_inputs))
    get_init_inputs = getattr(module, "get_init_inputs", None)
    if get_init_inputs is None:
        get_init_inputs = list
    elif not callable(get_init_inputs):
        raise _fail("get_init_inputs must be a function, got %s" % _type_name(get_init_inputs))
    task = Task(path=str(path), name=Path(path).stem, module=module, model_class=model_class,
                twin_fn=_find_twin(module, model_class),
                cases=_read_cases(module, get_inputs, get_init_inputs),
                meta=_read_meta(getattr(module, "KVAULT_META", None)))
    if task.meta.held_out and getattr(module, "get_cases", None) is None:
        _add_held_out(task)
    return task


def _add_held_out(task):
    """Appends the held-out cases (held_out.py), the smaller one then the larger one,
    when the task binds data sizes; a task that does not run again at those sizes
    simply has none."""
    try:
        text = Path(task.path).read_bytes()
    except OSError:
        return
    for name, make_code in ((held_out.HELD_OUT, held_out.held_out_code),
                            (held_out.HELD_OUT_LARGER, held_out.larger_code)):
        try:
            code = make_code(text, task.path)
            if code is None:
                return
            again = fresh_module.exec_file(task.path, "task", code)
        except Exception:
            return
        get_inputs = getattr(again, "get_inputs", None)
        get_init_inputs = getattr(again, "get_init_inputs", None) or list
        if not callable(get_inputs) or not callable(get_init_inputs):
            fresh_module.release(again)
            return
        task.held_out_modules.append(again)
        task.cases.append(Case(name, True, False, get_inputs, get_init_inputs))


def _find_twin(module, model_class):
    """module_fn, when the module defines it and Model.forward takes `fn`."""
    twin = getattr(module, "module_fn", None)
    if not callable(twin):
        return None
    try:
        parameters = inspect.signature(model_class.forward).parameters
    except (TypeError, ValueError):
        return None
    return twin if "fn" in parameters else None


def _read_cases(module, get_inputs, get_init_inputs):
    get_cases = getattr(module, "get_cases", None)
    if get_cases is None:
        return [Case("default", True, True, get_inputs, get_init_inputs)]
    if not callable(get_cases):
        raise _fail("get_cases must be a function, got %s" % _type_name(get_cases))
    with attributed(TASK_ERROR, "get_cases raised"):
        raw = get_cases()
    if not isinstance(raw, (list, tuple)) or not raw:
        raise _fail("get_cases must return a non-empty list of dicts, got %s" % _describe(raw))
    cases, names = [], set()
    for i, entry in enumerate(raw):
        case = _read_case(i, entry, get_init_inputs)
        if case.name in names:
            raise _fail("get_cases: case name %r is used twice" % case.name)
        names.add(case.name)
        cases.append(case)
    return cases


def _read_case(i, entry, default_init):
    where = "get_cases: case %d" % i
    if not isinstance(entry, dict):
        raise _fail("%s must be a dict, got %s" % (where, _type_name(entry)))
    unknown = sorted(set(map(str, entry)) - {"name", "kind", "get_inputs", "get_init_inputs"})
    if unknown:
        raise _fail("%s has unknown key(s) %s" % (where, ", ".join(unknown)))
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise _fail("%s needs a non-empty string 'name'" % where)
    kind = entry.get("kind", "both")
    if kind not in CASE_KINDS:
        raise _fail("%s (%s): kind must be correctness, performance or both, got %r" % (where, name, kind))
    get_inputs = entry.get("get_inputs")
    if not callable(get_inputs):
        raise _fail("%s (%s) needs a callable 'get_inputs'" % (where, name))
    get_init = entry.get("get_init_inputs", default_init)
    if not callable(get_init):
        raise _fail("%s (%s): 'get_init_inputs' must be callable" % (where, name))
    correctness, performance = CASE_KINDS[kind]
    return Case(name, correctness, performance, get_inputs, get_init)


def _read_meta(raw):
    if raw is None:
        return Meta()
    if not isinstance(raw, dict):
        raise _fail("KVAULT_META must be a dict, got %s" % _type_name(raw))
    unknown = sorted(set(map(str, raw)) - {"rtol", "atol", "nan_policy", "seeds", "policy",
                                           "input_distributions", "plausible_speedup", "held_out"})
    if unknown:
        raise _fail("KVAULT_META has unknown key(s) %s" % ", ".join(unknown))
    meta = Meta()
    for key in ("rtol", "atol"):
        value = raw.get(key)
        if value is not None:
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not math.isfinite(value) or value < 0):
                raise _fail("KVAULT_META[%r] must be a finite number >= 0 or None, got %r" % (key, value))
            setattr(meta, key, float(value))
    meta.nan_policy = raw.get("nan_policy", meta.nan_policy)
    if meta.nan_policy not in NAN_POLICIES:
        raise _fail("KVAULT_META['nan_policy'] must be 'match' or 'forbid', got %r" % (meta.nan_policy,))
    seeds = raw.get("seeds", MIN_SEEDS)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < MIN_SEEDS:
        raise _fail("KVAULT_META['seeds'] must be an integer >= %d, got %r" % (MIN_SEEDS, seeds))
    meta.seeds = seeds
    meta.policy = raw.get("policy", meta.policy)
    if meta.policy not in op_policy.POLICIES:
        raise _fail("KVAULT_META['policy'] must be one of %s, got %r"
                    % (", ".join(op_policy.POLICIES), meta.policy))
    dists = raw.get("input_distributions", meta.input_distributions)
    if (not isinstance(dists, (list, tuple)) or any(d not in distributions.EXTRA for d in dists)
            or len(set(dists)) != len(dists)):
        raise _fail("KVAULT_META['input_distributions'] must be a list of distinct names from %s, got %r"
                    % (", ".join(distributions.EXTRA), dists))
    meta.input_distributions = list(dists)
    meta.held_out = raw.get("held_out", True)
    if not isinstance(meta.held_out, bool):
        raise _fail("KVAULT_META['held_out'] must be True or False, got %r" % (meta.held_out,))
    bound = raw.get("plausible_speedup")
    if bound is not None:
        if (isinstance(bound, bool) or not isinstance(bound, numbers.Real)
                or not math.isfinite(bound) or bound <= 1):
            raise _fail("KVAULT_META['plausible_speedup'] must be a finite number > 1, got %r" % (bound,))
        meta.plausible_speedup = float(bound)
    return meta


def check_inputs(value):
    """The inputs as a list; raises task_error unless tensors, scalars and None."""
    problem = None
    if not isinstance(value, (list, tuple)):
        problem = _describe(value)
    else:
        for i, item in enumerate(value):
            if not _is_input_item(item):
                problem = "%s with item %d of type %s" % (type(value).__name__, i, _type_name(item))
                break
    if problem is not None:
        raise _fail("get_inputs must return a list of tensors and scalars, got %s" % problem)
    return list(value)


def check_init_inputs(value):
    if not isinstance(value, (list, tuple)):
        raise _fail("get_init_inputs must return a list or tuple, got %s" % _describe(value))
    return list(value)


def _is_input_item(item):
    return item is None or isinstance(item, (torch.Tensor, bool, int, float))


def _type_name(value):
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__qualname__)


def _describe(value):
    return "None" if value is None else "a value of type %s" % _type_name(value)
