"""The "custom kernel required" policy (docs/adversarial.md, "Policy").

The policy applied to an attempt is the engine's choice (`load`'s `policy`: the
command's default, a flag, or the task's KVAULT_META["policy"]):
- `any`: the candidate may compute with any PyTorch operator;
- `custom_kernel`: the candidate's forward may dispatch only PyTorch operators that
  allocate, view, reshape, copy or fill tensors (ALLOWED below), and on a GPU it
  must be seen to launch a device kernel of its own. Calling `torch.matmul`, the
  task's `Model`, an `einsum`, or falling back to PyTorch in an `except` branch
  dispatches a computing operator and is a `policy_violation`;
- `fused`: PyTorch may compute part of the answer (a GEMM by cuBLAS, a convolution by
  cuDNN), but what becomes the output must have been written by the candidate's own
  code: followed through the operator trace (fused.py), the output may not be what
  PyTorch's operators computed from the inputs alone, and on a GPU a kernel of its
  own must be seen to launch.

What is observed, for each call of a correctness run (Enforcer.call):
- every operator dispatched anywhere in the process, on any thread, whatever
  dispatch keys are excluded: PyTorch's execution-trace observer is a global
  RecordFunction callback, which the dispatcher runs for every operator call from
  Python or C++ (ProcessOperators). A harness operator dispatched after the call
  must show up in the trace, else the observer was turned off (an error);
- on a GPU (checked calls): the device kernels launched by the process (the
  profiler's kernel activity, which sees every thread), matched by name against the
  candidate's own kernels (`__global__` functions and Triton kernels of its source,
  own_kernel_names); library kernels alone (cuBLAS called from an extension) do
  not count. A kernel the harness launches in the same window must show up, else
  the observer is blind (an infrastructure error, not the candidate's).
Private switches that would turn the observation off from Python are replaced, in a
worker under this policy, by tripwires installed before the candidate loads
(install_tripwires); a call of one is a violation.

Not observed (docs/adversarial.md, "Policy", limits): functions called below the
dispatcher (at::native::*, at::cpu::*, `redispatch`), libraries PyTorch does not
dispatch (NumPy, cuBLAS called directly: on a GPU they are seen as foreign
kernels, allowed beside a kernel of the candidate's own), RecordFunction switched
off from C++ (at::RecordFunctionGuard) or switched off and on again inside the call
through private API, and whether the candidate's own kernel did the work.
"""
import json
import os
import re
import sys
import tempfile
import threading
import warnings

import torch
import torch.profiler

# Imported here, before the harness snapshot (integrity.py) is taken: the kernel
# observer's profiler imports torch._dynamo at its first use on a GPU build of torch
# 2.x, and that import rewraps torch.manual_seed, which the snapshot would report.
if torch.version.cuda or getattr(torch.version, "hip", None):
    try:
        import torch._dynamo  # noqa: F401
    except ImportError:  # torch 1.x
        pass
from torch.utils._python_dispatch import TorchDispatchMode

from kvault_worker import process_starts

ANY = "any"
FUSED = "fused"
CUSTOM_KERNEL = "custom_kernel"
POLICIES = (ANY, FUSED, CUSTOM_KERNEL)
OBSERVED = (FUSED, CUSTOM_KERNEL)  # policies that observe the candidate's calls

# Operators that move, shape or allocate data but compute nothing from it.
ALLOWED = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros
ones ones_like new_ones full full_like new_full fill_ zero_ scalar_tensor
view _unsafe_view _reshape_alias reshape as_strided view_as t transpose permute
unsqueeze squeeze expand expand_as slice select narrow unbind split split_with_sizes
chunk detach alias flatten unflatten movedim contiguous clone copy_ _to_copy to
lift_fresh lift_fresh_copy resize_ set_ _copy_from _copy_from_and_resize
is_same_size record_stream resolve_conj resolve_neg
""".split())
# Queries that PyTorch's implementations of the allowed operators make beneath them
# (a copy to the device asks whether its source is pinned, a fill by a 0-dim tensor
# reads its value): allowed only there, never called by the candidate directly.
NESTED_ALLOWED = frozenset("""
is_pinned _pin_memory pin_memory item _local_scalar_dense _has_compatible_shallow_copy_type
""".split())


class OperatorTrace(TorchDispatchMode):
    """Records the names of the dispatched operators (overload packets), in order."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = getattr(func, "overloadpacket", func)
        self.names.append(getattr(packet, "__name__", str(packet)))
        return func(*args, **(kwargs or {}))

    def forbidden(self):
        """Computing operators seen, each once, in the order first seen."""
        seen = []
        for name in self.names:
            if name not in ALLOWED and name not in seen:
                seen.append(name)
        return seen


