"""Progressive widening as the numpy reference defines it (the edge scores and descents are in test_descent.py)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.search.config import SearchConfig
from jaxgo.search.reference import widened, widening_width


def test_widening_width_grows_by_one_per_factor_of_visits():
    assert [widening_width(n, 40, 2.0) for n in (0, 39, 40, 79, 80, 160, 320)] == [2, 2, 3, 3, 4, 5, 6]


def test_widened_keeps_the_likeliest_legal_moves():
    prior = np.array([0.1, 0.4, 0.05, 0.3, 0.15, 0.0])
    legal = np.array([True, True, True, False, True, True])
    cfg = SearchConfig(widen_playouts=10, widen_factor=2.0)
    assert np.flatnonzero(widened(prior, legal, 0, cfg)).tolist() == [1, 4]  # 3 is illegal
    assert np.flatnonzero(widened(prior, legal, 10, cfg)).tolist() == [0, 1, 4]
    assert widened(prior, legal, 1e6, cfg).tolist() == legal.tolist()
    with pytest.raises(ValueError):
        SearchConfig(widen_factor=1.0)
