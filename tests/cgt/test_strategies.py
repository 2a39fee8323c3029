"""HOTSTRAT and value loss (jaxgo.cgt.strategies, jaxgo.cgt.random_sums) on the toy and on random sums."""

import random

import pytest

from jaxgo.cgt.games import LEFT, RIGHT, Minimax, all_states, initial_state, parse, toy_sum
from jaxgo.cgt.random_sums import random_sum, value_loss_table
from jaxgo.cgt.strategies import hotstrat, minimax_strategy, optimal_everywhere, random_strategy, value_loss
from jaxgo.cgt.thermograph import thermographs
from jaxgo.cgt.toy import selfplay_line


def test_hotstrat_plays_the_thesis_pv():
    games = toy_sum()
    line = selfplay_line(games, hotstrat([thermographs(g) for g in games]), LEFT)
    assert line == {"moves": ["H^L", "I^R", "I^RL", "G^R"], "score": 2.0}


def test_hotstrat_exact_on_toy_fails_in_four_decisions():
    """Exact HOTSTRAT is optimal in 62 of 66 decisions; e.g. in G + H^L + I with Left to move it plays the
    hotter I^L (3 - 2 = 1 more for I, total 5) while G^L first gives 2 + 4 + 0 = 6: Right's sente in I is
    answered and the game ends."""
    games = toy_sum()
    solver = Minimax(games)
    r = optimal_everywhere(games, solver, hotstrat([thermographs(g) for g in games]), all_states(games))
    assert (r["configurations"], r["terminal"], r["decisions"]) == (45, 12, 66)
    assert r["optimal_decisions"] == 62 and r["configurations_optimal"] == 41
    assert set(r["failures"]) == {((0, 1, 0), LEFT), ((0, 2, 0), LEFT), ((1, 0, 0), RIGHT), ((2, 0, 0), RIGHT)}
    assert solver.value((0, 1, 0), LEFT) == 6.0


def test_value_loss_zero_for_minimax_and_positive_for_a_bad_strategy():
    games = (parse("{2|-2}"), parse("{4|-4}"))
    solver = Minimax(games)
    root = initial_state(games)
    assert value_loss(games, solver, minimax_strategy(solver), root, LEFT, LEFT) == 0.0
    coldest = lambda g, s, p: (0, 1) if s[0] == 0 and p == LEFT else minimax_strategy(solver)(g, s, p)  # noqa: E731
    assert value_loss(games, solver, coldest, root, LEFT, LEFT) == pytest.approx(4.0)  # 2 - 4 instead of 4 - 2


def test_random_sums_table_small():
    res = value_loss_table(n_sums=6, n_games=3, seed=3)
    t = res["table"]
    assert set(t) == {"hotstrat_exact", "hotstrat_triangle", "random"}
    assert all(r["mean_loss"] >= 0 for r in t.values())
    assert t["random"]["mean_loss"] > t["hotstrat_exact"]["mean_loss"]


def test_random_games_are_valid():
    rng = random.Random(0)
    for _ in range(20):
        for g in random_sum(rng, 3):
            assert 3 <= g.n_nodes <= 13
            assert all(g.is_leaf(n) or (g.left[n] and g.right[n]) for n in range(g.n_nodes))


def test_random_strategy_is_legal():
    games = toy_sum()
    strat = random_strategy(random.Random(0))
    m = strat(games, initial_state(games), RIGHT)
    assert m in [(0, 2), (1, 2), (2, 2)]
