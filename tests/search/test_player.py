"""The Player: the move is the PV's first move, resign and pass rules, budgets from the clock."""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import BLACK, WHITE  # noqa: E402
from jaxgo.go.display import game_from_ascii  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import DEFAULT_PLAYOUTS  # noqa: E402
from jaxgo.search.player import RESIGN, Player  # noqa: E402

LIGHT = dict(playout_policy="light", bias_c2=0.0, leaves_per_batch=16, playouts_per_leaf=4)

# White's living group (two eyes) holds 17 of the 25 points: Black, to play, loses whatever it does.
LOST = [
    "O O O O O",
    "O . O . O",
    "O O O O O",
    ". . . . .",
    ". X . . .",
]


def random_positions(count: int, size: int = 9, seed: int = 0):
    """Games after 0..30 random legal moves (no own-eye filling rule: any legal point)."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        game = new_game(size=size)
        for _ in range(int(rng.integers(0, 30))):
            legal = np.flatnonzero(game.legal_moves(game.to_play)[:-1])
            if not len(legal):
                break
            game.play(game.to_play, int(rng.choice(legal)))
        games.append(game)
    return games


def test_the_move_played_is_the_first_move_of_the_principal_variation():
    for strategy in ("rave", "uct"):
        player = Player(SearchConfig(strategy=strategy, resign_threshold=0.0, **LIGHT), seed=1, playouts=128)
        for game in random_positions(20, seed=3):
            decision = player.choose(game, game.to_play)
            assert decision.reason == "search"
            assert decision.move == decision.result.pv[0] == decision.result.move
            assert game.legal_moves(game.to_play)[decision.move]


def test_flat_strategies_report_their_move_as_the_pv():
    for strategy in ("mc", "pp", "amaf"):
        player = Player(SearchConfig(strategy=strategy, resign_threshold=0.0, flat_playouts_per_move=4, **LIGHT),
                        seed=2, playouts=256)
        game = random_positions(1, seed=5)[0]
        decision = player.choose(game, game.to_play)
        assert decision.result.pv == [decision.move]


def test_resigns_when_hopeless_and_not_otherwise():
    config = SearchConfig(strategy="rave", resign_min_playouts=256, **LIGHT)
    lost = game_from_ascii(LOST, BLACK, komi=0.5)
    decision = Player(config, seed=6, playouts=512).choose(lost, BLACK)
    assert decision.move == RESIGN and decision.reason == "resign" and decision.result.win_rate < 0.08
    fresh = new_game(size=5, komi=0.5)
    assert Player(config, seed=6, playouts=512).choose(fresh, BLACK).move != RESIGN
    # kgs-genmove_cleanup never resigns
    cleanup = Player(config, seed=6, playouts=512).choose(lost, BLACK, cleanup=True)
    assert cleanup.move != RESIGN and lost.legal_moves(BLACK)[cleanup.move]


def test_only_pass_and_random_strategy():
    full = game_from_ascii([
        "X X X",
        "X . X",
        "X X X",
    ], WHITE, komi=0.5)
    player = Player(SearchConfig(**LIGHT), playouts=16)
    assert player.choose(full, WHITE).reason in ("only pass", "search")
    game = new_game(size=9)
    decision = Player(SearchConfig(strategy="random"), seed=3).choose(game, BLACK)
    assert decision.reason == "random" and decision.result is None and 0 <= decision.move < 81


def test_passes_after_the_opponents_pass_only_when_passing_wins_on_a_settled_board():
    # Black owns the whole board with two eyes; White passed.
    won = game_from_ascii([
        ". X . X .",
        "X X X X X",
        ". X . X .",
        "X X X X X",
        ". X . X .",
    ], WHITE, komi=0.5)
    won.play(WHITE, won.pass_move)
    player = Player(SearchConfig(**LIGHT), seed=0, playouts=64)
    assert player.passing_wins(won, BLACK)
    decision = player.choose(won, BLACK)
    assert decision.move == won.pass_move and decision.reason == "passing wins"
    # On an empty board a lone stone wins by area, but the game is not over: no pass after White's pass.
    open_game = new_game(size=9, komi=0.5)
    open_game.play(BLACK, 40)
    open_game.play(WHITE, open_game.pass_move)
    assert not player.passing_wins(open_game, BLACK)
    assert player.choose(open_game, BLACK).reason == "search"


def test_budget_comes_from_fixed_options_then_the_clock():
    game = new_game(size=9)
    assert Player(SearchConfig(**LIGHT), playouts=100).budget(game, BLACK) == (100, None)
    assert Player(SearchConfig(**LIGHT), seconds=2.0).budget(game, BLACK) == (None, 2.0)
    clocked = Player(SearchConfig(**LIGHT))
    assert clocked.budget(game, BLACK) == (DEFAULT_PLAYOUTS, None)
    clocked.clock.set(600, 0, 0)
    playouts, seconds = clocked.budget(game, BLACK)
    assert playouts is None and seconds == 600 / 40.5


def test_pondering_searches_the_opponents_position_and_the_next_move_reuses_it():
    player = Player(SearchConfig(resign_threshold=0.0, **LIGHT), seed=4, playouts=128)
    game = new_game(size=5, komi=0.5)
    decision = player.choose(game, BLACK)
    game.play(BLACK, decision.move)
    pondered = player.ponder(game, stop=lambda: False)  # runs to its cap: four moves' budgets
    assert pondered.playouts >= 4 * 128 and not pondered.stopped_early
    reply = int(np.argmax(pondered.visits))  # White's most searched answer, now played
    game.play(WHITE, reply)
    searcher = player.search.searcher(game.rules)
    kept = searcher.tree.children_visits[searcher.tree.children_index[searcher.tree.root, reply]].sum()
    nxt = player.choose(game, BLACK)
    assert kept > 0 and nxt.result.visits.sum() >= kept + 128  # the pondered subtree was reused
    stopped = player.ponder(new_game(size=5, komi=0.5), stop=lambda: True)
    assert 0 < stopped.playouts < 4 * 128  # stopped after the first batch


def test_the_player_chooses_the_clock_batch_size_before_its_first_timed_search():
    """Issue 60: K went searcher -> SearchResult.timed_leaves -> Player.clock -> SearchLimits -> searcher; now
    the Player's clock holds it from before the first search on a time budget, one way into the limits."""
    from jaxgo.search.budget import auto_leaves

    game = new_game(size=5, komi=0.5)
    config = SearchConfig(playout_policy="light", bias_c2=0.0, backend="xla")
    timed = Player(config, seconds=0.2)
    assert timed.clock.leaves is None and timed.limits(game, BLACK).timed_leaves == auto_leaves(400, 4) == 4
    assert timed.clock.leaves == 4 and timed.limits(game, BLACK, moves=4).timed_leaves == 4  # kept: pondering too
    assert Player(config, playouts=100).limits(game, BLACK).timed_leaves is None  # not on a time budget
    fixed = Player(SearchConfig(leaves_per_batch=16, playout_policy="light"), seconds=0.2)
    assert fixed.limits(game, BLACK).timed_leaves is None  # K set in the config
    flat = Player(SearchConfig(strategy="mc", playout_policy="light"), seconds=0.2)
    assert flat.limits(game, BLACK).timed_leaves is None  # no tree, no batch shape to keep


