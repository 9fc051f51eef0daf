"""The router keeps a call (a batch submitted through the HTTP front, which no
client forgets) only as long as kvault serve keeps a batch: an hour after it
finished, and at most MAX_CALLS. No Ray needed: the bookkeeping alone."""
import threading

from kernelvault.cluster import router as router_module
from kernelvault.cluster.router import Router, _Call


def bare_router():
    r = Router.__new__(Router)           # no dispatcher thread, no Ray
    r._lock = threading.Lock()
    r._calls = {}
    return r


def test_finished_calls_are_forgotten_after_the_keep_time(monkeypatch):
    r = bare_router()
    now = [1000.0]
    monkeypatch.setattr(router_module.time, "monotonic", lambda: now[0])
    finished, running = _Call(1), _Call(1)
    finished.finished = now[0]
    r._calls = {"finished": finished, "running": running}
    now[0] += router_module.KEEP_CALL_S - 1
    with r._lock:
        r._forget_old_calls()
    assert set(r._calls) == {"finished", "running"}
    now[0] += 2
    with r._lock:
        r._forget_old_calls()
    assert set(r._calls) == {"running"}       # a call still running is never forgotten for its age


def test_the_oldest_call_goes_first_beyond_the_limit(monkeypatch):
    r = bare_router()
    monkeypatch.setattr(router_module, "MAX_CALLS", 3)
    for i in range(3):
        call = _Call(1)
        call.created = float(i)
        r._calls["c%d" % i] = call
    with r._lock:
        r._forget_old_calls()
    assert set(r._calls) == {"c1", "c2"}       # room for the call being submitted


def test_a_call_is_finished_when_its_last_result_arrives():
    r = bare_router()
    r.counters = {"delivered": 0}
    call = _Call(2)

    class Item:
        def __init__(self, index):
            self.call, self.index = call, index

    r._deliver(Item(0), {"status": "passed"})
    assert call.finished is None
    r._deliver(Item(1), {"status": "passed"})
    assert call.finished is not None
