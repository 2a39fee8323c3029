"""SearchConfig: defaults, command-line options, overrideSettings."""

import argparse

import pytest

from jaxgo.search import config as search_config
from jaxgo.search.config import SearchConfig


def test_defaults_are_the_strongest_measured_configuration():
    config = SearchConfig()
    assert (config.strategy, config.playout_policy, config.bias_c2, config.prior_even) == ("rave", "heavy", 3.0, 0.0)
    assert config.late_playout_policy == "rules" and config.score_utility == 0.1
    assert config.uses_gammas and SearchConfig(bias_c2=0.0).uses_gammas  # the pattern prior is on on every board
    # by board size: the pattern prior's weight, progressive widening, and where the rule playouts take over
    assert (config.prior_pattern, config.widen_playouts, config.late_fill) == (None, None, None)
    for size, expected in ((9, (20.0, 0.0, 0.45)), (13, (20.0, 0.0, 0.45)), (19, (500.0, 40.0, 0.0))):
        sized = config.for_size(size)
        assert (sized.prior_pattern, sized.widen_playouts, sized.late_fill) == expected
        assert sized.for_size(size) is sized  # nothing left to set


def test_board_size_defaults_leave_given_values_alone():
    given = SearchConfig(prior_pattern=20.0, widen_playouts=0.0, late_fill=0.45, prior_tactics=1.5)
    assert given.for_size(19) is given
    half = SearchConfig(widen_playouts=10.0).for_size(19)
    assert (half.prior_pattern, half.widen_playouts) == (500.0, 10.0)
    # overrides and settings take auto / None back to the board-size default; a negative widening is refused
    config, ignored = given.with_overrides({"prior_pattern": "auto", "widen_playouts": None})
    assert not ignored and (config.prior_pattern, config.widen_playouts) == (None, None)
    with pytest.raises(ValueError, match="widen_playouts"):
        SearchConfig(widen_playouts=-1.0)
    parser = argparse.ArgumentParser()
    search_config.add_arguments(parser)
    assert search_config.from_args(parser.parse_args(["--prior", "0", "auto"])).prior_pattern is None
    assert search_config.from_args(parser.parse_args(["--prior", "0", "30"])).prior_pattern == 30.0
    with pytest.raises(SystemExit):
        parser.parse_args(["--prior", "0", "lots"])


def test_command_line_round_trip_and_help_shows_defaults():
    parser = argparse.ArgumentParser()
    search_config.add_arguments(parser)
    assert search_config.from_args(parser.parse_args([])) == SearchConfig()
    args = parser.parse_args(["--playout-policy", "light", "--bias", "0", "--prior", "20", "40", "--leaves", "8"])
    config = search_config.from_args(args)
    assert (config.playout_policy, config.bias_c2, config.prior_even, config.prior_pattern,
            config.leaves_per_batch) == ("light", 0.0, 20.0, 40.0, 8)
    text = parser.format_help()
    assert "default heavy" in text and "default 3.0" in text and "default rave" in text


def test_overrides_set_known_fields_and_report_the_rest():
    config, ignored = SearchConfig().with_overrides({"playout_policy": "light", "bias_c2": 0, "leaves_per_batch": 8.0,
                                                     "wideRootNoise": 0.1})
    assert (config.playout_policy, config.bias_c2, config.leaves_per_batch) == ("light", 0.0, 8)
    assert ignored == ["setting 'wideRootNoise' ignored"]
    assert SearchConfig().with_overrides(SearchConfig(strategy="uct").to_dict())[0] == SearchConfig(strategy="uct")


@pytest.mark.parametrize("overrides", [{"playout_policy": "medium"}, {"bias_c2": "x"}, {"bias_c2": float("nan")},
                                       {"leaves_per_batch": 2.5}, {"playouts_per_leaf": 0}, {"strategy": 3},
                                       {"uct_c": True}, {"early_stop": "maybe"}, {"early_stop": 2}])
def test_bad_override_values_raise(overrides):
    with pytest.raises(ValueError):
        SearchConfig().with_overrides(overrides)


def test_old_names_of_the_playout_policy_still_work_with_a_deprecation_message(capsys):
    config, ignored = SearchConfig().with_overrides({"playouts": "light", "late_playouts": None})
    assert not ignored and (config.playout_policy, config.late_playout_policy) == ("light", None)
    err = capsys.readouterr().err
    assert "'playouts' is deprecated" in err and "use 'playout_policy'" in err and "'late_playouts'" in err
    parser = argparse.ArgumentParser()
    search_config.add_arguments(parser)
    config = search_config.from_args(parser.parse_args(["--search-option", "playouts=rules"]))
    assert config.playout_policy == "rules" and "deprecated" in capsys.readouterr().err
    assert "playouts" not in config.to_dict()  # "playouts" is a count everywhere else


def test_changed_fields():
    assert search_config.changed_fields(SearchConfig()) == {}
    assert search_config.changed_fields(SearchConfig(bias_c2=0.5)) == {"bias_c2": 0.5}


def test_search_option_sets_any_field_and_refuses_unknown_ones():
    parser = argparse.ArgumentParser()
    search_config.add_arguments(parser)
    args = parser.parse_args(["--search-option", "rave_c1=0.1", "--search-option", "n_expand=2"])
    config = search_config.from_args(args)
    assert (config.rave_c1, config.n_expand) == (0.1, 2)
    for bad in (["--search-option", "nonsense=1"], ["--search-option", "rave_c1"], ["--search-option", "n_expand=x"]):
        with pytest.raises(ValueError):
            search_config.from_args(parser.parse_args(bad))


