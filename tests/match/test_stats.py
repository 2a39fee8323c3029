"""Match statistics: Wilson and Newcombe intervals, Bradley-Terry Elo."""

from __future__ import annotations

import math
import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.match import bradley_terry_elo, difference_interval, wilson_interval


def test_wilson_interval():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


@pytest.mark.parametrize("a, b, low, high", [((56, 70), (48, 80), 0.0524, 0.3339), ((9, 10), (3, 10), 0.1705, 0.8090),
                                             ((5, 56), (0, 29), -0.0381, 0.1926)])
def test_difference_interval_matches_newcombes_table(a, b, low, high):
    """Newcombe (Stat. Med. 1998), Table II, method 10: the hybrid score interval of p1 - p2."""
    d, lo, hi = difference_interval(*a, *b)
    assert d == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_bradley_terry_of_two_players_has_its_closed_form():
    games = [("a", "b", "a")] * 2 + [("b", "a", "a"), ("b", "a", "b")]  # a scores 3 of 4, colours mixed
    ratings = bradley_terry_elo(["a", "b"], games, [("a", "b")])
    p = (3 + 0.5) / (4 + 1)  # one virtual draw: half a win each
    difference = 400 * math.log10(p / (1 - p))
    assert ratings["a"]["elo"] == pytest.approx(difference / 2, abs=0.1) and ratings["b"]["elo"] == \
        pytest.approx(-difference / 2, abs=0.1)
    half_width = 1.96 * (400 / math.log(10)) / math.sqrt(5 * p * (1 - p)) / 2  # sd of the difference, halved
    low, high = ratings["a"]["elo_ci95"]
    assert low == pytest.approx(difference / 2 - half_width, abs=0.2) and high == pytest.approx(
        difference / 2 + half_width, abs=0.2)
    anchored = bradley_terry_elo(["a", "b"], games, [("a", "b")], anchor="b")
    assert anchored["b"]["elo"] == 0 and anchored["a"]["elo"] == pytest.approx(difference, abs=0.1)


def test_perfect_scores_get_finite_ordered_ratings():
    names = ["weak", "middle", "strong"]
    games = [("weak", "middle", "middle"), ("middle", "strong", "strong"), ("strong", "weak", "strong"),
             ("weak", "middle", None)]
    ratings = bradley_terry_elo(names, games, [("weak", "middle"), ("weak", "strong"), ("middle", "strong")])
    elo = [ratings[n]["elo"] for n in names]
    assert elo[0] < elo[1] < elo[2] and abs(sum(elo)) < 0.5 and all(map(math.isfinite, elo))
    assert all(r["elo_ci95"][0] < r["elo"] < r["elo_ci95"][1] for r in ratings.values())
