"""The Searcher: SoA tree bookkeeping, batched UCT/RAVE, flat strategies, superko in the tree, reuse, limits."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import BLACK, WHITE, gtp_to_point, point_to_gtp  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.go.rules import hash_key  # noqa: E402
from jaxgo.search.budget import auto_leaves  # noqa: E402
from jaxgo.search.config import (
    FLAT_STRATEGIES,  # noqa: E402
    SearchConfig,  # noqa: E402
)
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.player import Player  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402
from jaxgo.search.tree import Tree, move_decided  # noqa: E402
from jaxgo.search.tree_search import last_moves, tree_leaves  # noqa: E402

SMALL = dict(leaves_per_batch=16, playouts_per_leaf=8, flat_playouts_per_move=8, playout_policy="light", bias_c2=0.0,
             prior_pattern=0.0, late_playout_policy=None)


def board_game(rows: list[str], to_play=BLACK, komi=0.5):
    """A 5x5 game from an ASCII board (X black, O white, . empty), top row first."""
    size = len(rows)
    game = new_game(size=size, komi=komi)
    for colour, letter in ((BLACK, "X"), (WHITE, "O")):
        points = [r * size + c for r, row in enumerate(rows) for c, ch in enumerate(row.split()) if ch == letter]
        if points:
            game.setup_stones(colour, points)
    game.set_to_play(to_play)
    return game


# A white group of six stones with one liberty, C2: Black captures it there.
CAPTURE = [
    "X X X X .",
    "X O O O X",
    "X O O O X",
    "X X . X X",
    ". . . . .",
]


@pytest.mark.parametrize("strategy", ["uct", "rave"])
def test_tree_search_captures_big_group(strategy):
    game = board_game(CAPTURE, BLACK)
    searcher = Searcher(game.rules, SearchConfig(strategy=strategy, **SMALL), seed=1)
    # Black wins whatever it plays (komi 0.5), so UCT tells C2 apart only by the score share of the playout value:
    # 1,024 playouts chose C2 under 6 of 8 seeds, 4,096 under every seed tried (6 of 6, both backends).
    result = searcher.search(game, SearchLimits(playouts=4096))
    assert point_to_gtp(result.move, 5) == "C2"
    assert result.win_rate > 0.8
    assert result.playouts >= 4096
    assert searcher.tree.size > 20  # the tree grew below the root


@pytest.mark.parametrize("strategy", FLAT_STRATEGIES)
def test_flat_strategies_capture_big_group(strategy):
    game = board_game(CAPTURE, BLACK)
    searcher = Searcher(game.rules, SearchConfig(strategy=strategy, **SMALL), seed=2)
    result = searcher.search(game, SearchLimits(playouts=1500))
    legal = game.legal_moves(BLACK)
    assert legal[result.move]
    if strategy != "depth2":  # min-of-means over ~1-sample replies is too noisy to assert a move
        assert point_to_gtp(result.move, 5) == "C2"


def test_superko_positions_are_never_created_in_the_tree():
    game = new_game(size=5, komi=0.5)
    game.play(BLACK, gtp_to_point("C3", 5))
    # Pretend that the positions after W B2 and after W B2 B D4 already occurred: neither may be entered.
    probe = new_game(size=5, komi=0.5)
    probe.play(BLACK, gtp_to_point("C3", 5))
    probe.play(WHITE, gtp_to_point("B2", 5))
    forbidden_root_move = int(hash_key(np.asarray(probe.state.hash)))
    probe.undo()
    probe.play(WHITE, gtp_to_point("D2", 5))
    probe.play(BLACK, gtp_to_point("D4", 5))
    forbidden_deep = int(hash_key(np.asarray(probe.state.hash)))
    forbidden = [forbidden_root_move, forbidden_deep]
    for key in forbidden:
        game._seen.append((key, BLACK))
    assert not game.legal_moves(WHITE)[gtp_to_point("B2", 5)]
    # One playout per leaf: D2's node is reached about 80 times, so every reply below it (D4 too) is tried.
    config = SearchConfig(strategy="uct", **{**SMALL, "playouts_per_leaf": 1})
    searcher = Searcher(game.rules, config, seed=4)
    searcher.search(game, SearchLimits(playouts=2048))
    tree = searcher.tree
    keys = set(int(k) for k in tree.hashes[1:tree.size])
    assert forbidden_root_move not in keys and forbidden_deep not in keys
    assert tree.children_visits[tree.root, gtp_to_point("B2", 5)] == 0
    d2 = tree.children_index[tree.root, gtp_to_point("D2", 5)]
    assert d2 >= 0 and not tree.children_legal[d2, gtp_to_point("D4", 5)]


def test_subtree_is_reused_after_moves():
    game = new_game(size=5, komi=0.5)
    searcher = Searcher(game.rules, SearchConfig(strategy="rave", **SMALL), seed=5)
    first = searcher.search(game, SearchLimits(playouts=1024))
    game.play(BLACK, first.move)
    old = searcher.tree
    node = old.children_index[0, first.move]
    reply = int(np.argmax(old.children_visits[node]))
    kept = _subtree_size(old, old.children_index[node, reply])
    game.play(WHITE, reply)
    tree = searcher.prepare_tree(game)
    assert tree is old and tree.root == 0 and tree.size == kept >= 1
    assert int(tree.hashes[0]) == int(hash_key(np.asarray(game.state.hash)))
    assert (tree.parents[1:tree.size] >= 0).all() and (tree.parents[1:tree.size] < tree.size).all()
    # Undo leaves a position the tree has no root for: a fresh tree.
    game.undo()
    game.undo()
    assert searcher.prepare_tree(game).size == 1


def _subtree_size(tree, node):
    stack, count = [int(node)], 0
    while stack:
        count += 1
        children = tree.children_index[stack.pop()]
        stack.extend(int(c) for c in children[children >= 0])
    return count


def test_time_budget_is_respected(monkeypatch):
    import time

    from support import FakeClock

    game = new_game(size=5, komi=0.5)
    searcher = Searcher(game.rules, SearchConfig(strategy="uct", early_stop=False, **SMALL), seed=7)
    searcher.search(game, SearchLimits(playouts=128))  # compile
    monkeypatch.setattr(time, "perf_counter", FakeClock(0.05))  # each reading of the clock: 0.05 s later
    short = searcher.search(game, SearchLimits(seconds=0.5))
    long = searcher.search(game, SearchLimits(seconds=2.0))
    # a search spends its whole budget on its clock and then stops; four times the time buys more playouts
    assert short.seconds >= 0.5 and long.seconds >= 2.0
    assert 0 < short.playouts < long.playouts


def test_move_decided_when_the_rest_cannot_overtake_the_leader():
    assert move_decided([0, 90, 10, 0], remaining=79)
    assert not move_decided([0, 90, 10, 0], remaining=80)  # a tie would go to the better win rate
    assert move_decided([5], remaining=100)  # one action: nothing to decide


def test_a_time_limited_search_stops_once_its_move_is_decided():
    game = board_game(CAPTURE, BLACK)
    config = SearchConfig(strategy="rave", **SMALL)
    searcher = Searcher(game.rules, config, seed=3)
    searcher.search(game, SearchLimits(playouts=64))  # compile
    searcher.reset()
    result = searcher.search(game, SearchLimits(seconds=3.0))
    assert point_to_gtp(result.move, 5) == "C2" and result.stopped_early
    ranked = np.sort(result.visits)[::-1]  # C2's lead exceeded what the time left could give another move
    assert ranked[0] - ranked[1] > 0
    off = Searcher(game.rules, dataclasses.replace(config, early_stop=False), seed=3)
    off_result = off.search(game, SearchLimits(seconds=1.0))
    assert not off_result.stopped_early and off_result.seconds >= 1.0  # off: the time is spent
    by_playouts = searcher.search(game, SearchLimits(playouts=512))
    assert not by_playouts.stopped_early and by_playouts.playouts >= 512  # a playout budget is always spent


def placeholder_states() -> dict:
    """One node's state fields (zeros) for a tree of 2-point positions."""
    states = {name: np.zeros((1, 2), np.int32) for name in ("stones", "chain", "lib_count", "lib_sum", "lib_sumsq")}
    states.update(ko=np.zeros(1, np.int32), to_play=np.ones(1, np.int8), passes=np.zeros(1, np.int32),
                  captures=np.zeros((1, 2), np.int32), hash=np.zeros((1, 2), np.uint32),
                  move_count=np.zeros(1, np.int32))
    return states


