"""Interleaved batch timing: drift on a noisy machine lands on every contender alike."""

import gc
import statistics
from time import perf_counter_ns


def timed(loop):
    """Run `loop()` with gc off; ns per operation.

    The loop returns its operation count, or (count, ns) when it timed its operations
    itself (to leave untimed set-up between them).
    """
    gc.disable()
    try:
        start = perf_counter_ns()
        result = loop()
        elapsed = perf_counter_ns() - start
    finally:
        gc.enable()
    if isinstance(result, tuple):
        result, elapsed = result
    return elapsed / result


def interleave(contenders, rounds, batch):
    """Time `rounds` batches of each contender, alternating them, order rotated each round.

    contenders: {name: prepare}, where prepare(round, batch) does any untimed set-up and
    returns a loop: a zero-argument callable that performs `batch` operations and returns
    that count. Returns {name: [ns per operation, one per round]}.
    """
    names = list(contenders)
    samples = {name: [] for name in names}
    gc.collect()   # once: collecting before every batch costs more than the batches
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            loop = contenders[name](r, batch)
            samples[name].append(timed(loop))
    return samples


def median(values):
    return statistics.median(values)


def paired_ratio(samples, name, base):
    """Median over rounds of name/base, each ratio taken within one round."""
    return statistics.median(a / b for a, b in zip(samples[name], samples[base]))


def ratio_quartiles(samples, name, base):
    """First and third quartile of the per-round ratios name/base: how firm the median is."""
    ratios = [a / b for a, b in zip(samples[name], samples[base])]
    if len(ratios) < 4:
        return min(ratios), max(ratios)
    q = statistics.quantiles(ratios, n=4)
    return q[0], q[2]


def spread(values):
    """Relative interquartile range, a stability indicator for a list of samples."""
    if len(values) < 4:
        return 0.0
    q = statistics.quantiles(values, n=4)
    return (q[2] - q[0]) / q[1]


def paired_difference(samples, name, base):
    """Median over rounds of name − base (ns per operation), each taken within one round."""
    return statistics.median(a - b for a, b in zip(samples[name], samples[base]))


def fitted_batch(contenders, batch, max_batch_ms, trial=5):
    """Shrink `batch` so the slowest contender's batch takes about max_batch_ms.

    Runs one trial batch of each contender (a warm-up whose timings are discarded
    otherwise), so a slow disk shortens file batches instead of stretching the run.
    """
    trial_ns = interleave(contenders, 1, trial)
    slowest = max(values[0] for values in trial_ns.values())
    return max(trial, min(batch, int(max_batch_ms * 1e6 / max(slowest, 1))))
