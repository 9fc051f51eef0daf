"""Interleaved rounds in one process: what the engine does across two workers
(src/engine/timed_case.cc), for tests and bench scripts that time sides they
built themselves. Round i asks every side for one batch, in forward order for
even i and reversed for odd i, until the stopping rule ends it. The golden scripts
of tests/golden/timing_rounds.json hold this loop and the engine's to the same
order, rounds, stop reason and summaries."""
from kvault_worker.timing import stats, timers


def measure(sides, rule, method, batch=5, flush=True):
    """Rounds of `batch` cold and `batch` warm samples per side (warm only when
    not flushing). Returns {"rounds", "stop", "sides": [summary per side]}."""
    series = [{"cold_ms": [], "warm_ms": [], "wall_ms": []} for _ in sides]
    started = timers.now_ms()
    rounds, stop = 0, stats.CONTINUE
    primary = "cold_ms" if flush else "warm_ms"
    while stop == stats.CONTINUE:
        order = list(range(len(sides)))
        if rounds % 2:
            order.reverse()
        for i in order:
            got = sides[i].batch(method, batch if flush else 0, batch)
            for key in series[i]:
                series[i][key].extend(got[key])
        rounds += 1
        stop = rule.decide([s[primary] for s in series], timers.now_ms() - started)
    return {"rounds": rounds, "stop": stop, "method": method,
            "sides": [summarize_side(s, primary) for s in series]}


def summarize_side(series, primary):
    """The per-side fields the engine reports (docs/timing.md, "Results")."""
    main = stats.summarize(series[primary])
    out = {"ms": main["median_ms"], "iqr_ms": main["iqr_ms"], "samples": main["samples"],
           "noise": main["noise"], "wall_ms": stats.median(series["wall_ms"])}
    if series["warm_ms"]:
        warm = stats.summarize(series["warm_ms"])
        out.update(warm_ms=warm["median_ms"], warm_iqr_ms=warm["iqr_ms"])
    if series["cold_ms"]:
        cold = stats.summarize(series["cold_ms"])
        out.update(cold_ms=cold["median_ms"], cold_iqr_ms=cold["iqr_ms"])
    return out
