"""The ladder variant of the native rule playouts (``ladder_rules``) against the reference board and the host
ladder reader: every move of its playouts is of the highest tier present, its first-move probabilities are the
tiers' and its samples follow them, and the XLA backend refuses it."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go import ladder as host
from jaxgo.go.hostboard import Board
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.evaluator import make_evaluator
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import runner
from jaxgo.playouts.xla import rules as rp
from tests.playouts.native.test_playouts import first_move_pvalue, play

BASE, BUDGET, _ = runner.LADDER_POLICIES["ladder_rules"]
CAPTURE, SAVE, SHAPE, PLAIN, LAST = 3, 2, 1, 0, -10  # LAST - 1 + 1: a joined self-atari in the shape tier


def ladder_policy():
    return runner.rule_policy(rp.tables_of_policy(BASE), BUDGET)


def reference_tiers(board: ReferenceBoard, prev: int, read: list | None = None) -> np.ndarray:
    """int [P]: the ladder variant's tier of every point (-100: not a candidate), by playing each candidate on a
    copy of the reference board and reading ladders with ``jaxgo.go.ladder`` (the policy's budget).  ``read``:
    receives the ladder ataris and the escapes into a ladder."""
    size, points, me = board.size, board.size ** 2, board.to_play
    hosted = Board(size, board.stones.tolist(), me, board.ko_point)
    chased = -1  # the last move's chain, when it has two liberties
    if 0 <= prev < points and board.stones[prev] == -me and board.liberties(prev).sum() == 2:
        chased = prev
    table = rp.pattern_table()
    tiers = np.full(points, -100)
    for move in np.flatnonzero(board.legal_mask()[:-1] & ~board.eye_mask(me)):
        move = int(move)
        row, col = divmod(move, size)
        neighbours = [(row + dr) * size + col + dc for dr, dc in rp.CELLS[:4]
                      if 0 <= row + dr < size and 0 <= col + dc < size]
        after = board.copy()
        after.play(move)
        left = after.liberties(move).sum()
        captured = any(board.stones[n] == -me and after.stones[n] == 0 for n in neighbours)
        own_in_atari = any(board.stones[n] == me and board.liberties(n).sum() == 1 for n in neighbours)
        near = 0 <= prev < points and max(abs(prev // size - row), abs(prev % size - col)) == 1
        ladder_atari = chased >= 0 and host.ladder_atari_works(hosted, chased, move, BUDGET, BUDGET)
        if captured or ladder_atari:
            tiers[move] = CAPTURE
            if read is not None and ladder_atari and not captured:
                read.append(move)
        elif own_in_atari and left >= 2:
            laddered = left == 2 and host.ladder_move(hosted.play(move), move, BUDGET, BUDGET) is not None
            tiers[move] = LAST if laddered else SAVE
            if read is not None and laddered:
                read.append(move)
        elif near and table[shape_code(board, move)]:
            tiers[move] = SHAPE
        else:
            tiers[move] = PLAIN
        if tiers[move] >= 0 and tiers[move] != CAPTURE and left == 1 and any(board.stones[n] == me
                                                                              for n in neighbours):
            tiers[move] += LAST  # a joined self-atari
    return tiers


def shape_code(board: ReferenceBoard, move: int) -> int:
    """Raw 3x3 code (low 16 bits) of ``move`` for the side to move, as MoGo's shapes read it."""
    size, (row, col) = board.size, divmod(move, board.size)
    code = 0
    for i, (dr, dc) in enumerate(rp.CELLS):
        r, c = row + dr, col + dc
        if not (0 <= r < size and 0 <= c < size):
            value = rp.OFF_BOARD
        else:
            stone = int(board.stones[r * size + c])
            value = rp.EMPTY if stone == 0 else (rp.OWN if stone == board.to_play else rp.OPPONENT)
        code |= value << (2 * i)
    return code


def test_playouts_take_the_highest_tier_with_ladders_read():
    size, per_state = 9, 2
    boards, last = random_positions(size, 40, seed=4, max_moves=50)
    raw = play(ladder_policy(), boards, last, per_state, seed=5)
    points, checked, chosen = size * size, 0, {CAPTURE: 0, SAVE: 0, SHAPE: 0, PLAIN: 0}
    ladder_captures, escapes_left = 0, 0
    for row in range(len(boards) * per_state):
        board, prev = boards[row // per_state].copy(), int(last[row // per_state, 0])
        for move in raw.trace[row][raw.trace[row] >= 0][:40]:  # the opening of each playout: where fights are
            read = []
            tiers = reference_tiers(board, prev, read)
            where = f"row {row}, move {move}\n"  # the board is drawn only for a failure's message
            if move == points:
                assert (tiers == -100).all(), f"passed with candidates left: {where}{board.to_ascii()}"
            else:
                assert tiers[move] == tiers.max(), (
                    f"tier {tiers[move]} chosen over {tiers.max()}: {where}{board.to_ascii()}")
                chosen[tiers[move]] = chosen.get(tiers[move], 0) + 1
                ladder_captures += int(move) in read and tiers[move] == CAPTURE
                escapes_left += any(tiers[p] == LAST for p in read) and tiers.max() >= 0
                checked += 1
            board.play(int(move))
            prev = int(move)
    assert checked > 2000 and min(chosen[t] for t in (CAPTURE, SAVE, SHAPE, PLAIN)) > 0, chosen
    assert ladder_captures > 20 and escapes_left > 20, (ladder_captures, escapes_left)


def test_first_move_probabilities_are_uniform_over_the_highest_tier():
    boards, last = random_positions(9, 60, seed=6, max_moves=50)
    policy = ladder_policy()
    for i, board in enumerate(boards):
        tiers = reference_tiers(board, int(last[i, 0]))
        got = runner.move_probabilities(policy, board.stones, board.to_play, board.ko_point, last[i])
        top = tiers == tiers.max()
        expected = top / top.sum() if tiers.max() > -100 else np.zeros_like(got)
        np.testing.assert_allclose(got, expected, atol=1e-6, err_msg=board.to_ascii())


LADDER = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


def test_ladder_capture_comes_first_and_the_escape_last():
    board = ReferenceBoard.from_ascii(LADDER)  # Black to move; White's last stone at (4, 4), two liberties
    ladder, safe = ladder_policy(), runner.rule_policy(rp.tables_of_policy(BASE))
    probs = runner.move_probabilities(ladder, board.stones, board.to_play, -1, (4 * 9 + 4, -1))
    assert probs[2 * 9 + 4] == pytest.approx(1.0)  # the atari from above captures by ladder
    assert runner.move_probabilities(safe, board.stones, board.to_play, -1, (4 * 9 + 4, -1))[2 * 9 + 4] < 0.5
    board.play(2 * 9 + 4)  # White to move, in atari: the escape at (3, 5) runs into the ladder
    escape = 3 * 9 + 5
    before = runner.move_probabilities(safe, board.stones, board.to_play, -1, (2 * 9 + 4, -1))
    probs = runner.move_probabilities(ladder, board.stones, board.to_play, -1, (2 * 9 + 4, -1))
    assert before[escape] == pytest.approx(1.0) and probs[escape] < 1e-9 and probs.sum() == pytest.approx(1.0)


# LADDER with a white stone in atari in the corner: two captures for Black, one of them by ladder
TWO_CAPTURES = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
X . . . . . . . .
O . . . . . . . .
"""


@pytest.mark.parametrize("text, atari", [(TWO_CAPTURES, None), (LADDER, 2 * 9 + 4)],
                         ids=["capture-or-ladder", "escape-left-out"])
def test_sampled_first_moves_follow_the_probabilities(text, atari):
    board = ReferenceBoard.from_ascii(text)
    if atari is not None:
        board.play(atari)
    last = np.array([[atari if atari is not None else 4 * 9 + 4, -1]], np.int32)
    policy = ladder_policy()
    probs = runner.move_probabilities(policy, board.stones, board.to_play, -1, last[0])
    assert (probs > 0.01).sum() >= 2
    raw = play(policy, [board], last, per_state=4000, seed=1)
    counts = np.bincount(raw.trace[:, 0], minlength=82)[:81]
    assert first_move_pvalue(counts, probs, len(raw.trace)) > 1e-3


def test_the_xla_backend_refuses_the_ladder_policy():
    with pytest.raises(ValueError, match="'ladder_rules'.*native only"):
        make_evaluator("ladder_rules", backend="xla")
    evaluator = make_evaluator("ladder_rules", backend="native")
    assert evaluator.native_policy(9).tables[ft.LADDER] == BUDGET
