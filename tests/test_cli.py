"""The ``jaxgo`` dispatcher: usage errors, help texts that describe the default engine."""

from __future__ import annotations

from jaxgo import cli


def test_no_command_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: jaxgo COMMAND")


def test_help_names_every_command_and_the_default_engine(capsys):
    assert cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert all(f"  {name} " in text for name in cli.SUBCOMMANDS)
    words = " ".join(text.split())  # the engine's description is wrapped at 110 columns
    assert "RAVE" in words and "heavy" in words and "progressive bias 3" in words and "shipped" in words
    assert "rule playouts" in words
    assert "random game" not in text  # the demo plays the default engine, not random moves


def test_unknown_command(capsys):
    assert cli.main(["no-such-command"]) == 2
    assert "unknown command 'no-such-command'" in capsys.readouterr().err
