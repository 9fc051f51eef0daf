"""The error kinds the client reads are the ones the server spells: src/serve/error_kind.cc
(the server's one table) against python/kernelvault/client.py. Read as text, so no
server is started: a kind renamed on one side alone fails here."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = (ROOT / "src" / "serve" / "error_kind.cc").read_text()
CLIENT = (ROOT / "python" / "kernelvault" / "client.py").read_text()


def server_kinds():
    """name -> retryable, from the table's {ErrorKind::kX, "name", retryable} rows."""
    rows = re.findall(r'\{ErrorKind::k\w+, "([a-z_]+)", (true|false)\}', TABLE)
    assert len(rows) >= 10, "error_kind.cc has no table of kinds"
    return {name: retry == "true" for name, retry in rows}


def client_kinds():
    """The kinds the client compares a server's error kind with."""
    names = set()
    for m in re.finditer(r'\bkind (?:==|in) (\([^)]*\)|"[a-z_]+")', CLIENT):
        names.update(re.findall(r'"([a-z_]+)"', m.group(1)))
    assert {"task", "infrastructure", "unsupported"} <= names, names  # the pattern still finds them
    return names


def test_every_kind_the_client_reads_is_one_the_server_sends():
    assert client_kinds() - set(server_kinds()) == set()


def test_the_kinds_a_client_retries_are_the_servers_retryable_ones():
    kinds = server_kinds()
    assert kinds["infrastructure"] and kinds["deadline"]
    assert not kinds["task"] and not kinds["cancelled"] and not kinds["unsupported"]
