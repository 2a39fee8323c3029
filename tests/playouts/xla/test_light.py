"""Light playouts checked move by move against the numpy reference board.

Every recorded playout is replayed on ``ReferenceBoard``: each move must be legal (simple ko, no suicide), must
not fill the mover's own eye, and a pass must happen exactly when no such move exists; the final score,
ownership, move count and first-play (AMAF) records must match the replay.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.xla import bitboard as bb
from jaxgo.playouts.xla import light as playout
from jaxgo.playouts.xla import light_wide

KOMI = 7.5
# Both light kernels: "sample, then validate" on row bitboards (CPU-shaped) and dense sampling over the legal
# points (``light_wide``, for wide devices); every rule check runs on each.
KERNELS = pytest.mark.parametrize("kernel", [playout, light_wide], ids=["light", "light_wide"])


def _candidates(board: ReferenceBoard) -> np.ndarray:
    """Moves the light policy may choose: legal, and not the mover's own eye."""
    legal = board.legal_mask()[:-1]
    return legal & ~board.eye_mask(board.to_play)


def _replay_and_check(start: ReferenceBoard, result, index: int, max_moves: int) -> None:
    board = start.copy()
    size = board.size
    moves = np.asarray(result.moves[index])
    played = moves[moves >= 0]
    first_colour = np.zeros(size * size, np.int8)
    first_ply = np.full(size * size, -1, np.int16)
    for ply, move in enumerate(played):
        choices = _candidates(board)
        where = f"playout {index}, ply {ply}, move {move}\n"  # the board is drawn only for a failure's message
        if move == size * size:
            assert not choices.any(), f"passed with candidates left: {where}{board.to_ascii()}"
        else:
            assert choices[move], f"move outside the light policy's candidates: {where}{board.to_ascii()}"
            if first_colour[move] == 0:
                first_colour[move], first_ply[move] = board.to_play, ply
        board.play(int(move))
    assert board.is_over() or len(played) == max_moves, f"playout {index} stopped early"
    assert int(result.num_moves[index]) == len(played)
    np.testing.assert_array_equal(np.asarray(result.ownership[index]), board.ownership(), err_msg=f"{index}")
    assert float(result.score[index]) == pytest.approx(board.area_score())
    assert int(result.winner[index]) == int(np.sign(board.area_score()))
    np.testing.assert_array_equal(np.asarray(result.first_colour[index]), first_colour)
    np.testing.assert_array_equal(np.asarray(result.first_ply[index]), first_ply)


@KERNELS
@pytest.mark.parametrize("size,batch", [(5, 64), pytest.param(7, 48, marks=pytest.mark.slow), (9, 40),
                                        pytest.param(13, 8, marks=pytest.mark.slow), (19, 4)])
def test_playouts_from_empty_board_follow_the_rules(kernel, size, batch):
    result = kernel.run_from_empty(size, batch, jax.random.PRNGKey(size), KOMI, record_moves=True)
    for index in range(batch):
        _replay_and_check(ReferenceBoard(size, komi=KOMI), result, index, 3 * size * size)


def _to_states(boards):
    states = [rules.from_board(b.stones, b.to_play) for b in boards]
    states = [s.replace(ko=jnp.int32(b.ko_point)) for s, b in zip(states, boards)]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


PLAYED_PER_STATE = 3  # playouts per position of ``played_call``


def played_call(kernel, states, key, active=None):
    """The call of several checks below (24 positions on 9x9, ``PLAYED_PER_STATE`` playouts each, moves recorded,
    all or the first ``active`` positions played): one compiled kernel serves them all."""
    return kernel.run(states, key, KOMI, num_per_state=PLAYED_PER_STATE, record_moves=True,
                      active_states=states.stones.shape[0] if active is None else active)


