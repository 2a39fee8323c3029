"""Heavy playouts: rules checked move by move against the numpy reference board, features against
``jaxgo.features.moves``, and the move distribution against gamma-proportional probabilities."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.go.coords import BLACK
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.learn import bt
from jaxgo.playouts.xla import bitboard as bb
from jaxgo.playouts.xla import board as heavy_board
from jaxgo.playouts.xla import features as heavy_features
from jaxgo.playouts.xla import heavy as hp

KOMI = 7.5


@pytest.fixture(scope="module")
def tables():
    return hp.policy_tables(hp.synthetic_log_gammas(0))


def _to_states(boards):
    states = [rules.from_board(b.stones, b.to_play).replace(ko=jnp.int32(b.ko_point)) for b in boards]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


def _candidates(board: ReferenceBoard) -> np.ndarray:
    return board.legal_mask()[:-1] & ~board.eye_mask(board.to_play)


def _replay_and_check(start: ReferenceBoard, result, index: int, max_moves: int) -> None:
    """Every move legal and not an own eye, pass exactly when forced, and the same final score / ownership /
    first-play records as the replay."""
    board = start.copy()
    points = board.size ** 2
    played = np.asarray(result.moves[index])
    played = played[played >= 0]
    first_colour = np.zeros(points, np.int8)
    first_ply = np.full(points, -1, np.int16)
    for ply, move in enumerate(played):
        choices = _candidates(board)
        where = f"playout {index}, ply {ply}, move {move}\n"  # the board is drawn only for a failure's message
        if move == points:
            assert not choices.any(), f"passed with candidates left: {where}{board.to_ascii()}"
        else:
            assert choices[move], f"illegal or eye-filling move: {where}{board.to_ascii()}"
            if first_colour[move] == 0:
                first_colour[move], first_ply[move] = board.to_play, ply
        board.play(int(move))
    assert board.is_over() or len(played) == max_moves, f"playout {index} stopped early"
    assert int(result.num_moves[index]) == len(played)
    assert float(result.score[index]) == pytest.approx(board.area_score())
    np.testing.assert_array_equal(np.asarray(result.ownership[index]), board.ownership())
    np.testing.assert_array_equal(np.asarray(result.first_colour[index]), first_colour)
    np.testing.assert_array_equal(np.asarray(result.first_ply[index]), first_ply)


PLAYED_PER_STATE = 3  # playouts per position of ``played_call``


def played_call(states, last_moves, key, tables):
    """The call of the 7x7 checks below (``PLAYED_PER_STATE`` playouts per position, moves recorded, 32 lanes
    refilled): one compiled kernel for the empty boards and the played positions."""
    return hp.run(states, key, KOMI, gammas=tables, num_per_state=PLAYED_PER_STATE, record_moves=True,
                  last_moves=last_moves, lanes=32)


@pytest.mark.parametrize("size,batch", [(7, 48), pytest.param(5, 48, marks=pytest.mark.slow),
                                        pytest.param(9, 64, marks=pytest.mark.slow)])
def test_playouts_from_empty_board_follow_the_rules(size, batch, tables):
    """7x7: 16 empty boards, 3 playouts each, in the call of the played-position check below (one compile)."""
    if size == 7:
        count = batch // PLAYED_PER_STATE
        empty = jax.tree_util.tree_map(lambda x: jnp.stack([x] * count), rules.new_state(size))
        result = played_call(empty, np.full((count, 2), -1, np.int32), jax.random.PRNGKey(size), tables)
    else:
        result = hp.run_from_empty(size, batch, jax.random.PRNGKey(size), KOMI, gammas=tables, record_moves=True)
    for index in range(batch):
        _replay_and_check(ReferenceBoard(size, komi=KOMI), result, index, 3 * size * size)


@pytest.mark.parametrize("size,positions", [(7, 16), pytest.param(7, 40, marks=pytest.mark.slow),
                                            pytest.param(9, 40, marks=pytest.mark.slow)])
def test_playouts_from_played_positions_follow_the_rules(size, positions, tables):
    """Positions with captures, kos and chains of every liberty class; 3 playouts each, lanes refilled."""
    boards, last = random_positions(size, positions, seed=size, komi=KOMI)
    result = played_call(_to_states(boards), last, jax.random.PRNGKey(1), tables)
    for index in range(len(boards) * PLAYED_PER_STATE):
        _replay_and_check(boards[index // PLAYED_PER_STATE], result, index, 3 * size * size)


@pytest.fixture(scope="module")
def featured_positions():
    """(boards, last moves, states, ``hp.point_features`` of them as numpy): 60 random 9x9 positions, one compiled
    call for the feature and eye checks below."""
    boards, last = random_positions(9, 60, seed=3, komi=KOMI)
    states = _to_states(boards)
    return boards, last, states, jax.tree_util.tree_map(np.asarray, hp.point_features(states, jnp.asarray(last)))


def test_point_features_equal_move_features(featured_positions):
    """The playout's incremental view (liberty classes) gives the levels of ``moves.move_features``."""
    boards, last, states, mine = featured_positions
    pattern_ids = mf.canonical_pattern_table()[0]
    reference = jax.jit(jax.vmap(mf.move_features, in_axes=(0, 0, 0, None)))(
        states, jnp.asarray(last[:, 0]), jnp.asarray(last[:, 1]), jnp.asarray(pattern_ids))
    levels, legal = (np.asarray(x)[:, :-1] for x in reference)
    np.testing.assert_array_equal(mine["legal"], legal)
    g = {name: i for i, name in enumerate(mf.GROUPS)}
    checked = 0
    for s in range(len(boards)):
        on = legal[s]
        np.testing.assert_array_equal(1 + pattern_ids[mine["code"][s][on]], levels[s][on, g["pattern"]])
        for name in ("capture", "extension", "self_atari", "atari", "dist_prev", "dist_prev2"):
            np.testing.assert_array_equal(mine[name][s][on], levels[s][on, g[name]],
                                          err_msg=f"{name}, position {s}\n{boards[s].to_ascii()}")
        checked += int(on.sum())
    assert checked > 1000
    for name in ("capture", "extension", "self_atari", "atari"):  # every feature actually occurs
        assert (mine[name][legal] > 0).any(), name
    assert (mine["capture"][legal] == 3).any()  # a capture that saves an own chain in atari