def test_principal_variation_keeps_to_the_searched_moves():
    # a reused root may hold visits of a move it no longer searches (superko, a laddered escape)
    tree = Tree(num_actions=3, capacity=2)
    root = tree.add_nodes(placeholder_states(), np.array([-1]), np.array([-1]))[0]
    tree.children_legal[root] = True
    tree.children_visits[root] = [5, 9, 1]
    tree.children_values[root] = [3, 6, 1]
    assert tree.principal_variation() == [1]
    tree.children_legal[root, 1] = False
    assert tree.principal_variation() == [0]


def test_tree_reroot_compacts_subtree():
    tree = Tree(num_actions=3, capacity=2)
    states = placeholder_states()
    root = tree.add_nodes(states, np.array([-1]), np.array([-1]))[0]
    a = tree.add_nodes(states, np.array([root]), np.array([0]))[0]
    b = tree.add_nodes(states, np.array([root]), np.array([1]))[0]
    c = tree.add_nodes(states, np.array([b]), np.array([2]))[0]  # grows past capacity 2
    tree.children_visits[b, 2] = 7
    assert tree.capacity >= 4 and tree.size == 4 and a != b
    tree.reroot(b)
    assert tree.size == 2 and tree.children_index[0, 2] == 1 and tree.parents[1] == 0
    assert tree.children_visits[0, 2] == 7 and c == 3


