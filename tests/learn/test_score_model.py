"""The score calibration (jaxgo.learn.score_model) and its fit from recorded rows (jaxgo.eval.score_fit)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jaxgo.eval import score_fit
from jaxgo.learn import score_model

ROOT = Path(__file__).resolve().parents[2]


def synthetic(n: int, seed: int = 0):
    """Positions whose final difference is 3 + 0.5 t + (0.4 + 0.2 t) x + N(0, 10), x = lead + komi; a third of
    them resigned (winner only)."""
    rng = np.random.default_rng(seed)
    move = rng.integers(0, 200, n)
    komi = np.full(n, 6.5)
    lead = rng.normal(0.0, 20.0, n) - komi
    t = move / 100
    final = 3 + 0.5 * t + (0.4 + 0.2 * t) * (lead + komi) + rng.normal(0.0, 10.0, n)
    black_won = final - komi > 0
    final = np.where(rng.random(n) < 1 / 3, np.nan, final)
    return lead, komi, move, final, black_won


def test_fit_recovers_known_parameters_with_resigned_games_censored():
    params = score_model.fit(*synthetic(3000))
    assert params["intercept"] == pytest.approx([3.0, 0.5], abs=0.8)
    assert params["slope"] == pytest.approx([0.4, 0.2], abs=0.05)
    assert params["sigma"] == pytest.approx(10.0, abs=0.6)
    assert params["counted"] < params["positions"] == 3000


def test_fit_with_the_slope_held_at_one_only_moves_the_intercept():
    lead, komi, move, final, black_won = synthetic(500)
    params = score_model.fit(lead, komi, move, final, black_won, slope="one")
    assert params["slope"] == [1.0, 0.0]
    with pytest.raises(ValueError, match="slope"):
        score_model.fit(lead, komi, move, final, black_won, slope="cubic")
    with pytest.raises(ValueError, match="at least 8"):
        score_model.fit(lead[:5], komi[:5], move[:5], final[:5], black_won[:5])


def test_calibrate_is_affine_per_position_and_uncalibrate_inverts_it():
    params = {"intercept": [1.5, -0.5], "slope": [0.6, 0.1], "sigma": 12.0}
    lead = np.array([-10.0, 0.0, np.nan, 25.0])
    out = score_model.calibrate(params, lead, 7.5, 50)
    assert np.isnan(out[2])
    assert out[[0, 1, 3]] == pytest.approx((1.5 - 0.25) + 0.65 * (lead[[0, 1, 3]] + 7.5) - 7.5)
    assert score_model.uncalibrate(params, out, 7.5, 50)[[0, 1, 3]] == pytest.approx(lead[[0, 1, 3]])
    weights = np.array([3.0, 1.0, 0.0, 6.0])  # a weighted mean of moves maps to the map of the weighted mean
    ok = weights > 0
    mean = (weights[ok] * lead[ok]).sum() / weights[ok].sum()
    assert (weights[ok] * out[ok]).sum() / weights[ok].sum() == pytest.approx(score_model.calibrate(params, mean,
                                                                                                     7.5, 50))
    assert score_model.calibrate(None, lead[:2], 7.5, 50) == pytest.approx(lead[:2])  # no parameters: unchanged
    # komi: the same position (the same raw difference) at one point less of komi leads by one point more
    assert score_model.calibrate(params, -2.0, 6.5, 0) - score_model.calibrate(params, -3.0, 7.5, 0) == \
        pytest.approx(1.0)


def test_outcomes_take_resigned_games_and_absurd_counts_as_the_winner_only():
    rows = [{"final_lead": 12.5, "komi": 6.5, "winner": "B"}, {"final_lead": None, "komi": 6.5, "winner": "W"},
            {"final_lead": -151.5, "komi": 6.5, "winner": "W"}]
    final, black_won = score_fit.outcomes(rows)
    assert final[0] == 19.0 and np.isnan(final[1:]).all() and black_won.tolist() == [True, False, False]
    assert score_fit.final_lead("W+3.5") == -3.5 and score_fit.final_lead("B+R") is None
    assert score_fit.resigned_winner("W+Resign") == "W" and score_fit.resigned_winner("B+12.5") is None


def test_the_shipped_parameters_are_reproduced_by_their_command():
    """score_model.json names the command that wrote it; fitting its recorded rows again gives the same figures."""
    data = json.loads(score_model.PARAMETERS_FILE.read_text())
    command = data["command"].split()
    assert command[:4] == ["jaxgo", "eval", "score-fit", "fit"]
    slope = command[command.index("--slope") + 1] if "--slope" in command else "linear"
    paths = [ROOT / arg for arg in command[4:] if not arg.startswith("--") and arg != slope]
    refit = score_fit.fit_rows(score_fit.read_rows(paths), slope)
    assert {str(size): entry for size, entry in refit.items()} == data["sizes"]
