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
