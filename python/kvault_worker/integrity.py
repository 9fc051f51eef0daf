"""Harness integrity: detects a candidate that patched what the worker relies on.

A snapshot is taken when this module is imported (by the session, before any task
or candidate code runs) of:
- the clocks (`time.perf_counter`, `perf_counter_ns`, `monotonic`, `monotonic_ns`,
  `time`, `time_ns`) and the device synchronisation and event API
  (`torch.cuda.synchronize`, `Event` and its methods, `Stream.synchronize`,
  `current_stream`, `torch.cuda._sleep`, `CUDAGraph.replay`, which samples and bursts run);
- the tensor methods the worker uses to read outputs (`Tensor.cpu`, `to`,
  `contiguous`, `clone`, `copy_`, `detach`, `view`, `numpy`) and comparisons
  (`torch.equal`, `torch.allclose`, `torch.isnan`);
- every callable that `torch`, `torch.nn.functional` and `torch.Tensor` bind (the
  task's `get_inputs` calls them while a sample's inputs are drawn, before its clock),
  and those of the builtins, `random`, `numpy.random`, `torch.random`, `os` and
  `contextlib`, which the worker looks up at call time there (`zip` sees the fresh
  inputs, `random.seed` the sample's seed), `builtins.__import__`, and every attribute
  of `torch.Tensor`, dunders included (a `__getattribute__` defined on the class runs
  on the worker's tensors too);
- every function, class, builtin and module bound at the top of the worker's own
  modules (`timers._perf_counter_ns`, an alias of a clock, is one; so is `os` in
  `protocol`, through which replies are written), and every method, static or class
  method and property of the worker's own classes (`checked_run._Caller.call`: a class
  whose method is replaced is still the same class);
- of every Python function above, what can be swapped without rebinding it: its
  `__code__`, defaults and closure cells (a function object whose code was replaced is
  still the same object);
- the live objects of the request loop (`watch`): the protocol channel and the
  session may not gain an instance attribute that hides a method of their class
  (`channel.send = ...`), and the session's table of handlers may not change;
- the precision switches (`allow_tf32` of matmul and cuDNN, the fp32 matmul
  precision), so a candidate cannot make the reference lossy;
- the interpreter's hooks that would run the candidate's code inside the worker's own
  work, between the samples where no clock looks (the cache flush, the requests
  around the samples): the trace and profile functions (`sys.settrace`,
  `sys.setprofile`, and `threading`'s for new threads), the garbage collector's
  callbacks (`gc.callbacks`), signal handlers (but SIGCHLD's), audit hooks added, and
  torch function or dispatch modes left entered (the depth of both stacks);
- the dispatcher's kernels of every operator that exists when the snapshot settles
  (PyTorch's own): a kernel registered for one of them afterwards (`torch.library`,
  `TORCH_LIBRARY_IMPL` in an extension) runs the candidate's code wherever the worker
  dispatches it, where no clock looks (`kernel_changes`, about 0.1 s, so checked
  after `load`, warm-up, graph capture and timing; the operators of every sample's own
  path, SAMPLE_PATH_OPS, after every flush and sample too);
- the loaded task's functions that draw a case's inputs (`watch_task`): their code,
  defaults and closure cells, and the callables and modules of their globals;
- the worker's objects on the timing path (`guard`): the timed side, the flush
  buffer's owner, a graph and its input sets may not change class nor gain an
  instance attribute that hides a method, and the attributes named when guarded
  (the flush buffer, a graph's pool of inputs) keep their object, and a tensor its
  memory and size (`Tensor.set_` in place).
`changes()` lists what differs now. `settle()` is called by `hello`, once the worker's
modules are imported and the device is open. The worker checks `changes()` after
`load`, `run` and `time`; any change is a `policy_violation`. Limits: patching done in C (e.g. an
extension that rewrites libcudart's symbols) is not seen here.
"""
import builtins
import contextlib
import gc
import os
import random
import signal
import sys
import threading
import time
import types
import weakref

import torch

