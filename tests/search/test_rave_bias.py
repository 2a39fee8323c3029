"""jaxgo.search.rave_bias: the RAVE bias estimate recovers a planted bias, reads the right edges of a real tree."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import BLACK  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.rave_bias import EdgeStatistics, bootstrap_c3, edge_statistics, node_depths, rave_bias  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402


def planted(bias: float, edges: int = 4000, seed: int = 0) -> EdgeStatistics:
    """Bernoulli counts of edges whose RAVE value is off by +-``bias`` from the Monte Carlo value."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.3, 0.7, edges)
    q_other = np.clip(q + bias * rng.choice([-1.0, 1.0], edges), 0, 1)
    visits = rng.integers(20, 400, edges).astype(float)
    other = rng.integers(20, 2000, edges).astype(float)
    return EdgeStatistics(rng.integers(0, 6, edges), visits, rng.binomial(visits.astype(int), q).astype(float),
                          other, rng.binomial(other.astype(int), q_other).astype(float))


@pytest.mark.parametrize("bias", [0.0, 0.05, 0.1])
def test_the_estimate_recovers_a_planted_bias(bias):
    est = rave_bias(planted(bias))
    assert est.edges == 4000
    assert est.bias_squared == pytest.approx(bias ** 2, abs=1.5e-3)  # the sampling noise is subtracted
    # mean q(1 - q) for q uniform on [0.3, 0.7]
    assert est.sigma_squared == pytest.approx(0.25 - 0.4 ** 2 / 12, abs=0.01)
    assert est.rave_c3 == pytest.approx(est.bias_squared / est.sigma_squared)


def test_without_the_noise_correction_the_planted_zero_would_look_biased():
    stats = planted(0.0)
    q, q_other = stats.wins / stats.visits, stats.other_wins / stats.other_visits
    assert np.mean((q - q_other) ** 2) > 2e-3  # raw squared differences: sampling noise only
    assert abs(rave_bias(stats).bias_squared) < 1e-3


def test_bootstrap_interval_covers_the_planted_constant():
    parts = [planted(0.1, edges=200, seed=s) for s in range(20)]
    low, high = bootstrap_c3(parts, resamples=200)
    assert low < 0.01 / (0.25 - 0.4 ** 2 / 12) < high  # b^2 / E[q (1 - q)], q uniform on [0.3, 0.7]
    assert high - low < 0.03


def test_depths_and_depth_selection():
    # root 0 -> 1 -> 3, root 0 -> 2
    assert node_depths(np.array([-1, 0, 0, 1]), root=0).tolist() == [0, 1, 1, 2]
    stats = EdgeStatistics(np.array([0, 1, 2, 5]), *(np.ones(4) * v for v in (30, 15, 40, 20)))
    assert stats.at_depths(0, 0).depth.tolist() == [0]
    assert stats.at_depths(2).depth.tolist() == [2, 5]
    assert len(EdgeStatistics.concatenate([stats, stats.at_depths(1, 1)])) == 5
    assert np.isnan(rave_bias(EdgeStatistics.concatenate([])).rave_c3)


def test_edges_of_a_real_search_tree_match_its_counts():
    game = new_game(size=5, komi=0.5)
    game.play(BLACK, 12)
    config = SearchConfig(leaves_per_batch=16, playouts_per_leaf=8, playout_policy="light", bias_c2=0.0,
                          prior_pattern=0.0, late_playout_policy=None)
    searcher = Searcher(game.rules, config, seed=3)
    searcher.search(game, SearchLimits(playouts=2048))
    tree = searcher.tree
    stats = edge_statistics(tree, min_visits=20)
    assert len(stats) > 0 and (stats.visits >= 20).all() and (stats.other_visits >= 20).all()
    root_visits = tree.children_visits[tree.root, :-1]
    root_rave = tree.children_rave_visits[tree.root, :-1]
    expected = ((root_visits >= 20) & (root_rave - root_visits >= 20)).sum()
    assert (stats.depth == 0).sum() == expected
    # the RAVE counts include the edge's own playouts: "other" is what is left of them
    first = np.nonzero((root_visits >= 20) & (root_rave - root_visits >= 20))[0][0]
    assert stats.other_visits[stats.depth == 0][0] == root_rave[first] - root_visits[first]
    assert (stats.wins <= stats.visits).all() and (stats.other_wins <= stats.other_visits).all()
