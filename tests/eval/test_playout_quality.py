"""jaxgo/eval/playout_quality.py: labels from SGF results, positions, the scores and their game-level intervals, and
a small end-to-end run comparing playout policies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jaxgo.eval import playout_quality

# Black owns the board after these moves (White's three stones are captured on a 5x5 board): Black won.
BLACK_WINS = b"(;FF[4]GM[1]SZ[5]KM[0.5]RE[B+Resign];B[cc];W[aa];B[bb];W[ee];B[dd];W[ab];B[ba];W[de];B[ed])"


def test_winner_of_skips_what_says_nothing_about_the_position():
    assert playout_quality.winner_of("B+3.5") == 1 and playout_quality.winner_of("W+Resign") == 0
    for result in (None, "", "0", "Void", "B+Forfeit", "W+F", "?"):
        assert playout_quality.winner_of(result) is None


def test_variants_and_their_gamma_factors():
    assert playout_quality.parse_variant("light=light") == ("light", "light", 1.0, {})
    name, policy, temperature, factors = playout_quality.parse_variant("x=heavy:0.7:capture*100,self_atari*0.1")
    assert (name, policy, temperature, factors) == ("x", "heavy", 0.7, {"capture": 100.0, "self_atari": 0.1})
    for bad in ("light", "x=light:1:capture*2", "x=heavy:1:corner*2", "x=heavy:hot"):
        with pytest.raises(Exception, match="--variant"):
            playout_quality.parse_variant(bad)
    plain = playout_quality.variant_evaluator("heavy", 1.0, {}).tables
    boosted = playout_quality.variant_evaluator("heavy", 1.0, {"capture": 100.0}).tables
    assert np.asarray(boosted.capture)[0] == pytest.approx(float(np.asarray(plain.capture)[0]))
    np.testing.assert_allclose(np.asarray(boosted.capture)[1:], 100 * np.asarray(plain.capture)[1:], rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(boosted.pattern), np.asarray(plain.pattern))


def test_scores_and_game_bootstrap():
    y = np.array([1.0, 0.0, 1.0, 0.0])
    perfect = playout_quality.scores(np.array([1.0, 0.0, 1.0, 0.0]), y)
    assert perfect["brier"] == 0.0 and perfect["accuracy"] == 1.0
    coin = playout_quality.scores(np.full(4, 0.5), y)
    assert coin["brier"] == 0.25 and coin["accuracy"] == 0.5
    games = np.array(["a", "a", "b", "b"])
    low, high = playout_quality.bootstrap(games, lambda i: float(np.mean(y[i])), resamples=200)
    assert 0.0 <= low <= 0.5 <= high <= 1.0


def test_positions_and_a_run_comparing_policies(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    (games / "won.sgf").write_bytes(BLACK_WINS)
    (games / "white.sgf").write_bytes(BLACK_WINS.replace(b"RE[B+Resign]", b"RE[W+2.5]"))
    (games / "forfeit.sgf").write_bytes(BLACK_WINS.replace(b"RE[B+Resign]", b"RE[W+Forfeit]"))
    records = playout_quality.sgf_records([str(games)])
    found = playout_quality.positions(records, [2, 8, 40])
    assert sorted((p["number"], p["winner"]) for p in found) == [(2, 0), (2, 1), (8, 0), (8, 1)]
    out = tmp_path / "rows.jsonl"
    assert playout_quality.main(["--sgf", str(games), "--moves", "8", "--variant", "light=light",
                                 "--variant", "sharp=heavy:0.5", "--playouts", "16", "--batch", "4",
                                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["variant"] for r in rows] == ["light", "sharp"] and rows[1]["temperature"] == 0.5
    assert all(r["positions"] == 2 and r["games"] == 2 for r in rows)
    assert "brier_diff_ci95" in rows[1] and "brier_diff" not in rows[0]
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(k["winner"] for k in kept) == [0, 1]
    # The same position, labelled once with each winner: a policy that sees Black ahead names one of the two.
    for row in rows:
        p = np.array([k[row["variant"]] for k in kept])
        y = np.array([k["winner"] for k in kept])
        assert p.min() > 0.5 and row["accuracy"] == 0.5
        assert row["brier"] == pytest.approx(float(np.mean((p - y) ** 2)))
