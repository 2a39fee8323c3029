"""``jaxgo.server.round_sums``: a wave's playout values in compiled calls, as each search's own backup computes
them."""

import math

import numpy as np

from jaxgo.search import backup, komi
from jaxgo.server import round_sums


def former_playout_values(winner, final, offsets, counts, extra, utility, scale) -> np.ndarray:
    """The numpy version the compiled one replaced (``compiled_round.playout_values`` until 2026-12-07), over
    every row of the batch, with the searches' parameters as arrays."""
    rows = len(winner)
    extra_rows, utility_rows, scale_rows = np.zeros(rows), np.zeros(rows), np.ones(rows)
    for t, (at, n) in enumerate(zip(offsets, counts)):
        extra_rows[at:at + n], utility_rows[at:at + n], scale_rows[at:at + n] = extra[t], utility[t], scale[t]
    score = np.asarray(final, np.float64)
    if extra_rows.any():
        score = score - extra_rows[:, None]
        won = np.where(extra_rows[:, None] != 0, np.sign(score), winner)
    else:
        won = winner
    win = (np.asarray(won, np.float64) + 1.0) / 2.0
    if not utility_rows.any():
        return win
    u = utility_rows[:, None]
    margin = 0.5 + np.arctan(score / scale_rows[:, None]) / math.pi
    return np.where(u != 0, (1.0 - u) * win + u * margin, win)


def test_playout_values_equal_the_former_numpy_and_each_searchs_own():
    rng = np.random.default_rng(5)
    for trial in range(40):
        tasks = int(rng.integers(1, 7))
        counts = rng.integers(0, 9, tasks)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rows = int(counts.sum()) + int(rng.integers(0, 5))  # padding rows after the searches'
        lpl = int(rng.integers(1, 5))
        final = rng.normal(0.0, 20.0, (rows, lpl)).astype(np.float32)
        final[rng.random((rows, lpl)) < 0.1] = 0.0  # draws, and scores that extra komi turns to 0
        final[rng.random((rows, lpl)) < 0.1] = 0.5
        winner = np.sign(final).astype(np.int8)
        extra = rng.choice([0.0, 0.0, 0.5, -1.5, 3.0], tasks) if trial % 3 else np.zeros(tasks)
        utility = rng.choice([0.0, 0.1, 0.3], tasks) if trial % 4 else np.zeros(tasks)
        scale = rng.choice([5.0, 9.0, 19.0], tasks)
        value = round_sums.playout_values(winner, final, offsets, counts, extra, utility, scale)
        former = former_playout_values(winner, final, offsets, counts, extra, utility, scale)
        for t, (at, n) in enumerate(zip(offsets, counts)):
            rows_t = slice(at, at + n)
            assert np.array_equal(value[rows_t], former[rows_t])  # bit for bit
            won, score = komi.shifted_results(winner[rows_t], final[rows_t], extra[t])
            own = backup.playout_values(won, score, utility[t], scale[t])  # TreeSearch.backup_leaves'
            assert np.array_equal(value[rows_t], own)
