"""The ladder variant of the native heavy playouts (``ladder_heavy``): its first-move probabilities are the heavy
policy's with the ladder gammas applied where the host ladder reader (``jaxgo.go.ladder``) finds an escape into a
working ladder or a ladder capture of the last move's chain, and its samples follow them; in both ladder policies a
chain caught in a ladder ends captured more often than in the policies they extend."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go import ladder as host
from jaxgo.go.hostboard import Board
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.evaluator import load_log_gammas
from jaxgo.playouts.native import runner
from jaxgo.playouts.xla import heavy as hp
from tests.playouts.native.test_playouts import first_move_pvalue

BUDGET = runner.LADDER_POLICIES["ladder_heavy"][1]
TABLES = hp.policy_tables(load_log_gammas())


def gamma(group: str, level: int) -> float:
    return float(np.asarray(getattr(TABLES, group))[level])


def reference_probabilities(board: ReferenceBoard, last, counts: dict, two_liberties: bool = False) -> np.ndarray:
    """float [P]: the heavy policy's first-move probabilities with the ladder gammas, read on the host (with
    ``two_liberties``, ``ladder2_heavy``'s)."""
    size, points, me = board.size, board.size ** 2, board.to_play
    weights = runner.move_probabilities(runner.heavy_policy(TABLES, size), board.stones, me, board.ko_point, last)
    hosted = Board(size, board.stones.tolist(), me, board.ko_point)
    prev = int(last[0])
    if 0 <= prev < points and board.stones[prev] == -me and board.liberties(prev).sum() == 2:
        atari = gamma("atari", 2 if board.ko_point >= 0 else 1)
        for lib in np.flatnonzero(board.liberties(prev)):
            after = board.copy()
            after.play(int(lib))
            if weights[lib] > 0 and not captures(board, after) and \
                    host.ladder_atari_works(hosted, prev, int(lib), BUDGET, BUDGET):
                weights[lib] *= gamma("capture", 2) / atari
                counts["ataris"] += 1
    escapes = {int(np.flatnonzero(board.liberties(p))[0]) for p in range(points)
               if board.stones[p] == me and board.liberties(p).sum() == 1}
    for lib in sorted(escapes):
        after = board.copy()
        if weights[lib] > 0:
            after.play(lib)
            if not captures(board, after) and after.liberties(lib).sum() == 2 and \
                    host.ladder_move(hosted.play(lib), lib, BUDGET, BUDGET) is not None:
                weights[lib] *= (gamma("self_atari", 1) * gamma("extension", 0)
                                 / (gamma("self_atari", 0) * gamma("extension", 1)))
                counts["escapes"] += 1
    if two_liberties and 0 <= prev < points and board.stones[prev] == -me:
        defend_two_liberties(board, hosted, prev, weights, counts)
    total = weights.sum()
    return weights / total if total > 0 else weights


def defend_two_liberties(board: ReferenceBoard, hosted: Board, prev: int, weights, counts: dict) -> None:
    """Multiply in the escape gamma at the liberties that take an own two-liberty chain next to ``prev`` out of
    the opponent's ladder (read on the host with the opponent to move)."""
    size, me = board.size, board.to_play
    row, col = divmod(prev, size)
    threatened = Board(size, board.stones.tolist(), -me, -1)
    boosted, chains = set(), []
    for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)):
        q = r * size + c
        if not (0 <= r < size and 0 <= c < size) or board.stones[q] != me or any(q in ch for ch in chains):
            continue
        stones, libs = hosted.chain(q)
        chains.append(stones)
        if len(libs) != 2 or host.ladder_move(threatened, q, BUDGET, BUDGET) is None:
            continue
        counts["threats"] += 1
        for lib in sorted(libs):
            if lib in boosted or weights[lib] <= 0:
                continue
            boosted.add(lib)
            after = hosted.play(lib)
            _, left = after.chain(q)
            took = sum(v == -me for v in after.stones) < sum(v == -me for v in hosted.stones)
            if took or len(left) > 2 or (len(left) == 2 and host.ladder_move(after, q, BUDGET, BUDGET) is None):
                weights[lib] *= gamma("extension", 1) / gamma("extension", 0)
                counts["defences"] += 1


def captures(before: ReferenceBoard, after: ReferenceBoard) -> bool:
    return bool(((before.stones == -before.to_play) & (after.stones == 0)).any())


@pytest.mark.parametrize("two_liberties", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["ladder_heavy", "ladder2_heavy"])
def test_first_move_probabilities_apply_the_ladder_gammas(two_liberties):
    policy = runner.heavy_policy(TABLES, 9, BUDGET, two_liberties)
    counts = {"ataris": 0, "escapes": 0} | ({"threats": 0, "defences": 0} if two_liberties else {})
    for seed, moves in ((7, 30), (8, 50), (9, 80)):
        boards, last = random_positions(9, 80, seed=seed, max_moves=moves)
        for i, board in enumerate(boards):
            expected = reference_probabilities(board, last[i], counts, two_liberties)
            got = runner.move_probabilities(policy, board.stones, board.to_play, board.ko_point, last[i])
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-9, err_msg=board.to_ascii())
    assert min(counts.values()) > 10, counts


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


@pytest.mark.parametrize("atari", [None, 2 * 9 + 4], ids=["ladder-capture", "ladder-escape"])
def test_sampled_first_moves_follow_the_probabilities(atari):
    board = ReferenceBoard.from_ascii(LADDER)
    if atari is not None:
        board.play(atari)  # White to move, in atari: the escape runs into the ladder
    last = np.array([[atari if atari is not None else 4 * 9 + 4, -1]], np.int32)
    policy = runner.heavy_policy(TABLES, 9, BUDGET)
    probs = runner.move_probabilities(policy, board.stones, board.to_play, -1, last[0])
    plain = runner.move_probabilities(runner.heavy_policy(TABLES, 9), board.stones, board.to_play, -1, last[0])
    point = 2 * 9 + 4 if atari is None else 3 * 9 + 5
    assert (probs[point] > plain[point]) == (atari is None) and probs[point] != plain[point]
    stones = board.stones[None]
    raw = runner.play_batch(policy, stones, [board.to_play], [-1], [0], last, 4000, 1, 2, record_moves=True)
    counts = np.bincount(raw.trace[:, 0], minlength=82)[:81]
    assert first_move_pvalue(counts, probs, len(raw.trace)) > 1e-3


@pytest.mark.parametrize("policy, base", [("ladder_heavy", "heavy"), ("ladder_rules", "safe_rules")])
def test_a_laddered_chain_dies_more_often_in_the_playouts(policy, base):
    from jaxgo.playouts.evaluator import make_evaluator

    board = ReferenceBoard.from_ascii(LADDER)
    board.play(2 * 9 + 4)  # White to move, its two stones in atari and in a ladder
    last = np.array([[2 * 9 + 4, -1]], np.int32)
    count, owned = 2000, {}
    for name in (policy, base):
        arrays = make_evaluator(name, backend="native").native_policy(9)
        raw = runner.play_batch(arrays, board.stones[None], [board.to_play], [-1], [0], last, count, 3, 2)
        owned[name] = (raw.ownership[:, 4 * 9 + 4] == 1).mean()  # Black owns White's stone's point at the end
    spread = np.sqrt(sum(p * (1 - p) for p in owned.values()) / count)
    assert owned[policy] > owned[base] + 4 * spread, owned
