"""Progressive-bias priors K(s, a) from the move model, and their use in the tree search."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point
from jaxgo.go.game import new_game
from jaxgo.go.reference import ReferenceBoard
from jaxgo.learn import bt
from jaxgo.search import priors
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.reference import virtual_rave
from jaxgo.search.searcher import Searcher

# Black to play: the white stone at C5 is in atari (last liberty C4); the black stone at E4 is in atari too.
POSITION = """
    . . . . . . .
    . . X . . . .
    . X O X . . .
    . . . O X O .
    . . . . O . .
    . . . . . . .
    . . . . . . .
"""


def _state(text: str, to_play: int = BLACK):
    board = ReferenceBoard.from_ascii(text, to_play=to_play)
    state = rules.from_board(board.stones, to_play)
    return board, jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)


def game_after_d4_c4_d3():
    """A 7x7 game after Black D4, White C4, Black D3 (White to play)."""
    game = new_game(7, 7.5)
    for move in ("D4", "C4", "D3"):
        game.play(game.to_play, gtp_to_point(move, 7))
    return game


def test_priors_are_the_normalised_team_strengths():
    board, states = _state(POSITION)
    log_gamma = priors.log_gammas()
    searched = np.concatenate([board.legal_mask()[:-1] & ~board.eye_mask(BLACK), [True]])
    prev, prev2 = gtp_to_point("F4", 7), gtp_to_point("D5", 7)  # white F4 just played, after black D5
    k = priors.prior_probabilities(states, searched[None], [prev], [prev2], log_gamma)[0]
    features = jax.jit(mf.move_features)  # one compile, not one per eager operation (3.6 -> 0.6 CPU-s)
    levels, legal = features(jax.tree_util.tree_map(lambda x: x[0], states), jnp.int32(prev), jnp.int32(prev2),
                             jnp.asarray(mf.canonical_pattern_table()[0]))
    strength = np.exp(np.asarray(bt.team_log_strength(jnp.asarray(log_gamma),
                                                      np.asarray(levels) + mf.group_offsets())))
    expected = np.where(searched & np.asarray(legal), strength, 0.0)
    np.testing.assert_allclose(k, expected / expected.sum(), rtol=1e-4, atol=1e-8)
    assert abs(k.sum() - 1.0) < 1e-5 and (k[~searched] == 0).all()
    # The shipped gammas favour capturing the white stone in atari.
    capture = gtp_to_point("C4", 7)
    assert k[capture] > 5 * np.median(k[searched])


def test_uniform_without_bias():
    game = new_game(7, 7.5)
    searched = np.ones(50, bool)
    config = SearchConfig(bias_c2=0.0, prior_pattern=0.0)
    np.testing.assert_allclose(priors.root_prior(config, game, searched), np.full(50, 1 / 50))


def test_search_with_heavy_playouts_and_progressive_bias():
    game = game_after_d4_c4_d3()
    config = SearchConfig(playout_policy="heavy", bias_c2=1.0, leaves_per_batch=16, playouts_per_leaf=2)
    searcher = Searcher(game.rules, config, seed=0)
    result = searcher.search(game, SearchLimits(playouts=128))
    assert result.playouts >= 128
    assert game.is_legal(game.to_play, result.move)
    tree = searcher.tree
    root_prior = tree.children_prior[tree.root]
    assert abs(root_prior.sum() - 1.0) < 1e-5
    assert root_prior.max() > 3.0 / tree.children_legal[tree.root].sum()  # not uniform
    children = tree.children_index[tree.root]
    child = int(children[children >= 0][0])
    assert abs(tree.children_prior[child].sum() - 1.0) < 1e-5


def test_tree_priors_take_the_game_last_moves_at_the_root():
    # Light playouts with progressive bias: the priors of the root's children use the game's last move as the
    # move before theirs (it was -1 before), grandchildren their parent's edge -- as the playouts' last moves.
    game = game_after_d4_c4_d3()
    config = SearchConfig(bias_c2=1.0, leaves_per_batch=16, playouts_per_leaf=2, playout_policy="light")
    searcher = Searcher(game.rules, config, seed=1)
    searcher.search(game, SearchLimits(playouts=256))
    tree, log_gamma = searcher.tree, priors.log_gammas()
    last = gtp_to_point("D3", 7)

    def expected(node, prev, prev2):
        return priors.prior_probabilities(tree.gather_states(np.array([node])), tree.children_legal[node][None],
                                          [prev], [prev2], log_gamma)[0]

    np.testing.assert_allclose(tree.children_prior[tree.root], expected(tree.root, last, gtp_to_point("C4", 7)),
                               rtol=1e-5, atol=1e-7)
    # Nodes get their priors when a descent first goes through them (expanded); the others are leaves.
    children = [int(c) for c in tree.children_index[tree.root] if c >= 0 and tree.expanded[c]]
    checked = 0
    for child in children[:4]:
        action = int(tree.action_from_parent[child])
        np.testing.assert_allclose(tree.children_prior[child], expected(child, action, last), rtol=1e-5, atol=1e-7)
        for grand in [int(g) for g in tree.children_index[child] if g >= 0 and tree.expanded[g]][:2]:
            np.testing.assert_allclose(tree.children_prior[grand],
                                       expected(grand, int(tree.action_from_parent[grand]), action),
                                       rtol=1e-5, atol=1e-7)
            checked += 1
    assert len(children) >= 4 and checked >= 1
    leaves = np.flatnonzero(~tree.expanded[:tree.size])
    assert len(leaves) and (tree.children_index[leaves] < 0).all() and (tree.children_prior[leaves] == 0).all()
    # The root's children's priors differ from what -1 as the move before gives (the old, inconsistent prior).
    child = children[0]
    old = expected(child, int(tree.action_from_parent[child]), -1)
    assert not np.allclose(tree.children_prior[child], old, rtol=1e-5, atol=1e-7)


def test_virtual_rave_experience_is_off_with_zero_priors():
    visits, values = np.array([0.0, 3.0, 10.0]), np.array([0.0, 2.0, 4.0])
    config = SearchConfig(prior_even=0.0, prior_pattern=0.0)
    out_visits, out_values = virtual_rave(config, visits, values, np.array([0.2, 0.3, 0.5]))
    np.testing.assert_array_equal(out_visits, visits)
    np.testing.assert_array_equal(out_values, values)


def test_virtual_rave_experience_favours_likely_moves_and_fades_with_real_amaf():
    config = SearchConfig(prior_even=10.0, prior_pattern=20.0)
    prior = np.array([0.64, 0.04, 0.0])
    # No AMAF data yet: value = (5 + 20 sqrt(K)) / (10 + 20 sqrt(K)), i.e. 21/26, 9/14 and 1/2.
    visits, values = virtual_rave(config, np.zeros(3), np.zeros(3), prior)
    np.testing.assert_allclose(values / visits, [21.0 / 26.0, 9.0 / 14.0, 0.5])
    np.testing.assert_allclose(visits, [26.0, 14.0, 10.0])
    # 10,000 real AMAF playouts at 40%: every move's value is within 0.01 of 0.4 whatever its prior.
    visits, values = virtual_rave(config, np.full(3, 1e4), np.full(3, 4e3), prior)
    assert np.all(np.abs(values / visits - 0.4) < 0.01)


def test_virtual_experience_alone_computes_the_move_model_priors():
    game = game_after_d4_c4_d3()
    config = SearchConfig(prior_pattern=20.0, leaves_per_batch=16, playouts_per_leaf=2, playout_policy="light",
                          bias_c2=0.0)
    searcher = Searcher(game.rules, config, seed=0)
    result = searcher.search(game, SearchLimits(playouts=128))
    assert game.is_legal(game.to_play, result.move)
    root_prior = searcher.tree.children_prior[searcher.tree.root]
    assert abs(root_prior.sum() - 1.0) < 1e-5
    assert root_prior.max() > 3.0 / searcher.tree.children_legal[searcher.tree.root].sum()  # not uniform


def test_tactical_priors_sharpen_captures_escapes_and_self_ataris():
    """prior_tactics t: the capture and escape levels' log-gammas rise by t, the self-atari's falls by t; in
    POSITION (Black to play) the capture C4 gains e^t against a quiet move (B6) on the native and XLA paths alike,
    and the search's root prior takes it from the config."""
    board, states = _state(POSITION)
    searched = np.concatenate([board.legal_mask()[:-1] & ~board.eye_mask(BLACK), [True]])
    base = priors.log_gammas()
    sharp = priors.tactical_log_gamma(base, 1.5)
    assert priors.tactical_log_gamma(base, 0.0) is base and priors.tactical_log_gamma(base, 1.5) is sharp
    offsets, sizes = mf.group_offsets(), mf.group_sizes()
    change = sharp - base
    for name, sign in (("capture", 1.0), ("extension", 1.0), ("self_atari", -1.0), ("pattern", 0.0)):
        index = mf.GROUPS.index(name)
        start = int(offsets[index])
        assert change[start] == 0.0  # the absent level keeps gamma 1
        np.testing.assert_allclose(change[start + 1:start + int(sizes[index])], sign * 1.5, rtol=1e-6)
    quiet, capture = gtp_to_point("B6", 7), gtp_to_point("C4", 7)
    for backend in ("native", "xla"):
        plain = priors.prior_probabilities(states, searched[None], [-1], [-1], base, backend)[0]
        tactical = priors.prior_probabilities(states, searched[None], [-1], [-1], sharp, backend)[0]
        ratio = (tactical[capture] / tactical[quiet]) / (plain[capture] / plain[quiet])
        assert abs(ratio - np.exp(1.5)) < 1e-2 * np.exp(1.5)
    config = SearchConfig(prior_tactics=1.5, prior_model=None)
    game = new_game(7, 7.5)
    game.setup_stones(BLACK, [gtp_to_point(v, 7) for v in ("C6", "B5", "D5", "E4")])
    game.setup_stones(WHITE, [gtp_to_point(v, 7) for v in ("C5", "D4", "F4", "E3")])
    root = priors.root_prior(config, game, searched, last=(-1, -1), backend="native")
    plain_config = SearchConfig(prior_tactics=0.0, prior_model=None)
    plain_root = priors.root_prior(plain_config, game, searched, last=(-1, -1), backend="native")
    assert root[capture] / root[quiet] > 4 * plain_root[capture] / plain_root[quiet]
    # by default (None) t = 1.5 below 19x19, where it was measured, and 0 from 19x19 on
    assert SearchConfig().prior_tactics is None and SearchConfig().for_size(9).prior_tactics == 1.5
    assert priors.tactics_of(SearchConfig(), 9) == 1.5 and priors.tactics_of(SearchConfig(), 19) == 0.0
    default_root = priors.root_prior(SearchConfig(prior_model=None), game, searched, last=(-1, -1), backend="native")
    np.testing.assert_allclose(default_root, root, rtol=1e-6)


