"""A calibration of the playouts' score: the final counted score of real games regressed on the search's estimate.

The analysis server's raw ``scoreLead`` is a mean of playouts' final scores.  Playouts misjudge: on the empty
19x19 board at komi 7.5 their mean is about -3.5 (issue 58), and a lead they see is not the lead strong players
keep.  ``fit`` learns, from positions of the TRAINING split's games that ended in a counted score, the linear
prediction of the game's final difference (Black's area minus White's, before komi) from the playouts' estimate
of that difference and the move number::

    final ~ intercept(t) + slope(t) * (lead + komi),   intercept(t) = c0 + c1 t,  slope(t) = s0 + s1 t,
    t = min(move, 300) / 100

and ``calibrate`` turns an estimate into ``intercept(t) + slope(t) * (lead + komi) - komi``.  The map is affine in
the lead for a given position, so the root's calibrated lead is still the visit-weighted mean of its moves', and a
komi point is exactly a point of lead.  The shipped parameters (``score_model.json`` next to this module, one entry
per board size; other sizes are left as they are) are written by ``jaxgo eval score-fit`` from its recorded rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PARAMETERS_FILE = Path(__file__).with_name("score_model.json")
MAX_MOVE = 300  # moves beyond this are treated as this one


def move_feature(move_number) -> np.ndarray:
    """float t = min(move, MAX_MOVE) / 100 for an int (or array) of moves played."""
    return np.minimum(np.asarray(move_number, np.float64), MAX_MOVE) / 100.0


def design(lead, komi, move_number) -> np.ndarray:
    """float [n, 4] regressors of the fit: 1, t, x, t * x with x = lead + komi (float [n] each)."""
    x = np.asarray(lead, np.float64) + np.asarray(komi, np.float64)
    t = move_feature(move_number) * np.ones_like(x)
    return np.stack([np.ones_like(x), t, x, t * x], axis=1)


SLOPES = ("linear", "constant", "one")


def fit(lead, komi, move_number, final, black_won=None, slope: str = "linear") -> dict:
    """Maximum-likelihood parameters {"intercept": [c0, c1], "slope": [s0, s1], "sigma", "positions", "counted"}
    of the final difference (Black - White, before komi) given the search's ``lead`` float [n] (Black - White -
    komi), ``komi`` and ``move_number`` [n]: normal with mean ``intercept(t) + slope(t) * (lead + komi)`` and one
    standard deviation sigma.  ``final`` float [n] is the counted difference, NaN for a game won by resignation,
    where only the winner is known (``black_won`` bool [n]): its likelihood is the chance of that sign (censored
    data, so resigned games, the decided ones, count without a margin).  ``slope`` (``SLOPES``): ``linear`` in t,
    ``constant`` (s1 = 0) or ``one`` (s0 = 1, s1 = 0: a correction of the playouts' bias by move number only)."""
    if slope not in SLOPES:
        raise ValueError(f"slope {slope!r}: one of {SLOPES}")
    from scipy.optimize import minimize
    from scipy.stats import norm

    a = design(lead, komi, move_number)
    y = np.asarray(final, np.float64)
    counted = np.isfinite(y)
    if counted.sum() < 8:
        raise ValueError(f"fit needs at least 8 counted positions, got {int(counted.sum())}")
    sign = np.where(np.asarray(black_won if black_won is not None else y > 0, bool), 1.0, -1.0)
    offset = np.asarray(komi, np.float64) * np.ones(len(y))

    def coefficients(theta):
        if slope == "linear":
            return theta[:4]
        return np.array([theta[0], theta[1], theta[2] if slope == "constant" else 1.0, 0.0])

    def loss(theta):
        mean, sigma = a @ coefficients(theta), np.exp(theta[-1])
        total = norm.logpdf(y[counted], mean[counted], sigma).sum()
        total += norm.logcdf(sign[~counted] * (mean[~counted] - offset[~counted]) / sigma).sum()
        return -total

    if slope == "one":
        start, *_ = np.linalg.lstsq(a[counted][:, :2], y[counted] - a[counted][:, 2], rcond=None)
    else:
        columns = 4 if slope == "linear" else 3
        start, *_ = np.linalg.lstsq(a[counted][:, :columns], y[counted], rcond=None)
    sigma0 = float((y[counted] - a[counted] @ coefficients(np.append(start, 0.0))).std())
    theta = np.append(start, np.log(max(sigma0, 1e-3)))
    theta = minimize(loss, theta, method="Nelder-Mead",
                     options={"maxiter": 40000, "maxfev": 40000, "xatol": 1e-6, "fatol": 1e-8}).x
    coef = coefficients(theta)
    return {"intercept": [round(float(coef[0]), 4), round(float(coef[1]), 4)],
            "slope": [round(float(coef[2]), 4), round(float(coef[3]), 4)],
            "sigma": round(float(np.exp(theta[-1])), 3), "positions": int(len(y)), "counted": int(counted.sum()),
            "log_likelihood": round(float(-loss(theta)), 3)}


def log_likelihood(params: dict, lead, komi, move_number, final, black_won) -> float:
    """The log-likelihood of outcomes (as in ``fit``: counted ``final`` or NaN and the winner) under ``params``."""
    from scipy.stats import norm

    mean = predict_final(params, lead, komi, move_number)
    y = np.asarray(final, np.float64)
    counted = np.isfinite(y)
    sign = np.where(np.asarray(black_won, bool), 1.0, -1.0)
    komi = np.asarray(komi, np.float64) * np.ones(len(y))
    sigma = params["sigma"]
    return float(norm.logpdf(y[counted], mean[counted], sigma).sum()
                 + norm.logcdf(sign[~counted] * (mean[~counted] - komi[~counted]) / sigma).sum())


def predict_final(params: dict, lead, komi, move_number) -> np.ndarray:
    """float [n] the predicted final difference (before komi) by ``params`` (one board size's entry)."""
    c0, c1 = params["intercept"]
    s0, s1 = params["slope"]
    a = design(lead, komi, move_number)
    return a @ np.array([c0, c1, s0, s1])


def line_at(params: dict, move_number: int) -> tuple[float, float]:
    """(intercept, slope) of the calibration line after ``move_number`` moves."""
    t = float(move_feature(move_number))
    c0, c1 = params["intercept"]
    s0, s1 = params["slope"]
    return c0 + c1 * t, s0 + s1 * t


def calibrate(params: dict | None, lead, komi: float, move_number: int) -> np.ndarray:
    """float [A] the calibrated lead (Black - White - komi) of raw ``lead`` float [A] (NaN stays NaN) in a position
    after ``move_number`` moves; ``params`` None leaves ``lead`` as it is."""
    lead = np.asarray(lead, np.float64)
    if params is None:
        return lead.copy()
    intercept, slope = line_at(params, move_number)
    return intercept + slope * (lead + komi) - komi


def uncalibrate(params: dict | None, lead, komi: float, move_number: int) -> np.ndarray:
    """The inverse of ``calibrate``: the raw lead float [A] that a calibrated ``lead`` came from."""
    lead = np.asarray(lead, np.float64)
    if params is None:
        return lead.copy()
    intercept, slope = line_at(params, move_number)
    return (lead + komi - intercept) / slope - komi


def load_parameters(path=None) -> dict:
    """{board size (int): parameters} from ``path`` (default the shipped ``PARAMETERS_FILE``); {} when absent."""
    path = Path(path or PARAMETERS_FILE)
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {int(size): entry for size, entry in data.get("sizes", {}).items()}


def save_parameters(params: dict, path, command: str) -> None:
    """Write {board size: parameters} to ``path`` as JSON, with the ``command`` that made them."""
    data = {"command": command, "sizes": {str(size): entry for size, entry in sorted(params.items())}}
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