def test_searches_on_a_time_budget_take_the_batch_size_their_owner_keeps():
    """Issue 60: no K round trip: the searcher takes the limits' K (the clock's, kept by the Player from its
    first timed search), else one from the seconds; the searcher keeps none of its own."""
    game = new_game(size=5, komi=0.5)
    config = SearchConfig(strategy="rave", playouts_per_leaf=4, playout_policy="light",
                          bias_c2=0.0,  # K from the budget
                          backend="xla")  # the XLA rates (the native ones give larger K for the same seconds)
    sized = config.for_size(5)
    assert tree_leaves(sized, SearchLimits(seconds=0.2), 5) == auto_leaves(400, 4) == 4  # the rate for <= 9x9
    assert tree_leaves(sized, SearchLimits(seconds=20.0), 5) == auto_leaves(40000, 4) == 128
    assert tree_leaves(sized, SearchLimits(seconds=20.0, timed_leaves=4), 5) == 4  # the clock's compiled shape
    fixed = dataclasses.replace(sized, leaves_per_batch=16)
    assert tree_leaves(fixed, SearchLimits(seconds=0.1, timed_leaves=8), 5) == 16  # a K set in the config
    assert tree_leaves(sized, SearchLimits(playouts=400, timed_leaves=8), 5) == 4  # a playout budget's own K
    searcher = Searcher(game.rules, config, seed=1)
    started = []
    start = searcher.trees.start_tree_search
    searcher.trees.start_tree_search = lambda game, limits, leaves: started.append(leaves) or start(game, limits,
                                                                                                     leaves)
    searcher.search(game, SearchLimits(seconds=0.1, timed_leaves=8))
    assert started == [8]  # the K of the limits is the search's
    player = Player(config, seed=1, seconds=0.2)
    player.choose(game, BLACK)
    player.reset()  # a new game: a new Searcher, the same K
    assert player.clock.leaves == 4 and player.limits(game, BLACK).timed_leaves == 4


def test_leaf_last_moves_follow_the_tree_path_and_the_game():
    game = new_game(size=5, komi=0.5)
    game.play(BLACK, gtp_to_point("C3", 5))
    game.play(WHITE, gtp_to_point("B2", 5))
    searcher = Searcher(game.rules, SearchConfig(strategy="rave", **SMALL), seed=3)
    searcher.search(game, SearchLimits(playouts=512))
    tree = searcher.tree
    nodes = np.arange(tree.size)
    last = last_moves(tree, nodes, (gtp_to_point("B2", 5), gtp_to_point("C3", 5)))
    for node in nodes:
        path = [gtp_to_point("C3", 5), gtp_to_point("B2", 5)]
        chain, n = [], int(node)
        while n != tree.root:
            chain.append(int(tree.action_from_parent[n]))
            n = int(tree.parents[n])
        path += chain[::-1]
        assert list(last[node]) == [path[-1], path[-2]]