def resolve(requested, task_policy):
    """The policy to apply: the engine's `requested` one ("task" or None: the task's)."""
    if requested in (None, "task"):
        return task_policy
    if requested not in POLICIES:
        raise ValueError("policy must be one of any, fused, custom_kernel, task; got %r" % (requested,))
    return requested


# --- Operators dispatched anywhere in the process ------------------------------

def _observer_api():
    """PyTorch's execution-trace observer (add, enable, disable, remove), torch 2.x
    or 1.13 names; None when this PyTorch has neither."""
    for module, stem in (("_profiler", "execution_trace"), ("_autograd", "execution_graph")):
        ns = getattr(torch._C, module, None)
        names = ["_%s_%s_observer" % (verb, stem) for verb in ("add", "enable", "disable", "remove")]
        if ns is not None and all(hasattr(ns, n) for n in names):
            return tuple(getattr(ns, n) for n in names)
    return None


_OBSERVER = _observer_api()
_OBSERVER_LOCK = threading.Lock()  # one observer per process
_ROOT_PREFIX = "[pytorch|profiler|execution_"


def _field(node, key):
    """A node field of either trace format (1.13: top-level keys; 2.x: `attrs`)."""
    if key in node:
        return node[key]
    for attr in node.get("attrs", ()):
        if isinstance(attr, dict) and attr.get("name") == key:
            return attr.get("value")
    return None


def _start_order(node):
    """A node's place in the order operators started: trace nodes are numbered when
    they start and written when they end (an operator after the ones it called)."""
    key = node.get("id")
    return key if isinstance(key, int) else 0


def _input_values(node):
    """A node's input values (1.13: `inputs` is the list; 2.x: `inputs.values`)."""
    inputs = node.get("inputs")
    if isinstance(inputs, dict):
        inputs = inputs.get("values")
    return inputs if isinstance(inputs, list) else None


def _output_values(node):
    outputs = node.get("outputs")
    if isinstance(outputs, dict):
        outputs = outputs.get("values")
    return outputs if isinstance(outputs, list) else None


def _tensor_value(value):
    """[tensor id, storage id, offset, numel, itemsize, device] of a tensor value in the
    trace, or None for anything else."""
    if type(value) is list and len(value) == 6 and type(value[5]) is str and \
            type(value[0]) is int and type(value[1]) is int and type(value[3]) is int:
        return value
    return None


def _input_shapes(node):
    if "input_shapes" in node:
        return node["input_shapes"]
    inputs = node.get("inputs")
    return inputs.get("shapes") if isinstance(inputs, dict) else None


