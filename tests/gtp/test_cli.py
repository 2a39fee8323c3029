"""``jaxgo gtp`` options (``jaxgo.gtp.cli``): every option's help gives its default, bad values are refused
before the engine starts, and the description names the default engine."""

from __future__ import annotations

import pytest

from jaxgo.gtp.cli import build_parser, main
from jaxgo.search.player import DEFAULT_PLAYOUTS


def test_every_option_states_its_default():
    parser = build_parser()
    for action in parser._actions:  # argparse keeps no public list of its options
        if action.dest == "help":
            continue
        assert "default" in (action.help or ""), action.dest
    text = " ".join(parser.format_help().split())
    assert f"default {DEFAULT_PLAYOUTS}" in text
    assert "RAVE" in text and "heavy" in text and "progressive bias 3" in text and "rule playouts" in text


@pytest.mark.parametrize("args", [["--komi", "1e300"], ["--komi", "nan"], ["--size", "40"], ["--playouts", "0"],
                                  ["--seconds", "-1"], ["--seconds", "1e12"], ["--search-option", "uct_c"]])
def test_bad_options_exit_2_before_serving(args, capsys):
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("jaxgo gtp: ")
