"""Pass in the RAVE tree: no AMAF statistics, so its value is its own mean shrunk towards the node's mean
(not RAVE's neutral 0.5): no early passes on an open board, pass still found where it is the only good move."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import BLACK, WHITE, point_to_gtp  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search import descent  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.reference import edge_scores_reference, node_mean  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402
from jaxgo.search.tree import Tree  # noqa: E402

SMALL = dict(leaves_per_batch=16, playouts_per_leaf=8, playout_policy="light", bias_c2=0.0)

# Seki, Black to play after White's pass: the shared liberty C1 is a self-atari that loses Black's 13 stones
# (White answers at A5); A5 is Black's own eye (never searched) and E5 White's eye (suicide).  Passing ends the
# game with Black ahead on area (14 to 10 + 0.5).
SEKI = [
    ". X X O .",
    "X X X O O",
    "X X X O O",
    "X X X O O",
    "X X . O O",
]


def board_game(rows: list[str], to_play=BLACK, komi=0.5):
    size = len(rows)
    game = new_game(size=size, komi=komi)
    for colour, letter in ((BLACK, "X"), (WHITE, "O")):
        points = [r * size + c for r, row in enumerate(rows) for c, ch in enumerate(row.split()) if ch == letter]
        game.setup_stones(colour, points)
    game.set_to_play(to_play)
    return game


def _one_node_tree(num_actions: int = 4) -> Tree:
    tree = Tree(num_actions, capacity=2)
    states = {name: np.zeros((1, 2), np.int32) for name in ("stones", "chain", "lib_count", "lib_sum", "lib_sumsq")}
    states.update(ko=np.zeros(1, np.int32), to_play=np.ones(1, np.int8), passes=np.zeros(1, np.int32),
                  captures=np.zeros((1, 2), np.int32), hash=np.zeros((1, 2), np.uint32),
                  move_count=np.zeros(1, np.int32))
    tree.add_nodes(states, np.array([-1]), np.array([-1]))
    tree.children_legal[0] = True
    return tree


@pytest.mark.parametrize("scores_of", [edge_scores_reference, descent.node_scores], ids=["reference", "compiled"])
def test_unvisited_pass_is_valued_at_the_node_mean_not_at_one_half(scores_of):
    # Actions 0, 1, 2 (points) and 3 (pass). The player to move is losing: 30 of 100 playouts won.
    tree = _one_node_tree()
    tree.children_visits[0, :3] = [60, 30, 10]
    tree.children_values[0, :3] = [20, 8, 2]
    tree.children_rave_visits[0, :3] = [400, 300, 200]
    tree.children_rave_values[0, :3] = [140, 90, 40]
    assert node_mean(tree, 0) == pytest.approx(0.3)
    config = SearchConfig(strategy="rave", rave_c1=0.0, playout_policy="light", bias_c2=0.0, prior_pattern=20.0,
                          widen_playouts=0.0)  # a node of 4 actions, not a board: no board-size defaults
    scores = scores_of(config, tree, 0)
    assert scores[3] == pytest.approx(0.3, abs=1e-6)  # was 0.5: the first choice of a losing side
    assert np.argmax(scores) == 0
    # Visited, pass's own playouts count, shrunk towards the node's mean by 64 pseudo-playouts.
    tree.children_visits[0, 3] = 48
    tree.children_values[0, 3] = 48
    mean = node_mean(tree, 0)
    scores = scores_of(config, tree, 0)
    assert scores[3] == pytest.approx((48 + 64 * mean) / (48 + 64), abs=1e-6)
    assert np.argmax(scores) == 3


@pytest.mark.parametrize("seed", [10, 14])
def test_no_pass_on_the_empty_board_at_a_small_budget(seed):
    # Before the fix, seed 10 opened with a pass at 300 playouts (PV "pass J6") and seed 14's PV was "D8 pass".
    game = new_game(size=9, komi=7.5)
    searcher = Searcher(game.rules, SearchConfig(strategy="rave", playout_policy="light", bias_c2=0.0), seed=seed)
    result = searcher.search(game, SearchLimits(playouts=300))
    assert result.move != game.pass_move
    assert game.pass_move not in result.pv[:2]
    assert result.visits[game.pass_move] <= np.sort(result.visits)[-2]  # pass is never the most visited


@pytest.mark.parametrize("strategy", ["rave", "uct"])
def test_pass_is_chosen_in_a_finished_seki(strategy):
    game = board_game(SEKI, WHITE)
    game.play(WHITE, game.pass_move)
    assert game.score() > 0  # Black wins if the game ends now
    searcher = Searcher(game.rules, SearchConfig(strategy=strategy, **SMALL), seed=3)
    result = searcher.search(game, SearchLimits(playouts=512))
    assert result.move == game.pass_move, point_to_gtp(result.move, 5)
    assert result.win_rate > 0.9