class FixedOwnership:
    """A search whose playouts always report one ownership map (float [P], +1 Black)."""

    config = SearchConfig(**LIGHT)

    def __init__(self, owner):
        self.owner = np.asarray(owner, np.float64)

    def ownership(self, game, playouts):
        return self.owner.reshape(game.size, game.size)

    def reset(self):
        pass


# Black's wall and two eyes; a White pair below it that the playouts give Black only weakly (+0.2): unsettled.
UNSETTLED = [
    "X X X X X",
    "X . X . X",
    "X X X X X",
    ". . O O .",
    ". . . . .",
]


def test_an_unsettled_group_is_not_dead_for_passing_or_the_score():
    """GoGui twogtp: jaxgo passed at move 52 with play left and its final_score claimed W+5, counting an
    unsettled group as dead that the referee did not."""
    game = game_from_ascii(UNSETTLED, WHITE, komi=0.5)
    game.play(WHITE, game.pass_move)
    white = (game.board().reshape(-1) == WHITE)
    owner = np.where(white, 0.2, 0.8)
    player = Player(search=FixedOwnership(owner))
    assert not player.passing_wins(game, BLACK)
    assert not np.any(player.stone_status(game) == "dead")
    assert player.settled_score(game) == 15 - 2 - 0.5  # the pair stays on the board; rows 4-5 are neutral
    owner[white] = 0.9  # the playouts agree the pair is Black's: dead, and passing wins
    player = Player(search=FixedOwnership(owner))
    assert player.passing_wins(game, BLACK) and player.settled_score(game) == 25 - 0.5
