"""Typed access to request fields; anything malformed is a bad_request."""
import numbers
import os

from kvault_worker import distributions
from kvault_worker.errors import bad_request

_MISSING = object()
MAX_SEED = 2**63 - 1  # what torch.manual_seed accepts on every version


def _get(request, name, default):
    value = request.get(name, default)
    if value is _MISSING:
        raise bad_request("request lacks %r" % name)
    return value


def integer(request, name, default=_MISSING, minimum=None, maximum=None):
    value = _get(request, name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request("%r must be an integer, got %r" % (name, value))
    if minimum is not None and value < minimum:
        raise bad_request("%r must be >= %d, got %d" % (name, minimum, value))
    if maximum is not None and value > maximum:
        raise bad_request("%r must be <= %d, got %d" % (name, maximum, value))
    return value


def seed(request, name="seed"):
    return integer(request, name, minimum=0, maximum=MAX_SEED)


def number(request, name, default=_MISSING, minimum=0):
    value = _get(request, name, default)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= minimum:
        raise bad_request("%r must be a number >= %s, got %r" % (name, minimum, value))
    return float(value)


def boolean(request, name, default=_MISSING):
    value = _get(request, name, default)
    if not isinstance(value, bool):
        raise bad_request("%r must be true or false, got %r" % (name, value))
    return value


def string(request, name, default=_MISSING):
    value = _get(request, name, default)
    if not isinstance(value, str):
        raise bad_request("%r must be a string, got %r" % (name, value))
    return value


def absolute_path(request, name):
    value = string(request, name)
    if not os.path.isabs(value):
        raise bad_request("%r must be an absolute path, got %r" % (name, value))
    return value


def case_index(request, task, name="case"):
    index = integer(request, name, minimum=0)
    if index >= len(task.cases):
        raise bad_request("case %d out of range: task %s has %d case(s)" % (index, task.name, len(task.cases)))
    return index



def distribution(request):
    """The optional input distribution of run and reference (distributions.py)."""
    value = string(request, "distribution", distributions.TASK)
    if value not in distributions.ALL:
        raise bad_request("unknown distribution %r (expected %s)" % (value, ", ".join(distributions.ALL)))
    return value
