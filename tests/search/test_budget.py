"""The batch size of a search from its budget: powers of two, about 48 batches, rates per board and backend."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.search.budget import (  # noqa: E402
    FIRST_SEARCH_RATES,
    NATIVE_SEARCH_RATES,
    auto_leaves,
    first_batch_size,
    first_search_rate,
)
from jaxgo.search.config import SearchConfig  # noqa: E402


def test_auto_leaves_gives_about_48_batches_in_powers_of_two():
    assert auto_leaves(None, 4) == 128
    assert auto_leaves(100, 4) == 4  # never below 4
    assert auto_leaves(1000, 4) == 4
    assert auto_leaves(3000, 4) == 8
    assert auto_leaves(10000, 4) == 32
    assert auto_leaves(30000, 4) == 128
    assert auto_leaves(10 ** 7, 4) == 128  # never above 128
    for budget in (800, 5000, 20000):
        k = auto_leaves(budget, 4)
        assert k & (k - 1) == 0 and budget / (4 * k) >= 48


@pytest.mark.parametrize("backend", ["xla", "native"])
def test_first_search_rate_follows_the_measured_sizes_and_shrinks_with_the_board(backend):
    measured = NATIVE_SEARCH_RATES if backend == "native" else FIRST_SEARCH_RATES
    threads = 2 if backend == "native" else 0  # native rates are per thread
    scale = threads or 1
    for size, rate in measured.items():
        assert first_search_rate(size, backend, threads) == pytest.approx(scale * rate)
    assert first_search_rate(5, backend, threads) == first_search_rate(7, backend, threads) == scale * measured[9]
    rates = [first_search_rate(size, backend, threads) for size in range(9, 26)]
    assert all(a > b for a, b in zip(rates, rates[1:]))  # interpolated, then extrapolated, downwards
    config = SearchConfig(strategy="rave", playouts_per_leaf=4, backend=backend, threads=threads)
    # A 19x19 move of 10 s gets K for the playouts it can run, not for 9x9's rate.
    assert first_batch_size(config, None, 10.0, 19) == auto_leaves(int(10.0 * scale * measured[19]), 4)
    if backend == "native":  # one thread (a game pinned to one core) runs half the playouts of two
        assert first_search_rate(19, backend, 1) == pytest.approx(first_search_rate(19, backend, 2) / 2)
    assert first_batch_size(config, None, 1.0, 19) < first_batch_size(config, None, 1.0, 9)
    assert first_batch_size(config, 3000, 10.0, 19) == auto_leaves(3000, 4)  # a playout budget decides alone
