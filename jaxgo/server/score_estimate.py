"""The score a response reports for each root move (``scoreLead``), from the playouts through it.

A playout's final score on 19x19 has a standard deviation of 57-84 points, so a move's raw mean over its n
playouts is good to about 67 / sqrt(n) points: 7 at 100 visits, 15 at 20.  Two moves of equal worth, side by
side, could then show 30 points apart.  ``shrunk_means`` (``EngineConfig.score_estimate = "shrunk"``, the
default) is the empirical-Bayes estimate of each move's mean: the moves' true means are taken as spread around
the root's mean with a variance tau^2 estimated from the data (the spread of the moves' raw means less their
sampling variance), and each move's mean is pulled toward the root's by its sampling variance s^2 / n against
tau^2 -- a move with few playouts says little and stays near the root's figure, one with many keeps its own.  The
root's ``scoreLead`` stays the visit-weighted mean of its moves' (as in KataGo).

The playouts' means are also biased: on the empty 19x19 board at komi 7.5 they read about -3.5, and the leads they
see are not the leads strong players keep.  ``calibrated`` (``jaxgo serve --score-estimate calibrated``) maps
the shrunk means through
``jaxgo.learn.score_model``: the final counted score of the training split's games regressed on the search's
estimate and the move number (an affine map of each position's leads, so the root stays the visit-weighted mean of
its moves'; board sizes without shipped parameters are left shrunk).  It halves every difference (KaTrain's points
lost too), which is why it is not the default: the 19x19 1-1 first move is then shown losing 4.4 points more than
the 4-4 point, not the 5 that tests/server/test_katrain.py asks.

Estimates: ``SCORE_ESTIMATES`` -- ``mean`` (the raw playout means), ``shrunk`` and ``calibrated``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxgo.learn import score_model

SCORE_ESTIMATES = ("mean", "shrunk", "calibrated")


@dataclasses.dataclass(frozen=True)
class Position:
    """What the calibration needs to know of the analysed position."""

    size: int
    komi: float
    move_number: int  # moves played before it


@functools.lru_cache(maxsize=1)
def shipped_parameters() -> dict:
    """{board size: parameters} of ``jaxgo.learn.score_model``'s shipped file, read once."""
    return score_model.load_parameters()


def shrunk_means(mean: np.ndarray, stdev: np.ndarray, count: np.ndarray) -> np.ndarray:
    """float [A]: each move's mean final score pulled toward the visit-weighted mean of all moves by its
    uncertainty (empirical Bayes, method of moments).

    ``mean`` and ``stdev`` float [A] (NaN where unplayed), ``count`` float [A] playouts per move.  With tau^2 the
    variance of the moves' true means around the root's m, and s^2 the pooled variance of one playout's score:
    ``m + tau^2 / (tau^2 + s^2 / n) * (mean - m)``.  NaN stays NaN; one played move keeps its mean.
    """
    mean, stdev, count = (np.asarray(x, np.float64) for x in (mean, stdev, count))
    played = (count > 0) & np.isfinite(mean)
    if played.sum() < 2:
        return mean.copy()
    n, x, s = count[played], mean[played], stdev[played]
    total = n.sum()
    centre = float((n * x).sum() / total)
    noise = float((n * np.square(s)).sum() / total)  # pooled variance of one playout's score
    sampling = noise / n  # [k] variance of each raw mean
    spread = float((n * np.square(x - centre)).sum() / total)  # visit-weighted variance of the raw means
    tau2 = max(0.0, spread - float((n * sampling).sum() / total))
    out = mean.copy()
    out[played] = centre + tau2 / (tau2 + sampling + 1e-12) * (x - centre)
    return out


def calibrated(estimate: str, lead, position: Position | None) -> np.ndarray:
    """float [A] ``lead`` float [A] (Black - White - komi) through the shipped calibration of ``position``'s board
    size when ``estimate`` is ``calibrated`` (and ``position`` is given); otherwise as it is."""
    if estimate != "calibrated" or position is None:
        return np.asarray(lead, np.float64)
    params = shipped_parameters().get(position.size)
    return score_model.calibrate(params, lead, position.komi, position.move_number)


def move_scores(estimate: str, mean: np.ndarray, stdev: np.ndarray, count: np.ndarray,
                position: Position | None = None) -> np.ndarray:
    """float [A] the reported score of each root move by ``estimate`` (one of ``SCORE_ESTIMATES``) in
    ``position`` (needed by ``calibrated``)."""
    if estimate == "mean":
        return np.asarray(mean, np.float64)
    if estimate in ("shrunk", "calibrated"):
        return calibrated(estimate, shrunk_means(mean, stdev, count), position)
    raise ValueError(f"score estimate {estimate!r}: one of {SCORE_ESTIMATES}")


def root_score(scores: np.ndarray, visits: np.ndarray, fallback: float) -> float:
    """The root's score: the visit-weighted mean of its moves' ``scores`` float [A] (``visits`` float [A]);
    ``fallback`` when no move has a score."""
    visits = np.asarray(visits, np.float64)
    ok = (visits > 0) & np.isfinite(scores)
    if not ok.any():
        return float(fallback)
    return float((visits[ok] * np.asarray(scores)[ok]).sum() / visits[ok].sum())
