"""Game trees, sums and exact minimax (jaxgo.cgt.games) on the thesis's toy sum G + H + I."""

from jaxgo.cgt.games import (
    LEFT,
    RIGHT,
    Minimax,
    all_states,
    initial_state,
    legal_moves,
    negate,
    parse,
    play,
    reachable,
    score,
    to_text,
    toy_sum,
)
from jaxgo.cgt.toy import check_pv


def test_parse_round_trip_and_labels():
    g = parse("{2, {4 | 1} | -2}", "G")
    assert to_text(g) == "{2, {4 | 1} | -2}"
    assert [g.node_name(n) for n in range(g.n_nodes)] == ["G", "G^L1", "G^L2", "G^L2L", "G^L2R", "G^R"]
    assert g.leaf_values() == [2.0, 4.0, 1.0, -2.0]
    assert to_text(negate(g)) == "{2 | -2, {-1 | -4}}"


def test_toy_has_45_configurations_and_thesis_pv():
    games = toy_sum()
    assert len(all_states(games)) == 45
    solver = Minimax(games)
    pv = check_pv(games, solver)
    assert pv["all_moves_optimal"] and pv["score"] == 2.0 and pv["minimax_value"] == 2.0
    assert pv["line"][-1] == "G^R + H^L + I^RL"


def test_figure_5_2_caption_example():
    """Left plays I -> I^L (+3), Right H -> H^R (-4), Left's only move G -> G^L (+2): score 1."""
    games = toy_sum()
    s = initial_state(games)
    s = play(s, (2, 1))
    s = play(s, (1, 2))
    assert legal_moves(games, s, LEFT) == [(0, 1)]
    s = play(s, (0, 1))
    assert score(games, s) == 1.0


def test_minimax_by_hand_on_small_sums():
    games = (parse("{2|-2}"), parse("{4|-4}"))
    solver = Minimax(games)
    # Left takes the hotter 4, Right answers in the 2: 4 - 2 = 2; symmetric for Right.
    assert solver.value(initial_state(games), LEFT) == 2.0
    assert solver.value(initial_state(games), RIGHT) == -2.0
    assert Minimax((parse("{3|{0|-6}}"),)).value((0,), RIGHT) == 0.0  # Right's sente is answered


def test_reachability_parity():
    games = toy_sum()
    assert reachable(games, (0, 1, 0), RIGHT) and not reachable(games, (0, 1, 0), LEFT)
    assert reachable(games, (0, 0, 0), LEFT) and reachable(games, (0, 0, 0), RIGHT)
