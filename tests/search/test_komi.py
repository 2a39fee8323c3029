"""jaxgo/search/komi.py: dynamic komi for handicap games, from the handicap to the search's values."""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import BLACK, WHITE, gtp_to_point
from jaxgo.go.game import new_game
from jaxgo.search import komi
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher

SMALL = dict(leaves_per_batch=16, playouts_per_leaf=8, playout_policy="light", bias_c2=0.0, prior_pattern=0.0,
             late_playout_policy=None, score_utility=0.0)


def handicap_game(size: int, vertices: list[str], komi_points: float = 0.5, moves: int = 0):
    """A game with Black's handicap stones on ``vertices`` (as GTP's set_free_handicap leaves it), White to move,
    then ``moves`` moves of both sides along the first line."""
    game = new_game(size=size, komi=komi_points)
    game.setup_stones(BLACK, [gtp_to_point(v, size) for v in vertices])
    game.set_to_play(WHITE)
    free = [p for p in range(size * size) if game.board().reshape(-1)[p] == 0]
    for point in free[:moves]:
        game.play(game.to_play, point)
    return game


def test_handicap_is_a_black_only_setup_with_white_first():
    assert komi.handicap_stones(new_game(size=9)) == 0
    assert komi.handicap_stones(handicap_game(9, ["C3", "G7", "G3"])) == 3
    assert komi.handicap_stones(handicap_game(9, ["C3", "G7"], moves=5)) == 2  # counted from the set-up
    board = new_game(size=9)  # an SGF-like position with both colours: an even game here
    board.setup_stones(BLACK, [gtp_to_point(v, 9) for v in ("C3", "G7", "G3")])
    board.setup_stones(WHITE, [gtp_to_point("E5", 9)])
    board.set_to_play(WHITE)
    assert komi.handicap_stones(board) == 0
    black_first = new_game(size=9)
    black_first.setup_stones(BLACK, [gtp_to_point(v, 9) for v in ("C3", "G7")])
    assert komi.handicap_stones(black_first) == 0  # Black to move: not a handicap placement


def test_extra_komi_fades_linearly_and_is_zero_in_even_games():
    config = SearchConfig()
    #   19x19, 4 stones: 28 points at the start, half after 100 moves, none from move 200 on
    assert komi.extra_komi(config, handicap_game(19, ["D4", "Q16", "D16", "Q4"])) == 28.0
    assert komi.extra_komi(config, handicap_game(19, ["D4", "Q16", "D16", "Q4"], moves=100)) == 14.0
    assert komi.extra_komi(config, handicap_game(19, ["D4", "Q16", "D16", "Q4"], moves=210)) == 0.0
    assert komi.fade_moves(config, 9) == 200 * 81 / 361
    assert komi.extra_komi(config, new_game(size=19)) == 0.0
    assert komi.extra_komi(SearchConfig(dynamic_komi=0), handicap_game(19, ["D4", "Q16"])) == 0.0
    assert komi.extra_komi(SearchConfig(dynamic_komi_moves=10), handicap_game(9, ["C3", "G7"], moves=5)) == 7.0


def test_shifted_results_move_the_winner_by_the_extra_komi():
    winner, score = np.array([1, 1, -1, 1]), np.array([12.5, 3.5, -2.5, 7.0])
    same_winner, same_score = komi.shifted_results(winner, score, 0.0)
    assert same_winner is winner or np.array_equal(same_winner, winner)
    shifted_winner, shifted_score = komi.shifted_results(winner, score, 7.0)
    assert shifted_winner.tolist() == [1, -1, -1, 0] and shifted_score.tolist() == [5.5, -3.5, -9.5, 0.0]


def test_dynamic_komi_raises_whites_win_rate_in_a_handicap_game():
    # 9x9 with three handicap stones and komi 0.5: White loses most of its light playouts; with 21 points of extra
    # komi it wins most (light playouts value the stones below 7 points each; even games: no change).
    game = handicap_game(9, ["C3", "G7", "G3"])
    limits = SearchLimits(playouts=512)
    plain = Searcher(game.rules, SearchConfig(dynamic_komi=0, **SMALL), seed=3).search(game, limits)
    dynamic = Searcher(game.rules, SearchConfig(**SMALL), seed=3).search(game, limits)
    assert plain.win_rate < 0.5 < dynamic.win_rate and dynamic.win_rate > plain.win_rate + 0.1
