"""The last good replies of ``lgrf_heavy`` (LGRF-1, Baier & Drake 2010): what ``runner.learn_replies`` keeps and
forgets, that the playouts play a kept reply wherever the heavy policy allows it and are the heavy playouts bit for
bit without one, that a batch's results do not depend on the thread count, and the evaluator's table."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go import rules
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.native import runner
from tests.playouts.native.test_playouts import play, policy_arrays

SIZE = 9
W = SIZE + 2


def padded(point: int) -> int:
    return (point // SIZE + 1) * W + point % SIZE + 1


def learn(replies, moves, score: float, to_play: int = 1, last: int = -1, komi: float = 0.5) -> None:
    """One playout's update: ``moves`` board indices (N * N = pass) from a position with ``to_play`` to move
    whose last move was ``last``."""
    trace = np.full((1, 3 * SIZE * SIZE), -1, np.int16)
    trace[0, :len(moves)] = moves
    runner.learn_replies(replies, trace, np.array([len(moves)], np.int32), np.array([score], np.float32),
                         np.array([komi], np.float32), np.array([to_play], np.int32),
                         np.array([[last, -1]], np.int32), 1)


def test_the_winner_s_replies_are_kept_and_the_loser_s_forgotten():
    replies = runner.new_replies(SIZE)
    pass_move = SIZE * SIZE
    # Black to move after White's 40: Black 10, White 11, Black 12, White pass, Black 13; Black wins
    learn(replies, [10, 11, 12, pass_move, 13], score=5.0, to_play=1, last=40)
    black, white = 0, 1
    assert replies[black, padded(40)] == padded(10)  # the first move replies to the position's last move
    assert replies[black, padded(11)] == padded(12)
    assert (replies[white] == -1).all()  # the loser keeps nothing
    assert (replies >= 0).sum() == 2  # nothing replies to a pass, a pass is no reply
    # White wins a playout in which Black plays 12 after 11 again: Black's reply is forgotten, White's kept
    learn(replies, [11, 12, 30], score=-5.0, to_play=-1, last=20)
    assert replies[black, padded(11)] == -1
    assert replies[white, padded(20)] == padded(11) and replies[white, padded(12)] == padded(30)
    assert replies[black, padded(40)] == padded(10)  # a loser's other move forgets nothing
    # a drawn playout teaches nothing
    before = replies.copy()
    learn(replies, [11, 12], score=0.5, to_play=-1, last=20, komi=0.5)
    np.testing.assert_array_equal(replies, before)


def test_without_a_reply_the_playouts_are_the_heavy_ones_bit_for_bit():
    boards, last = random_positions(SIZE, 3, seed=4)
    heavy = policy_arrays("heavy", SIZE)
    plain = play(heavy, boards, last, per_state=6, seed=8)
    stones = np.stack([b.stones for b in boards])
    empty = runner.play_batch(heavy, stones, [b.to_play for b in boards], [b.ko_point for b in boards],
                              [b.passes for b in boards], last, 6, 8, 2, record_moves=True,
                              replies=runner.new_replies(SIZE))
    np.testing.assert_array_equal(plain.trace, empty.trace)
    np.testing.assert_array_equal(plain.score, empty.score)
    np.testing.assert_array_equal(plain.first_colour, empty.first_colour)


CORNER = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . O . . . . . .
. . O X . . . . .
"""


def test_a_kept_reply_is_played_wherever_the_policy_allows_it():
    board = ReferenceBoard.from_ascii(CORNER)
    board.to_play = rules.BLACK
    last_move = 7 * SIZE + 2  # White's C2
    reply, occupied = 8 * SIZE + 4, 8 * SIZE + 3  # Black's E1; D1 holds Black's own stone
    replies = runner.new_replies(SIZE)
    replies[0, padded(last_move)] = padded(reply)
    replies[1, padded(reply)] = padded(occupied)  # White's kept answer to E1 is not a legal move
    last = np.array([[last_move, -1]], np.int32)
    raw = runner.play_batch(policy_arrays("heavy", SIZE), board.stones[None], [board.to_play], [-1], [0], last,
                            200, 3, 2, record_moves=True, replies=replies)
    assert (raw.trace[:, 0] == reply).all()  # every playout answers C2 with E1
    assert len(set(raw.trace[:, 1].tolist())) > 10  # White draws instead of its illegal reply


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_does_not_depend_on_the_thread_count(threads):
    boards, last = random_positions(SIZE, 3, seed=2)
    stones = np.stack([b.stones for b in boards])
    args = (policy_arrays("heavy", SIZE), stones, [b.to_play for b in boards], [b.ko_point for b in boards],
            [b.passes for b in boards], last, 8)
    tables, traces = [], []
    for count in (threads, 3 - threads):
        replies = runner.new_replies(SIZE)
        for seed in range(3):  # three batches, each learning from the last
            raw = runner.play_and_learn(*args, seed, count, replies, np.full(3, 7.5, np.float32))
        tables.append(replies)
        traces.append(raw.trace)
    np.testing.assert_array_equal(tables[0], tables[1])
    np.testing.assert_array_equal(traces[0], traces[1])
    assert (tables[0] >= 0).sum() > 20