def test_switches_take_true_false_words_and_zero_one():
    for value, expected in ((False, False), ("off", False), ("True", True), (0, False), (1.0, True), ("no", False)):
        assert SearchConfig().with_overrides({"early_stop": value})[0].early_stop is expected
    parser = argparse.ArgumentParser()
    search_config.add_arguments(parser)
    assert search_config.from_args(parser.parse_args(["--search-option", "early_stop=false"])).early_stop is False


def test_playout_temperature_must_be_positive_and_reaches_the_evaluator():
    from jaxgo.playouts.evaluator import evaluator_for, make_evaluator

    with pytest.raises(ValueError, match="playout_temperature"):
        SearchConfig(playout_temperature=0.0)
    config, ignored = SearchConfig().with_overrides({"playout_temperature": 0.7})
    assert not ignored and evaluator_for(config) is make_evaluator("heavy", None, 1, 0.7)


def test_late_playouts_switch_the_evaluator_once_stones_cover_late_fill():
    import numpy as np

    from jaxgo.playouts.evaluator import evaluator_for

    config, ignored = SearchConfig().with_overrides({"late_playout_policy": "rules", "late_fill": 0.4})
    assert not ignored and SearchConfig(late_playout_policy=None).playout_policy_at(81, 81) == "heavy"  # None: off
    assert config.playout_policy_at(9, 25) == "heavy" and config.playout_policy_at(10, 25) == "rules"
    # left at None, by the board's size: from 45% covered below 19x19, from the empty board on 19x19
    assert SearchConfig().playout_policy_at(36, 81) == "heavy" and SearchConfig().playout_policy_at(37, 81) == "rules"
    assert SearchConfig().playout_policy_at(0, 361) == "rules"
    assert SearchConfig().for_size(9).playout_policy_at(36, 81) == "heavy"
    stones = np.zeros(25, np.int8)
    stones[:9] = 1
    assert evaluator_for(config, stones=stones).policy == "heavy"
    stones[9] = -1
    assert evaluator_for(config, stones=stones).policy == "rules" and evaluator_for(config).policy == "heavy"
    with pytest.raises(ValueError, match="late playout policy"):
        SearchConfig(late_playout_policy="smart")
    with pytest.raises(ValueError, match="late_fill"):
        SearchConfig(late_fill=1.5)


def test_describe_names_what_the_config_searches_with():
    text = SearchConfig().describe()
    assert text.startswith("RAVE tree search with heavy (gamma-proportional) playouts")
    assert "progressive bias 3 and virtual RAVE experience (--prior 0 20; 500 on 19x19) from the shipped gammas" in text
    assert "progressive widening on 19x19 (from 40 visits)" in text
    assert "their capture and atari-escape gammas times e**1.5 below 19x19 (e**0 on 19x19)" in text
    assert "gammas times e**3," in SearchConfig(prior_tactics=3.0).describe()
    assert "atari-escape" not in SearchConfig(prior_tactics=0.0).describe()
    sized = SearchConfig().for_size(9).describe()
    assert "(--prior 0 20) from" in sized and "widening" not in sized
    assert "progressive widening from 40 visits" in SearchConfig().for_size(19).describe()
    assert "MoGo-style rule playouts once stones cover 45% of the board" in text
    assert text.endswith("playouts valued with a score share of 0.1")
    plain = SearchConfig(strategy="uct", playout_policy="light", bias_c2=0.0, prior_pattern=0.0, widen_playouts=0.0,
                         late_playout_policy=None, score_utility=0.0)
    assert plain.describe() == "UCT tree search with light (uniform) playouts"
    assert "the gammas in g.npz" in SearchConfig(gammas="g.npz").describe()
    assert SearchConfig(strategy="random").describe() == "uniform random legal moves (no search)"


def test_score_utility_is_a_share_below_one_half():
    config, ignored = SearchConfig().with_overrides({"score_utility": 0})
    assert not ignored and config.score_utility == 0.0 and SearchConfig().score_utility == 0.1
    for bad in (-0.1, 0.5, 1.0):
        with pytest.raises(ValueError, match="score_utility"):
            SearchConfig(score_utility=bad)


def test_each_field_has_one_schema_that_coercion_and_the_options_follow():
    options = search_config.OPTIONS
    assert list(options) == list(SearchConfig().to_dict())
    for name, spec in options.items():
        assert spec.name == name and spec.default == getattr(SearchConfig(), name)
        assert spec.by_size is None or (spec.nullable and spec.default is None)  # None: by board size
        if spec.kind is int:  # every integer field comes back an integer, whatever list it is (not) on
            assert type(SearchConfig().with_overrides({name: float(spec.bounds[0] + 1)})[0].to_dict()[name]) is int
    assert search_config.BY_SIZE == ("prior_pattern", "widen_playouts", "late_fill", "prior_tactics")
    assert search_config.DEPRECATED_NAMES == {"playouts": "playout_policy", "late_playouts": "late_playout_policy"}
    flags = {spec.flag for spec in options.values() if spec.flag}
    assert {"--strategy", "--bias", "--leaves", "--playouts-per-leaf", "--threads"} <= flags
    assert options["playout_policy"].choices == search_config.PLAYOUT_POLICIES


def test_field_names_are_written_as_strings_at_most_ten_times_in_the_schema_modules():
    """Issue 60: the option schema lived in five places (71 string literals of field names in config and the two
    settings modules); now in the table beside each field."""
    import ast
    from pathlib import Path

    root = Path(search_config.__file__).resolve().parents[1]
    names = set(SearchConfig().to_dict())
    counts = {}
    for path in ("search/config.py", "server/settings.py", "gtp/settings.py"):
        tree = ast.parse((root / path).read_text())
        counts[path] = sum(isinstance(node, ast.Constant) and node.value in names for node in ast.walk(tree))
    assert sum(counts.values()) <= 10, counts