def test_rule_policy_search_plays_the_capture():
    game = board_game(CAPTURE, BLACK)
    # rave_c1 = 0.1: every move wins here, and without exploration the search keeps to the first winning one.
    config = SearchConfig(strategy="rave", rave_c1=0.1, **dict(SMALL, playout_policy="rules"))
    searcher = Searcher(game.rules, config, seed=4)
    result = searcher.search(game, SearchLimits(playouts=512))
    assert point_to_gtp(result.move, 5) == "C2"


def test_a_node_capped_tree_stops_growing_and_still_finds_the_capture():
    # SearchLimits.max_nodes (the analysis server's memory cap): descents stop at the frontier of a full tree, the
    # root's children are still made, and the search goes on with its playouts.
    game = board_game(CAPTURE, BLACK)
    searcher = Searcher(game.rules, SearchConfig(strategy="rave", **SMALL), seed=1)
    result = searcher.search(game, SearchLimits(playouts=2048, max_nodes=40))
    assert searcher.tree.size <= 40 + 26  # the cap, plus root children (always created)
    assert result.playouts >= 2048 and point_to_gtp(result.move, 5) == "C2"
    assert searcher.tree.root_visits().sum() == result.playouts  # every playout counted through a root move


def test_a_widened_search_spends_its_playouts_on_the_likeliest_root_moves():
    game = new_game(size=9, komi=7.5)
    cfg = SearchConfig(leaves_per_batch=8, playouts_per_leaf=2, widen_playouts=16, widen_factor=2.0)
    searcher = Searcher(game.rules, cfg, seed=3)
    result = searcher.search(game, SearchLimits(playouts=512))
    tree = searcher.tree
    visits = tree.children_visits[tree.root]
    searched = np.flatnonzero(visits > 0)
    # 256 root visits: width 2 + log2(256 / 16) + 1 = 7, the moves of highest prior
    top = np.argsort(-np.where(tree.children_legal[tree.root], tree.children_prior[tree.root], -1.0),
                     kind="stable")[:7]
    assert set(searched.tolist()) <= set(top.tolist())
    assert result.move in top.tolist()
    assert 2 < len(searched) <= 7


# White E5 is in atari; escaping at E4 runs into a working ladder (go.ladder.failed_escapes).
LADDERED = [
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . . X . . . .",
    ". . . X O X . . .",
    ". . . . . X . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
]


@pytest.mark.parametrize("ladder_prune", [False, True])
def test_ladder_prune_leaves_a_laddered_escape_out_of_the_root(ladder_prune):
    game = board_game(LADDERED, WHITE, komi=7.5)
    e4 = gtp_to_point("E4", 9)
    searcher = Searcher(game.rules, SearchConfig(ladder_prune=ladder_prune, **SMALL), seed=4)
    result = searcher.search(game, SearchLimits(playouts=256))
    root = searcher.tree.root
    assert bool(searcher.tree.children_legal[root, e4]) is not ladder_prune
    assert searcher.tree.children_legal[root].sum() == 77 - int(ladder_prune)  # 76 empty points and pass
    if ladder_prune:
        assert searcher.tree.children_visits[root, e4] == 0 and result.move != e4


def quiet_children(tree, e4: int, e5: int) -> list[int]:
    """The root's expanded children (their searched moves are known) in which white E5 is still on the board and
    E4 still empty."""
    root = tree.root
    children = [int(tree.children_index[root, a]) for a in np.flatnonzero(tree.children_index[root] >= 0)]
    children = [c for c in children if tree.expanded[c]]
    return [c for c in children if tree.states["stones"][c][e4] == 0 and tree.states["stones"][c][e5] == WHITE]


