"""SearchLimits: one value with a search's budget, stop check, node cap, forbid_pass and the clock's K."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import BLACK  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import DEFAULT_PLAYOUTS, SearchLimits  # noqa: E402
from jaxgo.search.player import Player  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402

SMALL = SearchConfig(leaves_per_batch=8, playouts_per_leaf=4, playout_policy="light", bias_c2=0.0, prior_pattern=0.0,
                     late_playout_policy=None)


def test_the_budget_defaults_to_the_default_playouts_and_bad_limits_are_refused():
    assert SearchLimits().budget() == (DEFAULT_PLAYOUTS, None)
    assert SearchLimits(seconds=2.0).budget() == (None, 2.0)
    assert SearchLimits(playouts=10, seconds=2.0).budget() == (10, 2.0)
    for bad in (dict(playouts=-1), dict(seconds=-0.5), dict(max_nodes=0), dict(timed_leaves=0)):
        with pytest.raises(ValueError):
            SearchLimits(**bad)
    with pytest.raises(AttributeError):
        SearchLimits().forbid_pass = True  # frozen: a search's limits are never changed from outside


def test_the_stop_check_ends_a_search_after_its_first_batch():
    game = new_game(size=5, komi=0.5)
    searcher = Searcher(game.rules, SMALL, seed=1)
    result = searcher.search(game, SearchLimits(playouts=4096, should_stop=lambda: True))
    assert result.playouts == 8 * 4  # one batch of K leaves, L playouts each


def test_forbid_pass_leaves_pass_out_of_the_root_while_other_moves_exist():
    game = new_game(size=5, komi=0.5)
    searcher = Searcher(game.rules, SMALL, seed=1)
    searcher.search(game, SearchLimits(playouts=64, forbid_pass=True))
    assert not searcher.tree.children_legal[searcher.tree.root, -1]
    searcher.search(game, SearchLimits(playouts=64))  # the next search's own limits: pass is searched again
    assert searcher.tree.children_legal[searcher.tree.root, -1]


def test_the_player_builds_the_limits_of_each_move():
    game = new_game(size=5, komi=0.5)
    player = Player(SMALL, seed=1, playouts=64)
    stop = lambda: False  # noqa: E731
    limits = player.limits(game, BLACK, forbid_pass=True, stop=stop)
    assert limits == SearchLimits(playouts=64, forbid_pass=True, should_stop=stop)
    assert player.limits(game, BLACK, moves=4).playouts == 256  # pondering: several moves' budgets
    player.clock.leaves = 16  # the shape compiled for the game's clock
    assert player.limits(game, BLACK).timed_leaves == 16