# PyTorch 2.x rebinds some of the snapshot's functions when torch._dynamo is first
# imported (torch.manual_seed becomes a wrapper that disables compilation). An honest
# candidate can trigger that import (an extension build, Triton, torch.compile), so it
# is made here, before the snapshot, and the rebound functions are the baseline.
try:
    import torch._dynamo  # noqa: F401
except Exception:  # older PyTorch has none; a broken one changes nothing here
    pass

_OBJECTS = {
    "builtins": builtins,
    "time": time,
    "torch": torch,
    "torch.cuda": torch.cuda,
    "torch.cuda.Event": getattr(torch.cuda, "Event", None),
    "torch.cuda.Stream": getattr(torch.cuda, "Stream", None),
    "torch.Tensor": torch.Tensor,
    "torch.cuda.CUDAGraph": getattr(torch.cuda, "CUDAGraph", None),
}
_ATTRIBUTES = {
    # Run by every import statement, those inside the worker's functions too.
    "builtins": ("__import__",),
    "time": ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"),
    "torch": ("equal", "allclose", "isnan", "isinf", "empty_like", "manual_seed", "empty", "stack",
              "index_select", "no_grad", "randint", "Generator"),
    # torch.manual_seed hands every sample's seed to the CUDA seeding functions.
    "torch.cuda": ("synchronize", "Event", "Stream", "current_stream", "default_stream",
                   "_sleep", "empty_cache", "manual_seed", "manual_seed_all", "_lazy_call",
                   "is_initialized", "_is_in_bad_fork"),
    "torch.cuda.Event": ("record", "elapsed_time", "synchronize", "query", "wait"),
    "torch.cuda.Stream": ("synchronize", "wait_stream", "wait_event", "query"),
    "torch.Tensor": ("cpu", "to", "contiguous", "clone", "copy_", "detach", "view", "numpy",
                     "__setitem__", "untyped_storage", "storage", "data_ptr", "fill_", "zero_",
                     "index_select", "__torch_function__"),
    "torch.cuda.CUDAGraph": ("replay",),
}


# The namespaces whose functions the worker, and the task's own code in the
# candidate's worker (get_inputs draws a sample's fresh inputs before its clock
# starts), call: every callable they bind is snapshotted by identity, so a wrapper of
# `torch.randn` that computes the answer while the inputs are drawn is a change. The
# builtins and the standard modules the worker looks up at call time belong here too:
# `zip` sees a sample's fresh inputs as the worker copies them into the timed buffers
# (`relu.builtin-zip`), `random.seed` and NumPy's get each sample's seed before its
# inputs are drawn (`relu.seed-hook`), `contextlib.nullcontext` wraps the drawing.
_NAMESPACES = {"torch": torch, "torch.nn.functional": torch.nn.functional,
               "torch.Tensor": torch.Tensor, "torch.random": torch.random, "builtins": builtins,
               "random": random, "os": os, "contextlib": contextlib}
try:
    import numpy.random
    _NAMESPACES["numpy.random"] = numpy.random
except ImportError:  # numpy is optional (seeding.py)
    pass


def _namespace_callables():
    found = {}
    for prefix, space in _NAMESPACES.items():
        for attr, value in list(vars(space).items()):
            if not attr.startswith("__") and (callable(value) or isinstance(value, (staticmethod, classmethod))) \
                    and not isinstance(value, types.ModuleType):
                found["%s.%s" % (prefix, attr)] = (space, attr, value)
    return found


# Kernels the dispatcher holds for the operators that exist when the snapshot settles
# (PyTorch's own): a kernel registered for one of them afterwards (`torch.library`,
# `TORCH_LIBRARY_IMPL` in an extension) runs the candidate's code wherever the worker
# dispatches that operator: inside the copy of a sample's fresh inputs into the timed
# buffers, the drawing of those inputs, the flush's `fill_`, where no clock looks.
# Meta kernels compute no values (PyTorch's compiler registers some on first use).
_UNTRACKED_KEYS = ("Meta:",)


