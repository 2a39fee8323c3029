"""The ``jaxgo match`` command."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.match import main


def test_help_names_the_jaxgo_command(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: jaxgo match") and "python -m jaxgo.match" not in text
    for word in ("round-robin", "Elo", "--player", "--results", "--time", "[players]"):
        assert word in text


def test_games_0_is_refused_not_played_as_2(capsys):
    assert main(["--games", "0", "--black", "true", "--white", "true"]) == 2
    assert "--games must be at least 1" in capsys.readouterr().err


def test_colours_alternate_by_default_and_no_alternate_keeps_them(fake, capsys):
    import json

    base = ["--black", fake("first"), "--white", fake("pass"), "--size", "5", "--komi", "0.5", "--games", "2",
            "--details"]
    assert main(base) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [g["a_colour"] for g in summary["games_detail"]] == ["black", "white"]
    assert main(base + ["--no-alternate"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [g["a_colour"] for g in summary["games_detail"]] == ["black", "black"]
