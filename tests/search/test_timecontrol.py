"""The GTP clock: budgets in main time and byo-yomi, no limit, bad numbers refused."""

import math

import pytest

from jaxgo.search.timecontrol import MIN_SECONDS, Clock


def test_no_settings_means_no_limit():
    clock = Clock()
    assert clock.move_seconds(1, 81) is None
    clock.set(0, 10, 0)  # byo-yomi time with no stones: GTP's "no time limit"
    assert clock.move_seconds(1, 81) is None


def test_main_time_is_shared_over_the_expected_moves():
    clock = Clock()
    clock.set(300, 0, 0)
    assert clock.move_seconds(1, 81) == pytest.approx(300 / 40.5)
    assert clock.move_seconds(1, 10) == pytest.approx(300 / 20)
    clock.set_left(1, 30, 0)
    assert clock.move_seconds(1, 10) == pytest.approx(30 / 20)
    assert clock.move_seconds(-1, 10) == pytest.approx(300 / 20)  # the other colour keeps its own time


def test_byo_yomi_spends_most_of_the_period_per_stone():
    clock = Clock()
    clock.set(0, 30, 5)
    assert clock.move_seconds(1, 81) == pytest.approx(0.8 * 30 / 5)
    clock.set_left(1, 0.01, 1)
    assert clock.move_seconds(1, 81) == MIN_SECONDS


def test_bad_numbers_are_refused():
    clock = Clock()
    for args in ((math.inf, 0, 0), (-1, 0, 0), (0, math.nan, 1), (10, 5, -1)):
        with pytest.raises(ValueError):
            clock.set(*args)
    with pytest.raises(ValueError):
        clock.set_left(1, math.inf, 0)