@KERNELS
@pytest.mark.parametrize("size", [pytest.param(5, marks=pytest.mark.slow), 9])  # 5x5: the empty board's and ko's
def test_playouts_from_played_positions(kernel, size):
    boards = random_positions(size, 24, seed=size, komi=KOMI)[0]
    result = played_call(kernel, _to_states(boards), jax.random.PRNGKey(1))
    for index in range(len(boards) * PLAYED_PER_STATE):
        _replay_and_check(boards[index // PLAYED_PER_STATE], result, index, 3 * size * size)


@KERNELS
def test_ko_point_is_respected_at_the_start(kernel):
    board = ReferenceBoard.from_ascii("""
        . X O . .
        X . X O .
        . X O . .
        . . . . .
        . . . . .
    """, to_play=WHITE)
    board.play(6)  # white B4 takes the black stone at C4: Black may not retake at C4 at once
    assert board.ko_point == 7
    states = _to_states([board])
    result = kernel.run(states, jax.random.PRNGKey(0), KOMI, num_per_state=64, record_moves=True)
    first_moves = np.asarray(result.moves[:, 0])
    assert board.ko_point not in set(first_moves.tolist())
    for index in range(64):
        _replay_and_check(board, result, index, 75)


@KERNELS
def test_deterministic_given_the_key(kernel):
    """(The call of the 9x9 rules check above: one compiled kernel for both.)"""
    a, b, c = (kernel.run_from_empty(9, 40, jax.random.PRNGKey(seed), KOMI, record_moves=True) for seed in (3, 3, 4))
    np.testing.assert_array_equal(np.asarray(a.ownership), np.asarray(b.ownership))
    assert not np.array_equal(np.asarray(a.ownership), np.asarray(c.ownership))


@KERNELS
@pytest.mark.parametrize("other_lanes", [(7,), pytest.param((7, 32), marks=pytest.mark.slow)], ids=["7", "7-32"])
def test_results_do_not_depend_on_the_number_of_lanes(kernel, other_lanes):
    """Finished lanes take the next pending playout; every playout keeps its own start and random stream (the
    default run against 7 lanes, the most refills; ``-m slow`` also 32).  The reference is ``played_call`` (its 72
    playouts in 72 lanes, no refill: the compiled call of the played-position check)."""
    boards = random_positions(9, 24, seed=9, komi=KOMI)[0]
    states = _to_states(boards)
    key = jax.random.PRNGKey(5)
    reference = played_call(kernel, states, key)
    for lanes in other_lanes:
        other = kernel.run(states, key, KOMI, num_per_state=PLAYED_PER_STATE, record_moves=True,
                           active_states=len(boards), lanes=lanes)
        for field in ("score", "num_moves", "ownership", "first_colour", "first_ply", "moves"):
            np.testing.assert_array_equal(np.asarray(getattr(other, field)), np.asarray(getattr(reference, field)),
                                          err_msg=f"{field} with {lanes} lanes")
    for index in range(0, len(boards) * PLAYED_PER_STATE, 7):
        _replay_and_check(boards[index // PLAYED_PER_STATE], reference, index, 3 * 81)


def test_default_lanes_by_backend(monkeypatch):
    """CPU: lanes sized to the cache; an accelerator: as many boards as ACCELERATOR_LANES, clipped to the call's
    playouts by ``run`` (so a small call on a GPU advances all its boards at once)."""
    assert [playout.default_lanes(p) for p in (49, 81, 169, 361)] == [1024, 1024, 512, 256]
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert playout.default_lanes(81) == playout.ACCELERATOR_LANES[81]
    assert playout.default_lanes(361) == playout.ACCELERATOR_LANES[361]


@KERNELS
def test_light_playout_statistics_on_9x9(kernel):
    """Sanity figures for light playouts with komi 7.5: games of about 110 moves, Black winning 35-50%."""
    empty = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 24), rules.new_state(9))
    results = [played_call(kernel, empty, key) for key in jax.random.split(jax.random.PRNGKey(7), 7)]  # 504
    moves, winner, owner = (np.concatenate([np.asarray(getattr(r, f)) for r in results])
                            for f in ("num_moves", "winner", "ownership"))
    assert 95 < float(moves.mean()) < 130
    assert 0.35 < float((winner == BLACK).mean()) < 0.5
    # the final positions are settled: only eyes (single empty points) remain
    assert float(np.mean(owner == 0)) < 0.02


def test_bitboard_round_trip_and_selection():
    rng = np.random.default_rng(0)
    dense = rng.random((6, 7, 7)) < 0.3
    words = bb.from_dense(jnp.asarray(dense))
    assert words.shape == (7, 6)
    np.testing.assert_array_equal(np.asarray(bb.to_dense(words, 7)), dense)
    np.testing.assert_array_equal(np.asarray(bb.popcount(words)), dense.reshape(6, -1).sum(axis=1))
    for k in range(int(dense[0].sum())):
        row, col = bb.select_point(words[:, :1], jnp.array([k]))
        expected = np.flatnonzero(dense[0].reshape(-1))[k]
        assert (int(row[0]), int(col[0])) == divmod(expected, 7)


@KERNELS
def test_first_moves_are_uniform_over_the_candidates(kernel):
    """Chi-square of 4,000 first moves from a played position against the uniform law on the legal, non-eye
    points (both kernels draw from the same law, whatever their scheme)."""
    from scipy import stats

    board = random_positions(9, 1, seed=3, komi=KOMI)[0][0]
    choices = _candidates(board)
    result = kernel.run(_to_states([board]), jax.random.PRNGKey(2), KOMI, num_per_state=4000, max_moves=1,
                        record_moves=True)
    first = np.asarray(result.moves[:, 0])
    counts = np.bincount(first, minlength=82)
    assert counts[:81][~choices].sum() == 0 and counts[81] == 0
    assert stats.chisquare(counts[:81][choices]).pvalue > 1e-4


@KERNELS
def test_only_the_active_positions_are_played(kernel):
    boards = random_positions(9, 24, seed=2, komi=KOMI)[0]
    result = played_call(kernel, _to_states(boards), jax.random.PRNGKey(0), active=10)
    moves = np.asarray(result.num_moves)
    assert (moves[:30] > 0).all() and (moves[30:] == 0).all()
    assert (np.asarray(result.ownership)[30:] == 0).all() and (np.asarray(result.score)[30:] == 0).all()


def test_wide_kernel_lanes_by_backend(monkeypatch):
    assert light_wide.default_lanes(81) == 256
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert light_wide.default_lanes(81) == light_wide.ACCELERATOR_LANES[81]
    assert light_wide.default_lanes(361) == light_wide.ACCELERATOR_LANES[361]
