"""The batch size K of a tree search from its budget: how many leaves one device call evaluates.

Few big batches make a wide, shallow tree, many small ones cost a device call each: ``auto_leaves`` takes the
largest power of two that leaves about 48 batches in a playout budget; a budget in seconds is first turned into
playouts at the rate a search is expected to reach on the board (``first_search_rate``).
"""

from __future__ import annotations

import math

from jaxgo.playouts.evaluator import resolve_backend
from jaxgo.playouts.native.runner import default_threads
from jaxgo.search.config import SearchConfig

# Playouts per second a search on a time budget expects (its batch size K follows), by board size and playout
# backend: heavy playouts inside a RAVE search on this project's 2-core CPU, XLA on one core with small batches
# (benchmarks/RESULTS.md history, "Batch size on a clock"), native per thread (``jaxgo bench search --defaults``
# and genmoves on a clock, 2026-11-28, after the reference-counting fix: 9x9 13,900-18,300/s and 19x19 5,300-5,600/s
# on two threads; 13x13 in between on the log-log scale).
FIRST_SEARCH_RATES = {9: 2500.0, 13: 1000.0, 19: 240.0}
NATIVE_SEARCH_RATES = {9: 7000.0, 13: 4500.0, 19: 2700.0}


def first_search_rate(size: int, backend: str = "xla", threads: int = 0) -> float:
    """Playouts/s assumed for a time budget on a ``size`` board (``FIRST_SEARCH_RATES``, or for the native
    backend ``NATIVE_SEARCH_RATES`` times its ``threads``, 0 = one per core this process may use), interpolated
    on a log-log scale of the number of points between the measured sizes (the last slope beyond them); boards
    below 9x9 get the 9x9 rate (there a device call costs more than its playouts)."""
    native = resolve_backend(backend) == "native"
    rates = NATIVE_SEARCH_RATES if native else FIRST_SEARCH_RATES
    scale = (threads or default_threads()) if native else 1
    sizes = sorted(rates)
    if size <= sizes[0]:
        return scale * rates[sizes[0]]
    upper = next((s for s in sizes if s >= size), sizes[-1])
    lower = sizes[max(0, sizes.index(upper) - 1)]
    slope = math.log(rates[upper] / rates[lower]) / math.log(upper ** 2 / lower ** 2)
    return scale * rates[lower] * (size ** 2 / lower ** 2) ** slope


def first_batch_size(config: SearchConfig, playouts: int | None, seconds: float | None, size: int) -> int:
    """K of a search with this budget when none is kept: ``leaves_per_batch``, else ``auto_leaves`` of the
    playouts, else of the seconds at ``first_search_rate(size, config.backend, config.threads)`` playouts/s (128
    with neither)."""
    if config.leaves_per_batch:
        return config.leaves_per_batch
    if playouts is None and seconds is not None:
        playouts = int(seconds * first_search_rate(size, config.backend, config.threads))
    return auto_leaves(playouts, config.playouts_per_leaf)


def auto_leaves(budget: int | None, playouts_per_leaf: int, iterations: int = 48) -> int:
    """K for a search of ``budget`` playouts: the largest power of two giving at least ``iterations`` batches,
    between 4 and 128 (128 without a budget).  Few big batches make a wide, shallow tree (with 1k playouts and
    K = 128, L = 4 the tree is two batches deep); powers of two bound the number of compiled shapes."""
    if budget is None:
        return 128
    target = budget / (playouts_per_leaf * iterations)
    k = 4
    while k * 2 <= min(target, 128):
        k *= 2
    return k

