"""Linear-model policy iteration (jaxgo.cgt.linear_failure, Algorithms 2-3, section 5.4)."""

import random

import pytest

from jaxgo.cgt.games import parse, toy_sum
from jaxgo.cgt.linear_failure import LinearModel, indifference_limits, oscillation, policy_iteration, td_playout_update


def test_eleven_weights_and_incentives():
    model = LinearModel(toy_sum())
    assert len(model.w) == 11
    assert model.features((0, 0, 0)) == [0, 3, 6]  # w_a + w_k + w_p
    assert model.features((2, 1, 3)) == [2, 4, 9]  # w_c + w_l + w_s (the PV's final state)


def test_indifference_limits_of_section_5_4():
    """Under the fixed optimal policy the weights make V constant (= R) along the PV: every PV move's incentive
    goes to 0 (w_k - w_l, w_p - w_r, w_r - w_s, w_a - w_c) and V(root) -> R."""
    lim = indifference_limits(toy_sum(), playouts=3000, alpha=0.01)
    assert lim["pv"] == ["H^L", "I^R", "I^RL", "G^R"]
    assert abs(lim["root_error"]) < 1e-3
    assert all(abs(v) < 1e-3 for v in lim["pv_incentives"].values())
    # indifference at the root between Right's G^R and I^R, whatever H is
    assert abs(lim["root_incentives"]["G^R"] - lim["root_incentives"]["I^R"]) < 1e-3
    assert lim["greedy_optimal_fraction"] < 1.0


def test_td_learns_a_single_gote_game():
    """One game {2|-2}, Left first and greedy: the only line is G -> G^L with result 2."""
    games = (parse("{2|-2}"),)
    model = LinearModel(games)
    rng = random.Random(0)
    for _ in range(2000):
        td_playout_update(model, list(model.w), 0.0, 0.05, 0.9, rng)
    assert model.value((0,)) == pytest.approx(2.0, abs=1e-3)


def test_oscillation_detector():
    assert oscillation(["a"] * 10 + ["a", "b", "a", "b", "a"] * 2)["oscillates"]
    assert not oscillation(["a", "b", "a", "b"] + ["c"] * 10)["oscillates"]
    assert not oscillation(["a", "b", "c", "d", "e", "f", "g", "h"])["oscillates"]  # drifting, no return


def test_mc_policy_iteration_runs():
    h = policy_iteration(toy_sum(), "mc", epochs=3, n=200, seed=0)
    assert len(h["incentives"]) == 3 and len(h["incentives"][0]) == 8


@pytest.mark.slow
def test_thesis_parameters_mc_oscillates_td_settles():
    """N = 1000, epsilon = 0.2, alpha = 0.001, lambda = 0.9, 150 epochs (about 20 s)."""
    games = toy_sum()
    assert policy_iteration(games, "mc", epochs=150, seed=0)["oscillates"]
    td = policy_iteration(games, "td", epochs=150, seed=0)
    assert not td["oscillates"]
