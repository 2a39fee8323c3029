"""Bounds of the settings a client may change (``jaxgo.server.settings.check_setting``), read from each field's
schema (``jaxgo.search.config.OPTIONS``)."""

import pytest

from jaxgo.search.config import OPTIONS
from jaxgo.server.settings import SettingError, check_setting


@pytest.mark.parametrize("key, value, message", [
    ("uct_c", -1, "uct_c: -1 is out of range [0, 100]"),
    ("playout_temperature", 0.0, "playout_temperature: 0.0 is out of range (0, 100]"),  # the lowest refused
    ("n_expand", 2.5, "n_expand: expected an integer, got 2.5"),
    ("threads", 2000, "threads: 2000 is out of range [0, 1024]"),
    ("early_stop", "maybe", "early_stop: expected true or false, got 'maybe'"),
    ("uct_c", None, "uct_c: a value is required"),
    ("bias_c2", float("inf"), "bias_c2: expected a number"),
])
def test_refused_values_name_the_setting_and_its_range(key, value, message):
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace("[", r"\[")) as caught:
        check_setting(key, value)
    assert caught.value.key == key


def test_accepted_values_come_back_typed():
    assert check_setting("n_expand", 3.0) == 3 and type(check_setting("n_expand", 3.0)) is int
    assert check_setting("uct_c", 1) == 1.0 and type(check_setting("uct_c", 1)) is float
    assert check_setting("late_fill", "AUTO") is None and check_setting("gammas", None) is None
    assert check_setting("early_stop", "0", text=True) is False and check_setting("early_stop", True) is True
    assert check_setting("strategy", "uct") == "uct"  # words: SearchConfig checks them


def test_every_bounded_field_accepts_its_bounds_and_refuses_beyond():
    for name, spec in OPTIONS.items():
        if spec.bounds is None:
            continue
        low, high = spec.bounds
        assert check_setting(name, high) == high
        with pytest.raises(SettingError, match=name):
            check_setting(name, high * 2 + 1)
        if spec.low_open:
            with pytest.raises(SettingError, match=name):
                check_setting(name, low)
        else:
            assert check_setting(name, low) == low