def test_eye_mask_matches_the_reference(featured_positions):
    boards, _, _, mine = featured_positions
    for s, board in enumerate(boards):
        np.testing.assert_array_equal(mine["eye"][s], board.eye_mask(board.to_play))
    assert mine["eye"].any()  # the positions do hold eyes


POSITION = """
    . . . . . . .
    . X O . . . .
    . X O O . . .
    . O X X O . .
    . . X O . . .
    . . . . . . .
    . . . . . . .
"""


@pytest.mark.slow
def test_first_move_frequencies_are_gamma_proportional(tables):
    """On a hand-made position the first playout move follows gamma_a / sum_b gamma_b, with gamma_a the team
    strength of ``jaxgo.learn.bt`` over ``moves.move_features``; chi-square test over the candidates."""
    board = ReferenceBoard.from_ascii(POSITION, to_play=BLACK)
    last = np.array([[3 * 7 + 4, 2 * 7 + 3]], np.int32)  # white just played E4 after D5
    states = _to_states([board])
    log_gamma = hp.synthetic_log_gammas(0)
    levels, legal = mf.move_features(jax.tree_util.tree_map(lambda x: x[0], states), jnp.int32(last[0, 0]),
                                     jnp.int32(last[0, 1]), jnp.asarray(mf.canonical_pattern_table()[0]))
    features = np.asarray(levels)[:-1] + mf.group_offsets()
    strength = np.exp(np.asarray(bt.team_log_strength(jnp.asarray(log_gamma), jnp.asarray(features))))
    allowed = np.asarray(legal)[:-1] & ~board.eye_mask(BLACK)
    expected = np.where(allowed, strength, 0.0)
    expected /= expected.sum()
    np.testing.assert_allclose(np.asarray(hp.move_probabilities(states, tables, jnp.asarray(last)))[0], expected,
                               rtol=2e-4, atol=1e-7)

    draws = 12000
    result = hp.run(states, jax.random.PRNGKey(7), KOMI, gammas=tables, num_per_state=draws, max_moves=1,
                    record_moves=True, last_moves=last)
    first = np.asarray(result.moves[:, 0])
    assert allowed[first].all()
    counts = np.bincount(first, minlength=49)
    mean = draws * expected
    cells = mean >= 5
    chi2 = float(np.sum((counts[cells] - mean[cells]) ** 2 / mean[cells]))
    dof = int(cells.sum()) - 1
    assert chi2 < dof + 5 * np.sqrt(2 * dof), (chi2, dof)
    assert counts[~allowed].sum() == 0


@pytest.mark.slow
def test_deterministic_given_the_key_and_independent_of_lanes(tables):
    boards, last = random_positions(7, 5, seed=11, komi=KOMI)
    states = _to_states(boards)
    key = jax.random.PRNGKey(5)
    a = hp.run(states, key, KOMI, gammas=tables, num_per_state=12, lanes=60, record_moves=True, last_moves=last)
    b = hp.run(states, key, KOMI, gammas=tables, num_per_state=12, lanes=9, record_moves=True, last_moves=last)
    for field in ("score", "num_moves", "ownership", "first_colour", "first_ply", "moves"):
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field)), err_msg=field)
    c = hp.run(states, jax.random.PRNGKey(6), KOMI, gammas=tables, num_per_state=12, lanes=60, record_moves=True,
               last_moves=last)
    assert not np.array_equal(np.asarray(a.moves), np.asarray(c.moves))