def test_a_positions_compiled_prior_equals_prior_probabilities():
    """``gamma_prior`` on the native board (no large patterns, up to 11x11) takes ``compiled_prior.position_prior``,
    one compiled call: bit for bit ``prior_probabilities``' numpy, with tactics, random searched moves and
    searched moves whose gammas are all 0 (uniform)."""
    from jaxgo.search import compiled_prior

    rng = np.random.default_rng(7)
    for size in (5, 9, 11):
        game = new_game(size, 7.5)
        for turn in range(30):
            legal = np.flatnonzero(game.legal_moves(game.to_play)[:-1])
            if not len(legal):
                break
            game.play(game.to_play, int(rng.choice(legal)))
            if turn % 3:
                continue
            searched = rng.random(size * size + 1) < 0.8
            if turn % 9 == 0:
                searched[:] = False
                searched[-1] = turn % 18 == 0  # pass alone, or nothing searched (all weights 0: the uniform branch)
            for tactics in (0.0, 1.0):
                log_gamma, large = priors.model_gammas(None, None, size, tactics)
                assert large is None
                last = priors.game_last_moves(game)
                state = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], game.state)
                former = priors.prior_probabilities(state, searched[None], [last[0]], [last[1]], log_gamma,
                                                    "native")[0]
                compiled = compiled_prior.position_prior(game.state, searched, last, log_gamma)
                assert compiled.dtype == former.dtype and np.array_equal(compiled, former)
                via = priors.gamma_prior(game, searched, None, None, "native", None, tactics)
                assert np.array_equal(via, former)