@pytest.mark.parametrize("in_tree", [False, True])
def test_ladder_prune_tree_leaves_laddered_escapes_out_of_the_tree_nodes(in_tree):
    # Black to move; in the nodes after a black move elsewhere, white's escape at E4 runs into the ladder
    game = board_game(LADDERED, BLACK, komi=7.5)
    e4, e5 = gtp_to_point("E4", 9), gtp_to_point("E5", 9)
    searcher = Searcher(game.rules, SearchConfig(ladder_prune_tree=in_tree, **SMALL), seed=5)
    searcher.search(game, SearchLimits(playouts=512))
    tree = searcher.tree
    quiet = quiet_children(tree, e4, e5)
    assert len(quiet) > 5
    assert all(bool(tree.children_legal[c, e4]) is not in_tree for c in quiet)
    assert all(tree.children_legal[c, -1] for c in quiet)  # pass stays


def test_late_playouts_take_over_the_searches_late_in_the_game():
    # 10 of 25 points covered: from late_fill 0.4 on the searches run the rule playouts, before it heavy ones
    crowded = board_game(["X O X O .", "O X O X .", "X O . . .", ". . . . .", ". . . . ."])
    config = dataclasses.replace(SearchConfig(strategy="rave", leaves_per_batch=4, playouts_per_leaf=2),
                                 late_playout_policy="rules", late_fill=0.4)
    searcher = Searcher(crowded.rules, config, seed=0)
    early = board_game(["X O . . .", ". . . . .", ". . . . .", ". . . . .", ". . . . ."])
    assert searcher.search(early, SearchLimits(playouts=16)).playouts >= 16 and searcher.evaluator.policy == "heavy"
    assert searcher.search(crowded, SearchLimits(playouts=16)).playouts >= 16 and searcher.evaluator.policy == "rules"
    from jaxgo.playouts.evaluator import make_evaluator

    given = Searcher(crowded.rules, config, seed=0, evaluator=make_evaluator("light"))  # a server's: kept
    given.search(crowded, SearchLimits(playouts=16))
    assert given.evaluator.policy == "light"


def test_score_utility_prefers_the_larger_margin_when_every_move_wins():
    # With a komi of -30.5 Black wins every playout, so win / loss values cannot tell the moves apart; with a
    # share of the score in the value the capture of the six stones (the largest margin) is the move.
    game = board_game(CAPTURE, BLACK, komi=-30.5)
    config = SearchConfig(strategy="rave", score_utility=0.3, **SMALL)
    result = Searcher(game.rules, config, seed=4).search(game, SearchLimits(playouts=1024))
    assert point_to_gtp(result.move, 5) == "C2"
    assert 0.7 < result.win_rate < 1.0  # the value: wins (0.7) plus a share of a large margin
    plain = Searcher(game.rules, SearchConfig(strategy="rave", **dict(SMALL, score_utility=0.0)), seed=4)
    plain = plain.search(game, SearchLimits(playouts=1024))
    assert plain.win_rate == 1.0


def test_board_size_defaults_widen_the_19x19_search_only():
    """On 19x19 the defaults search a node's likeliest moves first (progressive widening from 40 visits), weigh
    the priors more and run rule playouts from the empty board; on 9x9 none of these: the root's visited moves
    follow, and the empty board's playouts are heavy."""
    from jaxgo.search.reference import widening_width

    game = new_game(size=19, komi=7.5)
    searcher = Searcher(game.rules, SearchConfig(leaves_per_batch=8), seed=1)
    assert (searcher.config.widen_playouts, searcher.config.prior_pattern) == (40.0, 500.0)
    assert searcher.evaluator.policy == "rules"  # from the start: no heavy tables built for nothing
    result = searcher.search(game, SearchLimits(playouts=320))
    assert searcher.evaluator.policy == "rules"
    tree = searcher.tree
    visited = np.flatnonzero(tree.children_visits[tree.root] > 0)
    width = widening_width(result.playouts, 40.0, 1.4)
    assert 2 <= len(visited) <= width < 10
    likeliest = np.argsort(-tree.children_prior[tree.root], kind="stable")[:width]
    assert set(visited) <= set(likeliest)  # the move model's likeliest moves, the 4-4 and 3-4 points among them
    small = Searcher(new_game(size=9, komi=7.5).rules, SearchConfig(leaves_per_batch=8), seed=1)
    assert (small.config.widen_playouts, small.config.prior_pattern) == (0.0, 20.0)
    small.search(new_game(size=9, komi=7.5), SearchLimits(playouts=320))
    assert small.evaluator.policy == "heavy"
    assert (small.tree.children_visits[small.tree.root] > 0).sum() > width
