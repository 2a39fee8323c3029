"""The referee's clock: Canadian byo-yomi and sudden death, and a loss on time."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.match import GameClock, TimeControl, play_game


def test_canadian_byoyomi_and_sudden_death_clocks():
    clock = GameClock(TimeControl(main=10, byoyomi=5, stones=2, grace=0.5))
    assert clock.spend(8) and clock.main_left == 2 and clock.allowance() == 7
    assert clock.gtp_time_left("black") == "time_left black 2 0"
    assert clock.spend(4)  # 2 s of main time, then 2 s of the first period (1 stone of 2 played)
    assert clock.in_byoyomi and clock.period_left == 3 and clock.stones_left == 1
    assert clock.spend(3.4)  # over by 0.4 s: within the grace; the period's stones are done, a new period starts
    assert clock.period_left == 5 and clock.stones_left == 2
    assert not clock.spend(5.6)
    sudden = GameClock(TimeControl(main=2, grace=0.1))
    assert sudden.spend(1.5) and not sudden.spend(0.7)
    assert TimeControl.parse("0:5:1") == TimeControl(0, 5, 1) and TimeControl.parse("60").gtp_settings() == \
        "time_settings 60 0 0"
    for bad in ("", "a:b", "1:2:3:4", "0", "-1"):
        with pytest.raises(ValueError):
            TimeControl.parse(bad)


def test_an_engine_over_its_clock_loses_on_time(fake):
    record = play_game(fake("slow"), fake("pass"), size=5, komi=0.5,
                       time_control=TimeControl(main=0.6, grace=0.1))
    assert record["result"] == "W+Time" and record["forfeit"] == "black" and record["moves"] == 2
