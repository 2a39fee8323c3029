"""Statistics of game results: Wilson intervals of a win rate, Newcombe intervals of a difference of two, and
Bradley-Terry Elo ratings with intervals from a round robin."""

from __future__ import annotations

import math


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(wins_a: float, games_a: int, wins_b: float, games_b: int,
                        z: float = 1.96) -> tuple[float, float, float]:
    """(difference, low, high): the win rate of a minus that of b, with Newcombe's hybrid score interval (his
    method 10, built from the two Wilson intervals; independent samples)."""
    if not (games_a and games_b):
        raise ValueError("both samples need at least one game")
    p_a, p_b = wins_a / games_a, wins_b / games_b
    low_a, high_a = wilson_interval(wins_a, games_a, z)
    low_b, high_b = wilson_interval(wins_b, games_b, z)
    d = p_a - p_b
    return (d, d - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2),
            d + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2))


ELO_METHOD = ("Bradley-Terry maximum a posteriori (Hunter's MM iterations), a draw counted as half a win, one "
              "virtual draw per pairing as the prior (BayesElo's; it keeps a perfect score finite); 95% intervals "
              "from the normal approximation (inverse of the posterior's information matrix); Elo relative to the "
              "mean of the players, or to the anchor player rated 0")


def bradley_terry_elo(names: list[str], games: list[tuple], pairs: list[tuple], anchor: str | None = None,
                      z: float = 1.96) -> dict:
    """{name: {"elo": rating, "elo_ci95": [low, high]}} from ``games`` (black, white, winner name or None for
    a draw) by ``ELO_METHOD``; ``pairs``: the pairings that get a virtual draw (all of the tournament's, so
    ratings exist before every pair has met)."""
    import numpy as np

    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    score = np.zeros((n, n))  # score[i, j]: what i scored against j (wins + half the draws), prior included
    for a, b in pairs:
        score[index[a], index[b]] += 0.5
        score[index[b], index[a]] += 0.5
    for black, white, winner in games:
        i, j = index[black], index[white]
        if winner is None:
            score[i, j] += 0.5
            score[j, i] += 0.5
        else:
            winner_i, loser_i = (i, j) if winner == black else (j, i)
            score[winner_i, loser_i] += 1.0
    played = score + score.T
    gamma = np.ones(n)
    for _ in range(100_000):  # Hunter (2004): gamma_i = W_i / sum_j n_ij / (gamma_i + gamma_j)
        update = score.sum(1) / (played / (gamma[:, None] + gamma[None, :])).sum(1)
        update /= np.exp(np.mean(np.log(update)))
        done = np.max(np.abs(np.log(update) - np.log(gamma))) < 1e-12
        gamma = update
        if done:
            break
    theta = np.log(gamma)
    p = gamma[:, None] / (gamma[:, None] + gamma[None, :])
    info = -played * p * (1 - p)  # the negative log-posterior's Hessian in theta
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(1))
    cov = np.zeros((n, n))
    cov[1:, 1:] = np.linalg.inv(info[1:, 1:])  # theta_0 held at 0: the model fixes only differences
    ref = np.eye(n)[index[anchor]] if anchor is not None else np.full(n, 1.0 / n)
    relative = np.eye(n) - ref[None, :]  # theta - theta_anchor, or theta - mean(theta)
    scale = 400.0 / math.log(10.0)
    elo = scale * (relative @ theta)
    stdev = scale * np.sqrt(np.maximum(0.0, np.diag(relative @ cov @ relative.T)))
    return {name: {"elo": round(float(elo[i]), 1),
                   "elo_ci95": [round(float(elo[i] - z * stdev[i]), 1), round(float(elo[i] + z * stdev[i]), 1)]}
            for name, i in index.items()}
