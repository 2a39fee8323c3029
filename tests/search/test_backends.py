"""The tree search on either playout backend: the native backend (numba playouts, host-side children and
priors) and the XLA kernels choose the same move in clear positions, and the native tree's nodes are the
positions the XLA rules make."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxgo.go import rules
from jaxgo.go.coords import BLACK
from jaxgo.go.display import game_from_ascii
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher, position_kernels

# 5x5, Black to play: C2 captures six white stones; C3 captures seven (their one liberty).
CLEAR = [
    (["X X X X .", "X O O O X", "X O O O X", "X X . X X", ". . . . ."], BLACK, "C2"),
    (["X X X . .", "X O O X .", "X O . O X", "X O O O X", "X X X X ."], BLACK, "C3"),
]


def game_from(rows, to_play):
    return game_from_ascii(rows, to_play, komi=0.5)


def gtp_point(move: int, size: int) -> str:
    return "ABCDEFGHJKLMNOPQRST"[move % size] + str(size - move // size)


@pytest.mark.parametrize("rows, to_play, expected", CLEAR)
@pytest.mark.parametrize("policy", ["light", "heavy"])
def test_both_backends_pick_the_same_move_in_clear_positions(rows, to_play, expected, policy):
    chosen = {}
    for backend in ("native", "xla"):
        config = SearchConfig(leaves_per_batch=16, playouts_per_leaf=4, playout_policy=policy, late_playout_policy=None,
                              backend=backend)
        game = game_from(rows, to_play)
        result = Searcher(game.rules, config, seed=3).search(game, SearchLimits(playouts=1024))
        chosen[backend] = gtp_point(result.move, game.size)
    assert chosen == {"native": expected, "xla": expected}


def test_native_children_equal_the_xla_rule_kernels_along_a_search():
    game = game_from(CLEAR[1][0], BLACK)
    native = Searcher(game.rules, SearchConfig(leaves_per_batch=8, playout_policy="light", backend="native"), seed=1)
    native.search(game, SearchLimits(playouts=512))
    tree = native.tree
    children_xla, searchable_xla = position_kernels(False, "xla")
    nodes = np.arange(1, tree.size)
    parents, actions = tree.parents[nodes], tree.action_from_parent[nodes]
    expected, expected_searchable = children_xla(tree.gather_states(parents), actions)
    got = tree.gather_states(nodes)
    for name in ("stones", "ko", "to_play", "passes", "captures", "hash", "move_count"):
        np.testing.assert_array_equal(np.asarray(getattr(got, name)), np.asarray(getattr(expected, name)), name)
    for i in range(len(nodes)):
        rules.check_consistency(jax.tree_util.tree_map(lambda x, i=i: np.asarray(x)[i], got))
    assert len(nodes) > 50
    np.testing.assert_array_equal(position_kernels(False, "native")[1](got), np.asarray(expected_searchable))


def test_native_root_moves_equal_the_game_rules_under_superko():
    # Random 4x4 games under positional and situational superko (small boards repeat positions often): the
    # root's searched moves from the native board (superko from the children's hashes) equal the game's legal
    # moves less own eyes, as the XLA path computes them.
    from jaxgo.go.game import new_game

    rng = np.random.default_rng(11)
    positions = superko = 0
    for ko_rule in ("positional", "situational"):
        for _ in range(6):
            game = new_game(size=4, komi=0.5, ko_rule=ko_rule)
            searcher = Searcher(game.rules, SearchConfig(playout_policy="light"), seed=0)
            _, searchable_xla = position_kernels(False, "xla")
            for _ in range(60):
                legal = game.legal_moves(game.to_play)
                searchable = np.asarray(searchable_xla(jax.tree_util.tree_map(lambda x: np.asarray(x)[None],
                                                                              game.state)))[0]
                np.testing.assert_array_equal(searcher.root_legal(game), legal & searchable)
                positions += 1
                superko += int((searchable[:-1] & ~legal[:-1]).any())
                moves = np.flatnonzero(legal[:-1])
                move = int(rng.choice(moves)) if len(moves) and rng.random() < 0.9 else game.pass_move
                game.play(game.to_play, move)
    assert positions == 720 and superko >= 3
