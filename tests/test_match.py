"""The match runner: refereeing, forfeits for broken engines, summary statistics, and a real game vs GNU Go."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.gtp_client import find_gnugo  # noqa: E402
from jaxgo.match import main, play_game, run_match, wilson_interval  # noqa: E402

PY = shlex.quote(sys.executable)

# A tiny GTP engine whose genmove behaviour is chosen by argv[1]: "pass", "garbage", "crash", "illegal", "first".
FAKE = r'''
import sys
mode = sys.argv[1]
moves = iter(["A1", "B1", "C1", "D1", "E1", "A2", "B2", "C2", "D2", "E2"])
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "quit":
        print("=\n", flush=True)
        break
    if words[0] == "genmove":
        if mode == "garbage":
            print("hello there\n", flush=True)
        elif mode == "crash":
            sys.exit(3)
        elif mode == "illegal":
            print("= A1\n", flush=True)
        elif mode == "first":
            print("= " + next(moves, "pass") + "\n", flush=True)
        else:
            print("= pass\n", flush=True)
    elif words[0] == "final_status_list":
        print("= \n", flush=True)
    elif words[0] == "final_score":
        print("= 0\n", flush=True)
    else:
        print("= \n", flush=True)
'''


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "fake_engine.py"
    path.write_text(FAKE)
    return lambda mode: f"{PY} {shlex.quote(str(path))} {mode}"


def test_wilson_interval():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def test_two_passes_scored_by_area(fake, tmp_path):
    record = play_game(fake("first"), fake("pass"), size=5, komi=0.5, sgf_path=str(tmp_path / "g.sgf"))
    # Black places A1..E2 while White passes; then both pass and the board is counted: Black owns it all.
    assert record["winner"] == 1 and record["result"] == "B+24.5" and record["moves"] == 21
    assert record["scoring"] == "agreed final_status_list"
    assert (tmp_path / "g.sgf").read_text().startswith("(;FF[4]")


@pytest.mark.parametrize("mode, reason", [("garbage", "garbled reply"), ("crash", "exited"),
                                          ("illegal", "illegal move")])
def test_broken_engine_forfeits_and_match_goes_on(fake, mode, reason):
    if mode == "illegal":
        black, white = fake("first"), fake("illegal")  # White's A1 is occupied by Black's first move
    else:
        black, white = fake(mode), fake("pass")
    summary = run_match(black, white, games=2, size=5, komi=0.5, alternate=False, timeout=20)
    assert summary["games"] == 2 and len(summary["forfeits"]) == 2
    assert all(reason in f["reason"] for f in summary["forfeits"])
    loser = "A" if mode != "illegal" else "B"
    assert all(f["engine"] == loser for f in summary["forfeits"])
    assert summary["wins_a"] == (0 if loser == "A" else 2)


def test_alternate_swaps_colours(fake):
    summary = run_match(fake("first"), fake("pass"), games=2, size=5, komi=0.5, alternate=True)
    colours = [g["a_colour"] for g in summary["games_detail"]]
    assert colours == ["black", "white"]
    assert summary["wins_a"] == 2 and summary["win_rate_a"] == 1.0  # the stone-placer wins either way


@pytest.mark.gnugo
@pytest.mark.skipif(find_gnugo() is None, reason="gnugo not installed (scripts/setup.sh installs it)")
def test_short_game_against_gnugo_to_the_end(tmp_path, capsys):
    code = main(["--games", "1", "--size", "9", "--playouts", "200", "--level", "1", "--sgf-dir", str(tmp_path),
                 "--details", "--timeout", "120"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    game = summary["games_detail"][0]
    assert not summary["forfeits"]
    assert game["reason"] != "resign" or game["moves"] > 0
    if game["reason"] != "resign":  # both engines score the finished game the same way as the referee
        scores = game["engine_scores"]
        assert scores["black"] == scores["white"] == game["result"], game
    assert (Path(tmp_path) / "game_0000.sgf").exists()