# The operators on every sample's unclocked path (drawing its inputs, copying them into
# the timed buffers, the flush, capturing the output): their kernels are checked after
# every flush and sample too, which costs about 1 ms (the whole table, about 0.1 s, is
# checked only where a registration would first take effect).
SAMPLE_PATH_OPS = ("aten::copy_", "aten::fill_.Scalar", "aten::fill_.Tensor", "aten::zero_", "aten::normal_",
                   "aten::uniform_", "aten::random_", "aten::random_.from", "aten::random_.to",
                   "aten::bernoulli_.float", "aten::exponential_", "aten::randn", "aten::rand", "aten::randint",
                   "aten::randperm", "aten::empty.memory_format", "aten::empty_strided", "aten::clone",
                   "aten::_to_copy", "aten::set_.source_Storage")


def _dispatcher_kernels():
    """operator -> the dispatcher's description of its kernels (each key's kernel and
    where it was registered), for every operator that has one."""
    names = getattr(torch._C, "_dispatch_get_registrations_for_dispatch_key", None)
    dump = getattr(torch._C, "_dispatch_dump", None)
    if names is None or dump is None:
        return {}
    return {op: _kernels_of(dump(op)) for op in names("")}


def _kernels_of(text):
    return tuple(line for line in text.splitlines() if not line.startswith(_UNTRACKED_KEYS))


