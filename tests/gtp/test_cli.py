"""``jaxgo gtp`` options (``jaxgo.gtp.cli``): every option's help gives its default, bad values are refused
before the engine starts, and the description names the default engine."""

from __future__ import annotations

import pytest

from jaxgo.gtp.cli import build_parser, main
from jaxgo.search.limits import DEFAULT_PLAYOUTS


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


# A 5x5 position lost for Black whatever it plays: White owns rows 2-5 with two eyes (B4, D4), row 1 is empty.
LOST_FOR_BLACK = ["boardsize 5", "clear_board"] + [f"play w {v}" for v in (
    "a2", "b2", "c2", "d2", "e2", "a3", "b3", "c3", "d3", "e3", "a4", "c4", "e4", "a5", "b5", "c5", "d5", "e5")]


def test_resignation_needs_at_most_half_of_the_playouts_per_move():
    assert build_parser().parse_args([]).resign_min_playouts is None
    from jaxgo.gtp.cli import resign_min_playouts

    assert resign_min_playouts(None, None) == 2000 and resign_min_playouts(None, 1000) == 500
    assert resign_min_playouts(None, 10_000) == 2000 and resign_min_playouts(3000, 1000) == 3000


@pytest.mark.slow
def test_the_faster_opponent_resigns_a_lost_game():
    """``jaxgo gtp --playouts 1000`` (the README's faster opponent) never resigned: resignation needed 2,000
    playouts; lost games were played to the end."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(repo))
    script = "\n".join(LOST_FOR_BLACK + ["genmove b", "quit"]) + "\n"
    proc = subprocess.run([sys.executable, "-m", "jaxgo", "gtp", "--size", "5", "--playouts", "1000",
                           "--playout-policy", "light", "--bias", "0", "--quiet"], input=script, capture_output=True,
                          text=True, env=env, timeout=300)
    replies = [block for block in proc.stdout.split("\n\n") if block]
    assert proc.returncode == 0 and replies[-2] == "= resign", replies[-3:]


def test_jaxgo_gtp_leaves_when_the_shell_that_started_it_is_killed():
    """A GUI that SIGTERMs the ``/bin/sh -c`` it started must not be left waiting on jaxgo's pipes (issue 61)."""
    import os
    import signal
    import subprocess
    import sys

    env = dict(os.environ, JAX_PLATFORMS="cpu")
    command = f"{sys.executable} -m jaxgo gtp --quiet --no-warmup --size 9; true"  # sh does not exec jaxgo
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(b"name\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == b"= jaxgo\n"  # the engine is up
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    reader = subprocess.run(["timeout", "60", "cat"], stdin=proc.stdout, capture_output=True)
    assert reader.returncode == 0, "jaxgo gtp kept its stdout open after its parent died"
    proc.stdin.close()
