"""The wide light kernel's incremental state against the flood-fill reference, move by move.

``test_light.py`` holds both light kernels to the reference by replaying their recorded games; this adds, for
``light_wide``, the state it keeps between moves: after every move of 380 random playouts (5x5 to 19x19, from
the empty board and from played positions) the stones, the ko point, the chain partition and every chain's
pseudo-liberty statistics must equal those ``rules.from_board`` computes from scratch, and the candidate mask
must be the reference's legal, non-eye points.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.go import rules
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.xla import light_wide

KOMI = 7.5


@functools.partial(jax.jit, static_argnames=("steps",))
def _trace(states, seeds, steps: int):
    """Per step: (stones, chain, libs, ko, candidate mask) before the move, and the lanes' move counts."""
    size = rules.board_size(states.stones.shape[1])
    lanes = light_wide._lanes_from(states, seeds, 3 * size * size, record=True)

    def body(lanes, _):
        allowed, _ = light_wide.candidates(lanes, size)
        running = lanes.passes < 2
        seen = (lanes.stones, lanes.chain, lanes.libs, lanes.ko, allowed, running)
        return light_wide._step(lanes, running, size, record=True), seen

    lanes, seen = jax.lax.scan(body, lanes, None, length=steps)
    return seen, lanes.moves


def _check_lane(board: ReferenceBoard, seen, lane: int, moves: np.ndarray, steps: int) -> int:
    """Replay lane ``lane`` on ``board``; return the number of positions compared."""
    running_seq = seen[-1]
    points = board.size * board.size
    compared = 0
    for t in range(steps):
        if not running_seq[t, lane]:
            break
        try:
            _check_position(board, [x[t, lane] for x in seen[:-1]])
        except AssertionError as error:  # the board is drawn only for a failure's message
            raise AssertionError(f"lane {lane}, step {t}\n{board.to_ascii()}\n{error}") from None
        move = int(moves[lane, t])
        board.play(move if move < points else board.pass_move)
        compared += 1
    return compared


def _check_position(board: ReferenceBoard, lane_state) -> None:
    """The lane's stones, ko point and candidate mask are the reference board's; its chains are the partition,
    and its liberty statistics the sums, of ``rules.from_board``'s flood fill (``_chains_from_scratch``, without
    building a device State)."""
    stones, chain, packed_libs, ko, allowed = lane_state
    points = board.size * board.size
    np.testing.assert_array_equal(stones, board.stones)
    assert int(ko) == board.ko_point
    expected = board.legal_mask()[:-1] & ~board.eye_mask(board.to_play)
    np.testing.assert_array_equal(allowed, expected)
    ref_chain, *ref_stats = rules._chains_from_scratch(np.asarray(stones, np.int8), board.size)
    stone = stones != 0
    assert (chain[~stone] == points).all()
    # the same partition: equal ref ids <=> equal ids, and each chain's statistics at its id
    same = ref_chain[stone][:, None] == ref_chain[stone][None, :]
    np.testing.assert_array_equal(chain[stone][:, None] == chain[stone][None, :], same)
    ref_libs = np.stack(ref_stats, -1)
    packed = packed_libs[chain[stone]]
    libs = np.stack([packed[:, 0] & (1 << light_wide.SUM_SHIFT) - 1, packed[:, 0] >> light_wide.SUM_SHIFT,
                     packed[:, 1]], -1)
    np.testing.assert_array_equal(libs, ref_libs[ref_chain[stone]])


# (size, lanes, steps, from played positions): ``-m slow`` runs FULL, the default run a quarter of its lanes
FULL = [(5, 160, 80, False), (7, 100, 150, True), (9, 64, 250, False), (9, 48, 150, True), (19, 8, 400, True)]
QUICK = [(size, max(2, count // 4), steps, played) for size, count, steps, played in FULL]


@pytest.mark.parametrize("size,count,steps,from_played",
                         QUICK + [pytest.param(*case, marks=pytest.mark.slow) for case in FULL])
def test_incremental_state_matches_the_reference(size, count, steps, from_played):
    if from_played:
        boards = random_positions(size, count, seed=size, komi=KOMI)[0]
    else:
        boards = [ReferenceBoard(size, komi=KOMI) for _ in range(count)]
    states = [rules.from_board(b.stones, b.to_play).replace(ko=jnp.int32(b.ko_point)) for b in boards]
    states = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    seeds = jax.random.bits(jax.random.PRNGKey(size), (count,), jnp.uint32) | jnp.uint32(1)
    seen, moves = jax.device_get(_trace(states, seeds, steps))
    compared = sum(_check_lane(board.copy(), seen, lane, np.asarray(moves), steps) for lane, board in enumerate(boards))
    assert compared > count * 10
