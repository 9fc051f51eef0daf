"""Every KVAULT_* variable the Python sources read from the environment is a row of
the one table, src/util/env_vars.h, and of docs/environment.md made from it.

The reads are found in the syntax tree, not by text: os.environ.get / [] / pop /
setdefault / `in`, os.getenv, and the same on a copy of os.environ (dict(os.environ),
os.environ.copy()), with the name a string or a module-level constant naming one."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The packages (python/) and the training recipe; their tests are not product code.
SOURCES = [ROOT / "python", ROOT / "recipes"]
_NAME = re.compile(r"KVAULT_[A-Z0-9_]+\Z")


def _is_environ(node, copies):
    """os.environ, environ, or a name holding a copy of it."""
    if isinstance(node, ast.Attribute) and node.attr == "environ":
        return True
    return isinstance(node, ast.Name) and (node.id == "environ" or node.id in copies)


def _copies_environ(value):
    """dict(os.environ) or os.environ.copy()."""
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Name) and f.id == "dict" and value.args:
        return _is_environ(value.args[0], ())
    return isinstance(f, ast.Attribute) and f.attr == "copy" and _is_environ(f.value, ())


def environment_reads(source):
    """[(name, line)] of the KVAULT_ variables `source` reads from the environment."""
    tree = ast.parse(source)
    constants, copies = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                constants[node.targets[0].id] = node.value.value
            elif _copies_environ(node.value):
                copies.add(node.targets[0].id)

    def key(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return constants.get(node.id) if isinstance(node, ast.Name) else None

    keys = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            f = node.func
            if (f.attr in ("get", "pop", "setdefault") and _is_environ(f.value, copies)) or f.attr == "getenv":
                keys.append((node.args[0], node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name) and node.func.id == "getenv":
            keys.append((node.args[0], node.lineno))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value, copies):
            keys.append((node.slice, node.lineno))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            if _is_environ(node.comparators[0], copies):
                keys.append((node.left, node.lineno))
    return [(k, line) for k, line in ((key(n), line) for n, line in keys) if k and _NAME.match(k)]


def table_names():
    """(names in src/util/env_vars.h's table, names in docs/environment.md's)."""
    header = (ROOT / "src" / "util" / "env_vars.h").read_text()
    page = (ROOT / "docs" / "environment.md").read_text()
    return (set(re.findall(r'\{"(KVAULT_[A-Z0-9_]+)", EnvReader::', header)),
            set(re.findall(r"^\| `(KVAULT_[A-Z0-9_]+)` \|", page, re.M)))


def python_reads():
    """{name: ["file:line", ...]} over the Python product sources."""
    reads = {}
    for top in SOURCES:
        for path in sorted(top.rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "tests" in rel.parts:
                continue
            for name, line in environment_reads(path.read_text()):
                reads.setdefault(name, []).append("%s:%d" % (rel, line))
    return reads


def test_every_variable_python_reads_is_in_the_table():
    header, page = table_names()
    reads = python_reads()
    missing = ["%s (read at %s) is not in %s" % (name, ", ".join(where), " nor ".join(
        what for what, names in (("src/util/env_vars.h", header), ("docs/environment.md", page)) if name not in names))
        for name, where in sorted(reads.items()) if name not in header or name not in page]
    assert not missing, ("add a row to kEnvVars (src/util/env_vars.h, sorted by name), then make docs/environment.md "
                         "from it (build/src/util/kvault_util_test --gtest_filter=EnvVars.DocsPageIsMadeFromTheTable "
                         "writes the page and says where):\n" + "\n".join(missing))
    # The walk found the package's reads, the one through a constant among them.
    assert {"KVAULT_URL", "KVAULT_WORKER_FDS", "KVAULT_WORKER_PROFILE", "KVAULT_PYTHON"} <= set(reads), sorted(reads)


def test_every_form_of_read_is_found():
    source = '''
import os
from os import environ, getenv
ENV = "KVAULT_A"
NOT_READ = "KVAULT_B"
os.environ.get(ENV)
os.environ["KVAULT_C"]
environ.pop("KVAULT_D", None)
os.environ.setdefault("KVAULT_E", "1")
getenv("KVAULT_F")
os.getenv("KVAULT_G")
if "KVAULT_H" not in os.environ:
    pass
env = dict(os.environ)
env.get("KVAULT_I")
mine = os.environ.copy()
mine["KVAULT_J"]
os.environ["KVAULT_K"] = "set, not read"
os.environ.get("CUDA_VISIBLE_DEVICES")
other = {}
other.get("KVAULT_L")
'''
    assert sorted(name for name, _ in environment_reads(source)) == [
        "KVAULT_A", "KVAULT_C", "KVAULT_D", "KVAULT_E", "KVAULT_F", "KVAULT_G", "KVAULT_H", "KVAULT_I", "KVAULT_J"]


def test_the_table_is_read_from_both_files():
    header, page = table_names()
    assert "KVAULT_PYTHON" in header and "KVAULT_PYTHON" in page
    assert len(header) > 20 and header == page
