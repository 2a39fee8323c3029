"""jaxgo/eval/judged_moves.py: the within-position slope and concordance, judged moves replayed from SGF, and a
small end-to-end run where the playouts must see a judged difference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jaxgo.eval import judged_moves

# After B C3, W A5, B B4, W E1, B D2, W A4, B B5 (5x5), White to move; White's A5-A4 chain has one liberty, A3:
#
#   5 O X . . .
#   4 O X . . .
#   3 . . X . .
#   2 . . . X .
#   1 . . . . O
#     A B C D E
#
# A3 saves the chain (two liberties), C1 leaves it to be captured.
GAME = b"(;FF[4]GM[1]SZ[5]KM[0.5]RE[B+Resign];B[cc];W[aa];B[bb];W[ee];B[dd];W[ab];B[ba];W[de];B[ed])"


def write_cache(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_slope_is_within_positions_and_concordance_counts_pairs_apart():
    v = np.array([0.6, 0.4, 0.2, 0.5, 0.5])
    groups = np.array(["a", "a", "a", "b", "b"])
    shifted = v + np.where(groups == "a", 0.3, -0.2)  # a position's level does not count, only its differences
    assert judged_moves.slope(shifted, v, groups) == pytest.approx(1.0)
    assert judged_moves.slope(0.25 * v, v, groups) == pytest.approx(0.25)
    assert judged_moves.slope(np.full(5, 0.5), v, groups) == pytest.approx(0.0)
    assert judged_moves.correlation(0.25 * v, v, groups) == pytest.approx(1.0)  # sharper or flatter: the same
    assert judged_moves.correlation(-v, v, groups) == pytest.approx(-1.0)
    noisy = v + np.array([0.1, -0.1, 0.0, 0.0, 0.0])
    assert 0.0 < judged_moves.correlation(noisy, v, groups) < 1.0
    np.testing.assert_allclose(judged_moves.centred(v, groups), [0.2, 0.0, -0.2, 0.0, 0.0], atol=1e-12)
    # pairs of group a: (0.6, 0.4), (0.6, 0.2), (0.4, 0.2); group b's pair is closer than 0.05 and not counted
    p = np.array([0.7, 0.1, 0.3, 0.0, 1.0])
    agree, pairs = judged_moves.concordance(p, v, groups)
    assert pairs == 3 and agree == pytest.approx(2 / 3)


def test_judged_items_replay_the_position_and_play_each_move(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    (games / "g0.sgf").write_bytes(GAME)
    cache = tmp_path / "judge.jsonl"
    position = f"{games}:g0.sgf@7"
    write_cache(cache, [{"id": position, "values": {"a3": 0.7, "pass": 0.5}},
                        {"id": position, "values": {"C1": 0.2}},  # a later line adds to the position
                        {"id": f"{games}:g0.sgf@3", "values": {"C2": 0.4}},  # one move: no pair, left out
                        {"id": f"{games}:missing.sgf@3", "values": {"C2": 0.4, "C4": 0.5}}])
    values = judged_moves.judge_values(cache)
    assert values[position] == {"A3": 0.7, "C1": 0.2}
    items = judged_moves.judged_items(values, [str(games)])
    assert [(item["move"], item["value"]) for item in items] == [("A3", 0.7), ("C1", 0.2)]
    white = -1
    for item in items:
        assert item["mover"] == white and item["split"] == "g0.sgf" and item["komi"] == 0.5
        board = np.asarray(item["state"].stones).reshape(-1)
        assert np.count_nonzero(board == white) == 4  # A5, A4, E1 and the judged move
    assert items[0]["last"][0] == 10  # A3 = row 2 from the top, column 0: the last move for the distance features


# 7x7 after White's G1, Black to move, komi 24.5 (a close game on this board):
#
#   7 . . . . . . .
#   6 . . . . . . .
#   5 . . X X X . .
#   4 . . O O O X .
#   3 . . X X X . .
#   2 . . . . . . .
#   1 . . . . . . O
#     A B C D E F G
#
# B4 captures White's three stones; A7 lets them out.
CAPTURE = b"(;FF[4]GM[1]SZ[7]KM[24.5]RE[B+Resign]AB[cc][dc][ec][fd][ce][de][ee]AW[cd][dd][ed];W[gg];B[ba])"


def test_a_run_sees_that_capturing_the_chain_is_better(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    (games / "g0.sgf").write_bytes(CAPTURE)
    cache = tmp_path / "judge.jsonl"
    write_cache(cache, [{"id": f"{games}:g0.sgf@1", "values": {"B4": 0.7, "A7": 0.2}}])
    assert judged_moves.main(["--judge-values", str(cache), "--sgf", str(games), "--variant", "heavy=heavy",
                              "--variant", "light=light", "--playouts", "256", "--batch", "8"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["variant"] for row in rows] == ["heavy", "light"]
    heavy, light = rows
    assert heavy["positions"] == 1 and heavy["moves"] == 2 and heavy["pairs"] == 1
    assert heavy["slope"] > 0.2 and heavy["concordance"] == 1.0  # Black's playouts after B4 win more
    assert "slope_diff" in light and "slope_diff" not in heavy