def _switches():
    values = {"torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
              "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32}
    getter = getattr(torch, "get_float32_matmul_precision", None)
    if getter is not None:
        values["torch.get_float32_matmul_precision()"] = getter()
    return values


# With KVAULT_WORKER_PROFILE set, every request runs under cProfile (profiling.py),
# whose profiler is the process's profile function while it runs.
_PROFILING = bool(os.environ.get("KVAULT_WORKER_PROFILE"))


# Every signal's handler but SIGCHLD's, which PyTorch's own worker pools install (data
# loaders, compile workers) when an honest candidate starts one.
_SIGNALS = sorted(set(signal.valid_signals()) - {signal.SIGCHLD}) if hasattr(signal, "valid_signals") else []
_AUDIT_HOOKS_ADDED = []  # audit hooks added after settle(): they cannot be removed
_AUDIT_INSTALLED = []


def _audit(event, args):
    """The worker's audit hook (settle): notes every audit hook added after it, which
    would run on events the worker's own work raises (ctypes calls, imports, files)."""
    if event == "sys.addaudithook":
        _AUDIT_HOOKS_ADDED.append(event)


def _hooks():
    """The interpreter's hooks that run Python code inside any of the worker's work:
    trace and profile functions, signal handlers (a timer's signal runs its handler
    between any two bytecodes of the worker), audit hooks added, torch modes left
    entered."""
    hooks = {"sys.gettrace()": sys.gettrace(),
             "threading trace hook": getattr(threading, "_trace_hook", None),
             "threading profile hook": getattr(threading, "_profile_hook", None),
             "sys.addaudithook": len(_AUDIT_HOOKS_ADDED)}
    if not _PROFILING:
        hooks["sys.getprofile()"] = sys.getprofile()
    # A torch function or dispatch mode entered and never left intercepts every later
    # torch call on the thread: the harness's own (the flush's fill_) included.
    for name, depth in (("torch function modes", "_len_torch_function_stack"),
                        ("torch dispatch modes", "_len_torch_dispatch_stack")):
        if hasattr(torch._C, depth):
            hooks[name] = getattr(torch._C, depth)()
    for number in _SIGNALS:
        try:
            hooks["signal %d handler" % number] = signal.getsignal(number)
        except (ValueError, OSError):
            pass
    # Python 3.12's monitoring tools call back on the worker's own code like a profiler.
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        for tool in range(6):
            hooks["sys.monitoring tool %d" % tool] = monitoring.get_tool(tool)
    return hooks


def _tensor_class():
    """torch.Tensor's own attributes, dunders included: `__getattribute__`, `__del__` or
    `__eq__` defined on the class run the candidate's code on every tensor of the
    worker's too (copying a sample's fresh inputs compares their `shape`, before the
    clock: `relu.tensor-getattr`). Its C base class cannot be changed."""
    return dict(vars(torch.Tensor))


def _runs_code(value):
    """Whether a class attribute runs code when used: a function or another callable, a
    descriptor (property, static or class method). Data (`__doc__`, and
    `__annotations__`, which merely reading it adds to the class) does not."""
    return callable(value) or hasattr(type(value), "__get__") and not isinstance(value, (str, bytes, dict))


def _tensor_class_changes(before):
    now = vars(torch.Tensor)
    return ["torch.Tensor.%s" % name for name in sorted(set(before) | set(now))
            if now.get(name, _EMPTY_CELL) is not before.get(name, _EMPTY_CELL)
            and (_runs_code(now.get(name)) or _runs_code(before.get(name)))]


def _hook_changes(before, callbacks):
    changed = [name for name, value in _hooks().items() if value is not before.get(name)
               and value != before.get(name)]
    if not _same(callbacks, list(gc.callbacks)):
        changed.append("gc.callbacks")
    return changed


def _fingerprint(value):
    """What identifies an attribute's value: the object, and for a tensor also its
    exact class, memory and size (a tensor can be pointed at other memory in place)."""
    if isinstance(value, torch.Tensor):
        return (id(value), type(value), value.data_ptr(), value.numel(), value.dtype, str(value.device))
    if isinstance(value, dict):
        return (id(value), tuple((k, _fingerprint(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):  # its items by identity (a graph's outputs: many)
        return (id(value), tuple(id(v) for v in value))
    return (id(value), type(value))


class _Guard:
    """A worker object on the timing path, by weak reference: its class, and the
    fingerprints of the attributes named when it was guarded."""
    __slots__ = ("ref", "klass", "attrs")

    def __init__(self, obj, attrs):
        self.ref = weakref.ref(obj)
        self.klass = type(obj)
        self.attrs = {a: _fingerprint(getattr(obj, a, None)) for a in attrs}

    def changes(self, name):
        obj = self.ref()
        if obj is None:
            return []
        if type(obj) is not self.klass:
            return ["%s.__class__" % name]
        changed = ["%s.%s" % (name, attr) for attr in _hidden_methods(obj)]
        changed += ["%s.%s" % (name, a) for a, f in self.attrs.items() if _fingerprint(getattr(obj, a, None)) != f]
        return changed


_BOUND = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)
_EMPTY_CELL = object()
_MEMBER = (types.FunctionType, staticmethod, classmethod, property)


def _own_module(name):
    return name == "kvault_worker" or name.startswith("kvault_worker.")


def _functions_of(value):
    """The Python functions behind a bound value: itself, a method's or a static or class
    method's function, a property's accessors."""
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    value = getattr(value, "__func__", value)  # bound methods, staticmethod, classmethod
    return [value] if isinstance(value, types.FunctionType) else []


def _cells(fn):
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            out.append(_EMPTY_CELL)
    return out


def _same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class _Function:
    """What a Python function is made of and can be swapped in place, as it was: its
    code, defaults, keyword defaults and closure cells' contents (by identity)."""
    __slots__ = ("fn", "code", "defaults", "kwdefaults", "kwvalues", "cells")

    def __init__(self, fn):
        self.fn, self.code, self.defaults = fn, fn.__code__, fn.__defaults__
        self.kwdefaults = fn.__kwdefaults__
        self.kwvalues = list((fn.__kwdefaults__ or {}).values())
        self.cells = _cells(fn)

    def changed(self):
        fn = self.fn
        return (fn.__code__ is not self.code or fn.__defaults__ is not self.defaults
                or fn.__kwdefaults__ is not self.kwdefaults
                or (self.kwvalues and not _same(self.kwvalues, list(fn.__kwdefaults__.values())))
                or (self.cells and not _same(self.cells, _cells(fn))))


def _members(klass):
    """A worker class's own methods, static and class methods and properties."""
    return {attr: value for attr, value in vars(klass).items() if isinstance(value, _MEMBER)}


def _own_definitions():
    """Every function, class, builtin and module a worker module binds at its top level
    (its own definitions and what it imported or aliased)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not _own_module(name) or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("__") or not (isinstance(value, _BOUND) or callable(value)):
                continue
            found["%s.%s" % (name, attr)] = (module, attr, value)
    return found


def _own_classes(definitions):
    """The worker's own classes among `definitions`: name -> (class, its members, the
    size of its __dict__)."""
    classes = {}
    for _, _, value in definitions.values():
        if isinstance(value, type) and _own_module(getattr(value, "__module__", "")):
            classes["%s.%s" % (value.__module__, value.__qualname__)] = (value, _members(value), len(vars(value)))
    return classes


def _hidden_methods(obj):
    """Instance attributes of `obj` that hide a callable of its class."""
    own = getattr(obj, "__dict__", {})
    return sorted(attr for attr in own if callable(getattr(type(obj), attr, None)))


class Snapshot:
    """What the harness relies on, by identity (objects) or by value (switches)."""

    def __init__(self):
        self.attributes = {}
        for owner_name, names in _ATTRIBUTES.items():
            owner = _OBJECTS[owner_name]
            if owner is None:
                continue
            for attr in names:
                if hasattr(owner, attr):
                    self.attributes["%s.%s" % (owner_name, attr)] = (owner, attr, _raw(owner, attr))
        self.own = {}
        self.namespaces = {}  # name -> (namespace, attribute, value): torch's callables
        self.classes = {}    # name -> (class, {member: value}, size of its __dict__)
        self.functions = {}  # id -> (name, _Function): every Python function behind the above
        self._add_functions(self.attributes.items())
        self.switches = _switches()
        self.watched = {}  # name -> (object, its handlers dict or None, a copy of it)
        self.guarded = {}  # name -> _Guard: worker objects on the timing path
        self.hooks = _hooks()
        self.gc_callbacks = list(gc.callbacks)
        self.kernels = {}  # operator -> its kernels when settled (_dispatcher_kernels)
        self.tensor_class = _tensor_class()
        self.task_functions = {}  # id -> (name, _Function): the loaded task's case functions
        self.task_globals = {}    # id -> (their globals, {name: callable or module})

    def settle(self):
        """Records the worker's own definitions and the precision switches as they are
        once the device is open (`hello` sets the switches), before any task code."""
        self.own = _own_definitions()
        self.namespaces = _namespace_callables()
        self.classes = _own_classes(self.own)
        self._add_functions(self.own.items())
        self._add_functions(("%s.%s" % (name, m), (None, None, v)) for name, (_, members, _) in self.classes.items()
                            for m, v in members.items())
        self.switches = _switches()
        if not _AUDIT_HOOKS_ADDED and _audit not in _AUDIT_INSTALLED:
            sys.addaudithook(_audit)
            _AUDIT_INSTALLED.append(_audit)
        self.hooks = _hooks()
        self.gc_callbacks = list(gc.callbacks)
        self.kernels = _dispatcher_kernels()
        self.tensor_class = _tensor_class()

    def _add_functions(self, entries):
        for name, (_, _, value) in entries:
            for fn in _functions_of(value):
                self.functions.setdefault(id(fn), (name, _Function(fn)))

    def watch(self, name, obj):
        """Watches a live object of the request loop (the channel, the session): an
        instance attribute that hides a method of its class, or a change to its
        `handlers` table, is a change."""
        handlers = getattr(obj, "handlers", None)
        copy = dict(handlers) if isinstance(handlers, dict) else None
        self.watched[name] = (obj, handlers if copy is not None else None, copy)

    def watch_task(self, functions):
        """Watches the task's functions that draw a case's inputs (`get_inputs`,
        `get_init_inputs`): their code, defaults and closure cells, and the callables and
        modules of their module's globals. The worker calls them before a sample's clock
        starts, and what they look up is the task's, not PyTorch's: a stand-in for the
        task's `torch` whose `randn` computed the answer as it drew the inputs
        (`relu.task-globals`). Replaces what was watched before."""
        self.unwatch_task()
        for fn in functions:
            for f in _functions_of(fn):
                self.task_functions[id(f)] = ("the task's %s" % f.__qualname__, _Function(f))
                space = f.__globals__
                self.task_globals[id(space)] = (space, {k: v for k, v in space.items()
                                                        if callable(v) or isinstance(v, types.ModuleType)})

    def unwatch_task(self):
        self.task_functions, self.task_globals = {}, {}

    def guard(self, name, obj, attrs=()):
        """Guards a worker object on the timing path (its class, no instance attribute
        hiding a method, the fingerprints of `attrs` as they are now) for as long as it
        lives, or until guarded again under `name` or `unguard`ed."""
        self.guarded[name] = _Guard(obj, attrs)

    def unguard(self, name):
        self.guarded.pop(name, None)

    def changes(self):
        """Names of everything replaced or switched since the snapshot, sorted."""
        changed = [name for name, (owner, attr, value) in self.attributes.items()
                   if _raw(owner, attr) is not value]
        changed += [name for name, (module, attr, value) in self.own.items()
                    if vars(module).get(attr) is not value]
        changed += [name for name, (space, attr, value) in self.namespaces.items()
                    if vars(space).get(attr) is not value]
        for name, (klass, members, size) in self.classes.items():
            now = vars(klass)
            changed += ["%s.%s" % (name, m) for m, value in members.items() if now.get(m) is not value]
            if len(now) != size:  # a member added (one that hides a base class's, say)
                changed += ["%s.%s" % (name, m) for m in sorted(_members(klass).keys() - members.keys())]
        changed += [name for name, f in self.functions.values() if f.changed()]
        changed += [name for name, f in self.task_functions.values() if f.changed()]
        for space, values in self.task_globals.values():
            changed += ["the task's %s" % k for k, v in values.items() if space.get(k, _EMPTY_CELL) is not v]
        for name, (obj, handlers, copy) in self.watched.items():
            changed += ["%s.%s" % (name, attr) for attr in _hidden_methods(obj)]
            if getattr(obj, "handlers", handlers) is not handlers or (
                    copy is not None and (handlers.keys() != copy.keys()
                                          or any(handlers[k] is not v for k, v in copy.items()))):
                changed.append("%s.handlers" % name)
        for name, guard in list(self.guarded.items()):
            if guard.ref() is None:
                self.guarded.pop(name, None)
            else:
                changed += guard.changes(name)
        changed += _hook_changes(self.hooks, self.gc_callbacks)
        changed += [c for c in _tensor_class_changes(self.tensor_class) if c not in changed]
        now = _switches()
        changed += ["%s (%r -> %r)" % (k, v, now.get(k)) for k, v in self.switches.items() if now.get(k) != v]
        return sorted(changed)

    def kernel_changes(self, ops=None):
        """The operators, of those settled (or of `ops` among them), whose kernels the
        dispatcher holds changed (one registered for a key, replaced or removed). All
        of them take about 0.1 s: checked where a candidate's registration would first
        take effect on the timing path (after `load`, warm-up and timing); the sample
        path's (SAMPLE_PATH_OPS) after every flush and sample."""
        dump = getattr(torch._C, "_dispatch_dump", None)
        if dump is None:
            return []
        changed = []
        settled = self.kernels if ops is None else {op: self.kernels[op] for op in ops if op in self.kernels}
        for op, kernels in settled.items():
            try:
                now = _kernels_of(dump(op))
            except RuntimeError:  # the operator itself was removed
                now = None
            if now != kernels:
                changed.append("the dispatcher's kernels of %s" % op)
        return changed

    def restore_switches(self):
        """Puts the precision switches back (after a violation, before the worker is reused)."""
        torch.backends.cuda.matmul.allow_tf32 = self.switches["torch.backends.cuda.matmul.allow_tf32"]
        torch.backends.cudnn.allow_tf32 = self.switches["torch.backends.cudnn.allow_tf32"]


def _raw(owner, attr):
    """The attribute as stored (class __dict__ first, so methods compare by identity)."""
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in vars(klass):
                return vars(klass)[attr]
    return getattr(owner, attr, None)


SNAPSHOT = Snapshot()
