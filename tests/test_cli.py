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
    assert "RAVE" in text and "heavy" in text and "progressive bias 3" in text and "shipped" in text
    assert "rule playouts" in text
    assert "random game" not in text  # the demo plays the default engine, not random moves


def test_unknown_command(capsys):
    assert cli.main(["no-such-command"]) == 2
    assert "unknown command 'no-such-command'" in capsys.readouterr().err
