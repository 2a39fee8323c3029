import pytest

from jaxgo.go.hostboard import Board
from jaxgo.proof.capture import solve_capture
from jaxgo.proof.learning import Frozen, attempt, compare, train, update_model
from jaxgo.proof.models import BetaModel, HierarchicalGaussian

# a ladder that PP must read out move by move (the ladder reader is switched off)
LADDER = """
.........
.........
...X.....
..XO.....
....X....
.........
.........
.........
.........
"""
GOAL = 3 * 9 + 3
KW = dict(problem_kw={"use_ladder": False}, max_l=3, max_nodes=5000, max_seconds=30.0)


@pytest.mark.parametrize("make", [HierarchicalGaussian, lambda: BetaModel(1, 1)])
def test_learned_prior_solves_in_fewer_nodes(make):
    b = Board.from_ascii(LADDER, 1)
    plain, _ = solve_capture(b, GOAL, True, "pp", **KW)
    assert plain.value is True
    model = make()
    for _ in range(2):
        trees = []
        res, _ = solve_capture(b, GOAL, True, "pp", model=model, trees=trees, **KW)
        assert res.value is True
        assert update_model(model, trees) > 0
    learned, _ = solve_capture(b, GOAL, True, "pp", model=Frozen(model), order_by_prior=True, **KW)
    assert learned.value is True and learned.nodes < plain.nodes


def test_frozen_model_neither_harvests_nor_learns():
    m = BetaModel()
    f = Frozen(m)
    f.harvest((1,) * 8)
    f.update((1,) * 8, True)
    assert len(m) == 0 and f.predict((1,) * 8) == 0.5


EDGE = """
.O.....
X.XX...
.......
.......
.......
.......
.......
"""


def test_train_and_attempt_on_a_problem_dict():
    b = Board.from_ascii(EDGE, 1)
    prob = dict(name="edge", size=7, stones=b.stones, to_play=1, goal=1)
    model = HierarchicalGaussian()
    hist = train(model, [prob], "pp", max_passes=2, max_nodes=2000, max_seconds=30.0)
    assert hist[0]["solved"] == 1 and len(model) > 0
    r = attempt(prob, "pns", max_nodes=2000, max_seconds=30.0)
    assert r["solved"] and r["move"] is not None


def test_compare_counts_and_speedups():
    base = [dict(solved=True, seconds=1.0, nodes=100), dict(solved=True, seconds=2.0, nodes=50),
            dict(solved=False, seconds=2.0, nodes=999), dict(solved=True, seconds=1.0, nodes=10)]
    other = [dict(solved=True, seconds=0.5, nodes=50), dict(solved=True, seconds=0.5, nodes=10),
             dict(solved=True, seconds=0.1, nodes=5), dict(solved=False, seconds=2.0, nodes=999)]
    c = compare(base, other)
    assert (c["newly_solved"], c["newly_failed"], c["both"]) == (1, 1, 2)
    assert c["mean_speedup"] == pytest.approx(3.0) and c["geomean_speedup"] == pytest.approx(8 ** 0.5)
    assert c["mean_node_ratio"] == pytest.approx(3.5)


def test_fallback_hands_the_rest_of_the_budget_to_pns():
    # EDGE: PNS proves it in 27 nodes, PP (prior 0.5) needs 108
    b = Board.from_ascii(EDGE, 1)
    prob = dict(name="edge", size=7, stones=b.stones, to_play=1, goal=1)
    pns = attempt(prob, "pns", max_nodes=200, max_seconds=30.0)
    pp = attempt(prob, "pp", BetaModel(), max_nodes=200, max_seconds=30.0)
    assert pns["solved"] and pp["solved"] and pns["nodes"] < 50 < pp["nodes"] <= 150
    # a quarter of 200 nodes is too little for the model's search: PNS finishes with the other 150
    short = attempt(prob, "pp", BetaModel(), max_nodes=200, max_seconds=30.0, fallback=0.25)
    assert short["solved"] and short["fallback_used"]
    assert short["nodes"] == 50 + pns["nodes"] and short["move"] == pns["move"]
    # three quarters are enough: no fallback, the same search as without the option
    long = attempt(prob, "pp", BetaModel(), max_nodes=200, max_seconds=30.0, fallback=0.75)
    assert long["solved"] and not long["fallback_used"] and long["nodes"] == pp["nodes"]
    # without a model there is nothing to fall back from
    assert not attempt(prob, "pns", max_nodes=200, max_seconds=30.0, fallback=0.25)["fallback_used"]
    with pytest.raises(ValueError):
        attempt(prob, "pp", BetaModel(), max_nodes=200, fallback=1.0)


def test_temper_moves_priors_towards_one_half():
    from jaxgo.proof.learning import temper

    assert temper(0.5, 4.0) == 0.5 and temper(0.9, 1.0) == 0.9
    assert 0.5 < temper(0.9, 4.0) < temper(0.9, 2.0) < 0.9
    assert 0.1 < temper(0.1, 2.0) < 0.5
    assert 0.5 < temper(1.0, 2.0) < 1.0     # a certain prior becomes uncertain
    m = BetaModel()
    m.update((1,) * 8, True)
    f = Frozen(m, temperature=2.0)
    assert f.predict((1,) * 8) == temper(m.predict((1,) * 8), 2.0)
    with pytest.raises(ValueError):
        Frozen(m, temperature=0.0)


def test_learned_prior_in_pns_initialisation_solves_the_ladder():
    b = Board.from_ascii(LADDER, 1)
    plain, _ = solve_capture(b, GOAL, True, "pns", **KW)
    model = HierarchicalGaussian()
    trees = []
    solve_capture(b, GOAL, True, "pp", model=model, trees=trees, **KW)
    update_model(model, trees)
    res, _ = solve_capture(b, GOAL, True, "pns", model=Frozen(model), prior_init=0.5, order_by_prior=True, **KW)
    assert res.value is True and res.move == plain.move
