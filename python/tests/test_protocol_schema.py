"""The two sides of the worker protocol list the same things: src/worker/protocol.h
(the engine's names) against python/kvault_worker (the worker's). Read as text, so
no PyTorch is needed: a rename on one side alone fails here, not on a GPU."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = (ROOT / "src" / "worker" / "protocol.h").read_text()
WORKER = ROOT / "python" / "kvault_worker"


def header_names(namespace):
    """The string constants of `namespace protocol::<namespace> { ... }`."""
    body = re.search(r"namespace %s \{(.*?)\}  // namespace %s" % (namespace, namespace), HEADER, re.S)
    assert body, "protocol.h has no namespace %s" % namespace
    return set(re.findall(r'inline constexpr char k\w+\[\] = "([a-z_]+)";', body.group(1)))


def worker_sources():
    return {p: p.read_text() for p in WORKER.rglob("*.py")}


def module_ast(relative):
    return ast.parse((WORKER / relative).read_text())


def handler_ops():
    """The keys of the `self.handlers = {...}` dict of the worker's session."""
    for node in ast.walk(module_ast("session/__init__.py")):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "handlers" for t in node.targets):
            return {k.value for k in node.value.keys}
    raise AssertionError("no self.handlers dict in session/__init__.py")


def test_protocol_version_is_the_same():
    version = int(re.search(r"inline constexpr int kVersion = (\d+);", HEADER).group(1))
    tree = module_ast("__init__.py")
    python = [n.value.value for n in tree.body if isinstance(n, ast.Assign)
              and any(getattr(t, "id", "") == "PROTOCOL_VERSION" for t in n.targets)]
    assert python == [version]


def test_every_op_has_a_handler_and_every_handler_an_op():
    ops = header_names("op")
    assert "fork" in ops and '"fork"' in (WORKER / "zygote.py").read_text()  # the zygote's own socket
    assert handler_ops() == ops - {"fork"}


def test_error_kinds_are_the_same():
    tree = module_ast("errors.py")
    python = {n.value.value for n in tree.body if isinstance(n, ast.Assign)
              and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
              and all(getattr(t, "id", "").isupper() for t in n.targets)}
    assert python == header_names("kind")


# How the worker reads a request's field: fields.<type>(request, "name", ...),
# request.get("name"), request["name"] (and the same on a nested object).
READS = re.compile(r'fields\.\w+\(\w+, "([a-z_]+)"|\brequest\.get\("([a-z_]+)"|\brequest\["([a-z_]+)"\]')


def test_the_worker_reads_only_fields_the_engine_names():
    fields = header_names("field")
    read = {name for text in worker_sources().values() for m in READS.finditer(text) for name in m.groups() if name}
    assert len(read) > 20, read  # the pattern still finds the reads
    assert read - fields == set(), "fields the worker reads that protocol.h does not name"


def test_every_field_the_engine_names_is_spoken_by_the_worker():
    text = "\n".join(worker_sources().values())
    unspoken = {f for f in header_names("field") if '"%s"' % f not in text and "'%s'" % f not in text}
    assert unspoken == set(), "protocol.h names fields the worker never writes or reads"