class ProcessOperators:
    """Every operator dispatched in the process while open, on every thread and
    whatever dispatch keys are excluded (a global RecordFunction callback: PyTorch's
    execution-trace observer, which writes its trace to a private file).

    After the body, close() dispatches a sentinel operator on this thread and on a
    fresh one, with a shape nobody can predict; both must be in the trace, else the
    observer was switched off (`switched_off`)."""

    def __init__(self):
        if _OBSERVER is None:
            raise RuntimeError("this PyTorch (%s) has no execution-trace observer" % torch.__version__)
        self.nodes = []
        self.switched_off = False
        self._path = None
        self.probes = []  # (width of the probe, the output tensor's position): mark_outputs

    def __enter__(self):
        add, enable, _, _ = _OBSERVER
        _OBSERVER_LOCK.acquire()
        try:
            fd, self._path = tempfile.mkstemp(prefix="kvault-ops-", suffix=".json")
            os.close(fd)
            if not add(self._path):
                raise RuntimeError("the execution-trace observer did not start (%s)" % self._path)
            enable()
        except BaseException:
            self._cleanup()
            _OBSERVER_LOCK.release()
            raise
        return self

    def mark_outputs(self, tensors):
        """Dispatches, for each of `tensors` (the call's outputs), an allowed operator
        that takes it beside a probe of a width nobody can predict, so that the trace
        names the storage each output lies in (output_storages)."""
        for position, tensor in enumerate(tensors):
            width = 2 + int.from_bytes(os.urandom(3), "little") % 1000003
            probe = torch.empty(1, width, device=tensor.device)
            torch.ops.aten.is_same_size(tensor, probe)
            self.probes.append((width, position))

    def output_storages(self):
        """position -> the trace's storage id of each output marked, where found."""
        found = {}
        for node in self.nodes:
            if node.get("name") != "aten::is_same_size":
                continue
            shapes, values = _input_shapes(node), _input_values(node)
            if not shapes or len(shapes) != 2 or not values or len(values) != 2:
                continue
            for width, position in self.probes:
                if shapes[1] == [1, width] and _tensor_value(values[0]) is not None:
                    found[position] = _tensor_value(values[0])[1]
        return found

    def __exit__(self, *exc):
        _, _, disable, remove = _OBSERVER
        try:
            width = 2 + int.from_bytes(os.urandom(2), "little") % 4093
            probe = torch.empty(1, width)
            torch.ops.aten.is_same_size(probe, probe)
            worker = threading.Thread(target=torch.ops.aten.is_same_size, args=(probe, probe))
            worker.start()
            worker.join()
            disable()
            remove()  # writes the end of the trace
            with open(self._path, encoding="utf-8", errors="replace") as f:
                self.nodes = json.load(f).get("nodes", [])
            seen = sum(1 for n in self.nodes if n.get("name") == "aten::is_same_size"
                       and _input_shapes(n) == [[1, width], [1, width]])
            self.switched_off = seen < 2
        finally:
            self._cleanup()
            _OBSERVER_LOCK.release()
        return False

    def _cleanup(self):
        if self._path:
            try:
                os.unlink(self._path)
            except OSError:
                pass
            self._path = None

    def _ops(self):
        """(node, parent operator node or None) for every operator node of the trace,
        in trace order. Only nodes of real operators count (with a schema): a
        RecordFunction label (`RECORD_FUNCTION`, `record_function`) names nothing and
        hides nothing beneath it; its parent operator is looked for above it."""
        by_id = {n.get("id"): n for n in self.nodes}
        memo = {}

        def is_op(node):
            name = str(node.get("name", ""))
            if name.startswith(_ROOT_PREFIX):
                return False
            schema = _field(node, "op_schema")
            if schema is not None:
                return bool(schema)
            return _field(node, "scope") in (0, None) and "::" in name

        def parent(node):
            p = node.get("parent", node.get("ctrl_deps"))
            return by_id.get(p) if p != node.get("id") else None

        def op_above(node):
            chain, found = [], None
            current = parent(node)
            while current is not None and len(chain) < 100000:
                key = current.get("id")
                if key in memo:
                    found = memo[key]
                    break
                chain.append(key)
                if is_op(current):
                    found = current
                    break
                current = parent(current)
            for key in chain:
                memo.setdefault(key, found)
            return found

        return [(n, op_above(n)) for n in self.nodes if is_op(n)]

    def outermost(self):
        """Names of the operators not called by another operator, in trace order."""
        return [str(n.get("name")) for n, above in self._ops() if above is None]

    def forbidden(self):
        """Computing operators, each once, in the order first seen; ATen's without
        their namespace. Every operator is judged, however deeply nested: one called
        beneath an allowed operator (by a tensor subclass's or a dispatch mode's
        `__torch_dispatch__`, a kernel registered for an ATen operator, a new overload
        of one) is computing in its name. Beneath an allowed operator the queries
        PyTorch's own implementations make (NESTED_ALLOWED) are allowed too; beneath a
        forbidden one nothing more is reported (its implementation)."""
        ops = self._ops()
        above_of = {id(node): above for node, above in ops}
        wrong = {}  # id(node) -> whether the operator itself is not allowed where it is
        for node, above in ops:
            name = str(node.get("name"))
            short = name[len("aten::"):] if name.startswith("aten::") else name
            wrong[id(node)] = not (name.startswith("aten::") and (
                short in ALLOWED or (above is not None and short in NESTED_ALLOWED)))

        def inside_wrong(node):
            current, depth = above_of.get(id(node)), 0
            while current is not None and depth < 100000:
                if wrong.get(id(current)):
                    return True
                current, depth = above_of.get(id(current)), depth + 1
            return False

        seen = []
        for node, _ in sorted(ops, key=lambda pair: _start_order(pair[0])):
            if wrong[id(node)] and not inside_wrong(node):
                name = str(node.get("name"))
                short = name[len("aten::"):] if name.startswith("aten::") else name
                if short not in seen:
                    seen.append(short)
        return seen


# --- Device kernels launched by the process ------------------------------------