def test_policy_tables_reject_a_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        hp.policy_tables(np.zeros(5))


def test_all_gammas_one_is_the_light_policy():
    """Log-gammas all 0: every candidate equally likely, as in the light playouts."""
    boards, last = random_positions(9, 6, seed=4, max_moves=60, komi=KOMI)
    probs = np.asarray(hp.move_probabilities(_to_states(boards), hp.policy_tables(np.zeros(mf.num_features())),
                                             jnp.asarray(last)))
    for board, p in zip(boards, probs):
        allowed = _candidates(board)
        np.testing.assert_allclose(p, np.where(allowed, 1.0 / allowed.sum(), 0.0), rtol=1e-5)


_from_states = jax.jit(heavy_board.from_states, static_argnums=(4, 5))  # one compile, not 30 eager rebuilds


def _rebuilt(boards, size: int):
    """The loop state ``boards`` (heavy_board.Boards, B lanes) rebuilt from its stones alone: chain ids and liberty
    classes recounted from scratch (``rules.from_board`` flood fill); ko, move history and the previous move's
    chain copied over."""
    black = np.asarray(bb.to_dense(boards.black, size)).reshape(-1, size * size)
    white = np.asarray(bb.to_dense(boards.white, size)).reshape(-1, size * size)
    to_play = np.asarray(boards.to_play)
    ko = np.asarray(bb.to_dense(boards.ko, size)).reshape(-1, size * size)
    states = [rules.from_board(b.astype(np.int8) - w.astype(np.int8), int(t)).replace(
        ko=np.int32(int(np.argmax(k)) if k.any() else -1)) for b, w, t, k in zip(black, white, to_play, ko)]
    states = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *states)  # stacked on the host
    scratch = _from_states(states, boards.rng, boards.prev, boards.prev2, boards.moves.shape[0], False)
    return scratch.replace(last_chain=boards.last_chain, passes=boards.passes)


@pytest.mark.parametrize("size,steps", [(7, 30), pytest.param(9, 40, marks=pytest.mark.slow)])
def test_incremental_liberty_classes_equal_a_recount(size, steps, tables):
    """After every move of real heavy playouts (captures, merges, kos, chains gaining liberties from captures),
    the incrementally kept liberty classes, liberty sums and chain ids equal a from-scratch recount of the same
    stones, and so do the move weights computed from them."""
    boards_in, last = random_positions(size, 16, seed=30 + size, komi=KOMI)
    states = jax.tree_util.tree_map(lambda x: jnp.repeat(x, 3, axis=0), _to_states(boards_in))
    last = jnp.repeat(jnp.asarray(last), 3, axis=0)
    lanes = states.stones.shape[0]
    seeds = jnp.arange(1, lanes + 1, dtype=jnp.uint32) * jnp.uint32(2654435761)
    boards = _from_states(states, seeds, last[:, 0], last[:, 1], 0, False)  # the recount's compiled call
    step = jax.jit(lambda b: hp._step(b, b.passes < 2, tables, size, False))
    weights = jax.jit(lambda b: heavy_features.weights(b, tables, size))
    classes_checked = 0
    for _ in range(steps):
        boards = step(boards)
        scratch = _rebuilt(boards, size)
        for name in ("black", "white", "ko", "lib1", "lib2"):
            np.testing.assert_array_equal(np.asarray(getattr(boards, name)), np.asarray(getattr(scratch, name)),
                                          err_msg=name)
        classed = np.asarray(bb.to_dense(boards.lib1 | boards.lib2, size))  # [B, N, N]
        mine = np.moveaxis(np.asarray(boards.libsum), -1, 0)
        np.testing.assert_array_equal(mine[classed], np.moveaxis(np.asarray(scratch.libsum), -1, 0)[classed])
        classes_checked += int(classed.sum())
        stones = np.asarray(bb.to_dense(boards.black | boards.white, size))
        ids, chains = np.moveaxis(np.asarray(boards.ids), -1, 0), np.moveaxis(np.asarray(scratch.ids), -1, 0)
        for lane in range(lanes):  # the same partition of the stones into chains
            pairs = set(zip(ids[lane][stones[lane]], chains[lane][stones[lane]]))
            assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
        np.testing.assert_array_equal(np.asarray(weights(boards)), np.asarray(weights(scratch)))
    assert classes_checked > 1000
