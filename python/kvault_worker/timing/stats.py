"""Statistics of timing samples and the adaptive stopping rule (docs/timing.md).

The engine (src/engine/timing_statistics.cc) applies the same definitions to the
samples the workers send it; this module is what in-process drivers (tests, bench
scripts) use. Both follow docs/timing.md and are held to the same numbers by the
golden vectors of tests/golden/timing_statistics.json.

- quantile: linear interpolation between closest ranks (numpy's default).
- iqr: quantile 0.75 - quantile 0.25.
- relative_noise: the estimated standard error of the median over the median,
  1.2533 * (IQR / 1.349) / sqrt(n) / median (IQR / 1.349 estimates sigma of a
  normal distribution; 1.2533 = sqrt(pi / 2) is the median's efficiency factor).
"""
import math

SIGMA_PER_IQR = 1.0 / 1.349
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2.0)


def quantile(values, q):
    ordered = sorted(values)
    if not ordered:
        raise ValueError("quantile of no samples")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values):
    return quantile(values, 0.5)


def iqr(values):
    return quantile(values, 0.75) - quantile(values, 0.25)


def relative_noise(values):
    """Standard error of the median relative to the median; inf for < 2 samples
    or a median <= 0."""
    n = len(values)
    if n < 2:
        return math.inf
    mid = median(values)
    if not mid > 0:
        return math.inf
    return MEDIAN_SE_FACTOR * iqr(values) * SIGMA_PER_IQR / math.sqrt(n) / mid


def summarize(values):
    """{"median_ms", "iqr_ms", "samples", "noise"} of a non-empty series (ms)."""
    return {"median_ms": median(values), "iqr_ms": iqr(values), "samples": len(values),
            "noise": relative_noise(values)}


# Why a measurement stopped (the engine reports the same words).
CONTINUE, SETTLED, MAX_SAMPLES, WALL_CAP = "continue", "settled", "max_samples", "wall_cap"


class StoppingRule:
    """Stop when both series have min_samples and min_ms of sampling has passed and
    each series' relative noise is at most noise_target; stop regardless once
    either series has max_samples or max_ms of wall time has passed (after
    min_samples). Defaults are the engine's (src/engine/options.h)."""

    def __init__(self, min_samples=10, max_samples=100, min_ms=20.0, max_ms=2000.0,
                 noise_target=0.005):
        if min_samples < 1 or max_samples < min_samples:
            raise ValueError("need 1 <= min_samples <= max_samples")
        self.min_samples, self.max_samples = min_samples, max_samples
        self.min_ms, self.max_ms, self.noise_target = min_ms, max_ms, noise_target

    def decide(self, series, elapsed_ms):
        """CONTINUE, SETTLED, MAX_SAMPLES or WALL_CAP for the lists in `series`."""
        fewest = min(len(s) for s in series)
        if fewest < self.min_samples:
            return CONTINUE
        if max(len(s) for s in series) >= self.max_samples:
            return MAX_SAMPLES
        if elapsed_ms >= self.max_ms:
            return WALL_CAP
        if elapsed_ms >= self.min_ms and all(relative_noise(s) <= self.noise_target for s in series):
            return SETTLED
        return CONTINUE