_GLOBAL_RE = re.compile(r"__global__")
_LAUNCH_BOUNDS_RE = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_DECLARATOR_RE = re.compile(r"[^(;{}]*?([A-Za-z_]\w*)\s*\(")
_TRITON_RE = re.compile(r"@(?:triton\.)?jit\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*def[ \t]+([A-Za-z_]\w*)")


def own_kernel_names(source="", module=None):
    """Names of the candidate's own device kernels: `__global__` functions of its
    source (CUDA, HIP, inline sources of a KernelBench file) and Triton kernels
    (`@triton.jit` functions of its source, JIT functions of its loaded module)."""
    names = set()
    for m in _GLOBAL_RE.finditer(source or ""):
        tail = _LAUNCH_BOUNDS_RE.sub(" ", source[m.end():m.end() + 400])
        d = _DECLARATOR_RE.match(tail)
        if d:
            names.add(d.group(1))
    names.update(_TRITON_RE.findall(source or ""))
    for value in list(getattr(module, "__dict__", {}).values()):
        fn = value
        for _ in range(4):
            if type(fn).__name__ in ("JITFunction", "Autotuner", "Heuristics", "InterpretedFunction"):
                inner = getattr(fn, "fn", None)
                if inner is None:
                    break
                fn = inner
            else:
                break
        if fn is not value and getattr(fn, "__name__", None):
            names.add(fn.__name__)
    names.discard("")
    return frozenset(names)


def kernel_identifier(name):
    """The function name in a profiler's kernel name: "void ns::relu_kernel<float>(float
    const*, float*, int)" -> "relu_kernel"; a Triton kernel's name as it is."""
    text = str(name).replace("(anonymous namespace)::", "")
    if text.startswith("void "):
        text = text[5:]
    depth, end = 0, len(text)
    for i, ch in enumerate(text):  # the parameter list: the first '(' outside <...>
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            end = i
            break
    text = text[:end]
    bare, depth = [], 0
    for ch in text:  # template arguments dropped
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            bare.append(ch)
    return "".join(bare).strip().split("::")[-1].split(" ")[-1]


# Namespaces of PyTorch's and its libraries' kernels: a kernel launched from one of them
# is never the candidate's own, whatever names its source declares.
_FOREIGN_NAMESPACES = ("at::", "c10::", "cub::", "cutlass::", "thrust::", "cudnn", "cublas")


def is_own_kernel(name, own):
    """Whether a launched kernel is one of `own` (Triton may suffix a specialisation,
    e.g. relu_kernel_0d1d2d) and not in a namespace of PyTorch or its libraries."""
    qualified = str(name).replace("(anonymous namespace)::", "")
    qualified = qualified[5:] if qualified.startswith("void ") else qualified
    if qualified.lstrip(":").startswith(_FOREIGN_NAMESPACES):
        return False
    ident = kernel_identifier(name)
    if ident in own:
        return True
    m = re.match(r"^(.*?)_[0-9cde]+$", ident)
    return bool(m) and m.group(1) in own


class DeviceKernels:
    """Names of the device kernels the process launches while open, from every thread
    (the profiler's kernel activity). The harness launches one kernel itself: a
    window in which it is not seen means the observer is blind (`blind`)."""

    def __init__(self, device):
        self.device = device
        self.names = []
        self.blind = False
        self._profile = None

    def __enter__(self):
        self._profile = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        self._profile.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            torch.ones(1, device=self.device.torch_device).fill_(3.0)
            self.device.synchronize()
        finally:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Profiler clears events at the end of each cycle"
                self._profile.__exit__(None, None, None)
        kernels = []
        for event in self._profile.events():
            kind = getattr(event, "device_type", None)
            if kind is not None and str(kind).split(".")[-1] in ("CUDA", "HIP", "PrivateUse1"):
                if not str(event.name).startswith(("Memcpy", "Memset")):
                    kernels.append(str(event.name))
        self.names = kernels
        self.blind = not kernels
        return False


# --- Tripwires on private switches of the observation ---------------------------

_SWITCHES = (("torch._C._autograd", "_enable_record_function"),
             ("torch._C._autograd", "_clear_callbacks"),
             ("torch._C._autograd", "_disable_execution_graph_observer"),
             ("torch._C._autograd", "_remove_execution_graph_observer"),
             ("torch._C._profiler", "_disable_execution_trace_observer"),
             ("torch._C._profiler", "_remove_execution_trace_observer"),
             ("torch._C._profiler", "_clear_callbacks"))
TRIPPED = []  # names of switches the candidate called, in order


