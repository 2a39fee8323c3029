"""``jaxgo eval analysis --trust``: KaTrain's points lost of played and random moves, AUC, the empty-board series."""

import random

import numpy as np
import pytest

from jaxgo.eval import trust
from jaxgo.go.sgf import load_sgf

GAME = b"(;SZ[9]KM[7.5];B[ee];W[cc];B[gc];W[cg];B[gg];W[ec];B[ed];W[dd];B[fc];W[eb];B[ce];W[de];B[df];W[bf])"


def test_auc_is_the_chance_a_random_move_is_shown_losing_more():
    assert trust.auc([0.0, 1.0], [2.0, 3.0]) == 1.0
    assert trust.auc([2.0, 3.0], [0.0, 1.0]) == 0.0
    assert trust.auc([1.0], [1.0]) == 0.5  # a tie counts half
    assert trust.auc([0.0, 2.0], [1.0, 3.0]) == 0.75
    low, high = trust.bootstrap_auc(np.arange(20.0), np.arange(20.0) + 5, draws=200)
    assert low <= trust.auc(np.arange(20.0), np.arange(20.0) + 5) <= high and high <= 1.0


def test_points_lost_is_katrains_parent_minus_child_for_the_mover():
    parent, child = {"rootInfo": {"scoreLead": 2.0}}, {"rootInfo": {"scoreLead": -3.0}}
    assert trust.points_lost(parent, child, "B") == 5.0  # Black's lead fell by 5 after Black's move
    assert trust.points_lost(parent, child, "W") == -5.0  # ... which is a gain for White


def test_samples_draw_a_move_and_a_random_legal_other_one():
    """A 9x9 game: one sample at a move of the window, the played move the record's, the random one a legal
    empty point other than it (its colour the mover's)."""
    record = load_sgf(GAME)
    samples = trust.samples_of([("g", record)], 5, (4, 10), 7.5, random.Random(3))
    (sample,) = samples
    number = int(sample.ident.split("@")[1])
    assert 4 <= number <= 10 and sample.moves == record.gtp_moves()[:number]
    assert sample.played == record.gtp_moves()[number]
    assert sample.random_move[0] == sample.played[0] and sample.random_move[1] != sample.played[1]
    assert sample.random_move[1] not in {vertex for _, vertex in sample.moves}
    assert trust.samples_of([("g", record)], 5, (40, 60), 7.5, random.Random(3)) == []  # game too short


def test_katrain_query_has_katrains_defaults():
    query = trust.katrain_query("q", 19, 7.5, [["B", "D4"]])
    assert query["maxVisits"] == 500 and query["overrideSettings"]["maxTime"] == 8.0
    assert query["overrideSettings"]["reportAnalysisWinratesAs"] == "BLACK" and query["rules"] == "chinese"
    assert "maxTime" not in trust.katrain_query("q", 9, 7.5, [], seconds=None)["overrideSettings"]


@pytest.mark.slow
def test_nine_by_nine_samples_come_from_the_refereed_games():
    samples = trust.nine_samples(3, random.Random(0))
    assert len(samples) == 3 and all(s.size == 9 and 8 <= len(s.moves) <= 40 for s in samples)


def test_figures_before_the_calibration_come_from_the_same_answers():
    """A fake server whose leads are a known calibration of known raw leads: with ``undo`` its inverse, the
    figures before the calibration are those of the raw leads, and the shown ones are those of the calibrated."""
    from jaxgo.learn import score_model

    params = {"intercept": [4.0, 0.0], "slope": [0.5, 0.0], "sigma": 16.0}
    rng = random.Random(3)
    samples = [trust.Sample(f"s{i}", 19, 7.5, [["B", "D4"], ["W", "Q16"]] * 10, ["B", "C3"], ["B", "A1"])
               for i in range(12)]
    raw = {}

    def ask(query):
        lead = raw.setdefault(query["id"], rng.uniform(-20, 20))
        shown = float(score_model.calibrate(params, lead, query["komi"], len(query["moves"])))
        return {"rootInfo": {"scoreLead": shown, "visits": 500}}, 0.1

    def undo(lead, komi, move_number, size):
        return float(score_model.uncalibrate(params, lead, komi, move_number))

    lines = []
    out = trust.measure_samples(ask, samples, lines.append, 500, 8.0, undo=undo)
    played = [raw[f"s{i}:parent"] - raw[f"s{i}:played"] for i in range(12)]
    other = [raw[f"s{i}:parent"] - raw[f"s{i}:random"] for i in range(12)]
    assert out["before_calibration"]["auc"] == round(trust.auc(played, other), 3)
    assert out["before_calibration"]["median_played_lost"] == pytest.approx(np.median(played), abs=0.01)
    assert out["median_played_lost"] == pytest.approx(0.5 * np.median(played), abs=0.02)  # slope 0.5
    assert out["auc"] == out["before_calibration"]["auc"]  # an affine map with a positive slope keeps the order
    assert lines[0]["leads"]["parent_raw"] == pytest.approx(raw["s0:parent"], abs=0.01)