def install_tripwires():
    """Replaces each private switch, wherever a loaded module holds it, by a stub
    that records the call and does nothing. The harness keeps the originals
    (_OBSERVER). Idempotent; for a worker that will apply custom_kernel."""
    for module_name, attr in _SWITCHES:
        module = sys.modules.get(module_name) or _resolve(module_name)
        original = getattr(module, attr, None) if module is not None else None
        if original is None or getattr(original, "_kvault_tripwire", False):
            continue
        stub = _tripwire(attr)
        for loaded in list(sys.modules.values()):
            try:
                namespace = vars(loaded)
            except TypeError:
                continue
            for key, value in list(namespace.items()):
                if value is original:
                    try:
                        setattr(loaded, key, stub)
                    except (AttributeError, TypeError):
                        pass
        setattr(module, attr, stub)


def _resolve(dotted):
    obj = sys.modules.get(dotted.split(".")[0])
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj


def _tripwire(name):
    def stub(*args, **kwargs):
        TRIPPED.append(name)
    stub._kvault_tripwire = True
    stub.__name__ = name
    return stub


# --- The policy applied to one call -------------------------------------------

class Enforcer:
    """Applies `policy` to calls of the candidate (checked_run.py; the timer may use
    call() too). own_kernels: own_kernel_names() of the candidate."""

    def __init__(self, policy, device=None, own_kernels=frozenset()):
        if policy not in POLICIES:
            raise ValueError("unknown policy %r" % (policy,))
        self.policy = policy
        self.device = device
        self.own_kernels = frozenset(own_kernels)
        self.launched = set()  # own kernels seen launched, over all calls

    def call(self, thunk, kernels=False):
        """thunk() under the policy; with `kernels` on a GPU, it must launch a kernel of
        the candidate's own. Returns thunk's value; raises Violation or Blind."""
        if self.policy not in OBSERVED:
            return thunk()
        del TRIPPED[:]
        ops = ProcessOperators()
        watch = DeviceKernels(self.device) if kernels and self.device is not None and self.device.is_gpu \
            else None
        with ops:
            with process_starts.watching():
                if watch is None:
                    output = thunk()
                else:
                    with watch:
                        output = thunk()
            if self.policy == FUSED:
                ops.mark_outputs(_tensors_of(output))
        name = self.policy
        started = process_starts.judge()
        if started:
            raise Violation("policy %s: %s" % (name, started))
        if TRIPPED:
            raise Violation("policy %s: the candidate called %s, which would switch off the operator "
                            "observer" % (name, ", ".join(sorted(set(TRIPPED)))))
        if ops.switched_off:
            raise Violation("policy %s: the operator observer was switched off while the candidate ran"
                            % name)
        if self.policy == CUSTOM_KERNEL:
            forbidden = ops.forbidden()
            if forbidden:
                raise Violation("policy custom_kernel: the candidate's forward dispatched computing "
                                "PyTorch operator(s) %s (on any thread); the computation must happen in "
                                "the candidate's own kernel" % ", ".join(forbidden[:8]))
        else:
            from kvault_worker.fused import pytorch_outputs
            found = pytorch_outputs(ops, len(_tensors_of(output)))
            if found is None:
                raise Blind("policy fused: the operator trace does not name the storages of the "
                            "candidate's outputs (an unknown trace format?)")
            if found:
                raise Violation("policy fused: %s; what becomes the output must be written by the "
                                "candidate's own code (PyTorch may compute the rest)" % found[0])
        if watch is not None:
            if watch.blind:
                raise Blind("policy %s: the kernel observer saw no kernel, not even the harness's own "
                            "(profiler unavailable?)" % name)
            own = {kernel_identifier(n) for n in watch.names if is_own_kernel(n, self.own_kernels)}
            if not own:
                foreign = sorted({kernel_identifier(n) for n in watch.names})
                raise Violation("policy %s: the candidate launched no device kernel of its own (its "
                                "kernels: %s; launched: %s)"
                                % (name, ", ".join(sorted(self.own_kernels)[:8]) or "none found in its source",
                                   ", ".join(foreign[:8])))
            self.launched.update(own)
        return output


def _tensors_of(value, depth=0):
    """The tensors of a call's output (a tensor, or nested tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 16:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return [t for item in items for t in _tensors_of(item, depth + 1)]


class Violation(Exception):
    """The candidate broke the policy (policy_violation)."""


class Blind(Exception):
    """The observation failed: not the candidate's fault (internal)."""
