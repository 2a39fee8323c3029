"""The referee: scoring, forfeits for broken engines, alternating colours, CPU shares, a real game vs GNU Go."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.gtp_client import find_gnugo  # noqa: E402
from jaxgo.match import (  # noqa: E402
    cpu_shares,
    main,
    play_game,
    run_match,
)

PY = shlex.quote(sys.executable)


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


def test_cpu_shares_split_the_cores_between_games():
    assert cpu_shares([0, 1], 2) == [(0,), (1,)]
    assert cpu_shares([0, 1, 2, 3], 2) == [(0, 1), (2, 3)]
    assert cpu_shares([0, 1, 2, 3, 4], 2) == [(0, 1, 2), (3, 4)]
    assert cpu_shares([4, 7], 3) == [(4,), (7,), (4,)]  # more games than cores: one core each, reused
    with pytest.raises(ValueError):
        cpu_shares([], 2)


# An engine that records the CPUs it may run on (one line per process in the file named by argv[1]), then passes.
AFFINITY = r'''
import os, sys
with open(sys.argv[1], "a") as out:
    out.write(",".join(map(str, sorted(os.sched_getaffinity(0)))) + "\n")
for line in sys.stdin:
    words = line.split()
    if words and words[0] == "quit":
        print("=\n", flush=True)
        break
    print("= pass\n" if words and words[0] == "genmove" else "= \n", flush=True)
'''


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2
                    or shutil.which("taskset") is None, reason="needs Linux, taskset and two CPUs")
def test_games_played_at_once_get_a_core_each(tmp_path):
    script, seen = tmp_path / "affinity.py", tmp_path / "cpus.txt"
    script.write_text(AFFINITY)
    engine = f"{PY} {shlex.quote(str(script))} {shlex.quote(str(seen))}"
    run_match(engine, engine, games=2, size=5, komi=0.5, parallel=2, pin=True)
    sets = seen.read_text().split()
    assert len(sets) == 4 and all("," not in s for s in sets)  # every engine on one core
    cores = sorted(os.sched_getaffinity(0))
    assert set(sets) <= {str(c) for c in cores[:2]}
    seen.unlink()
    run_match(engine, engine, games=2, size=5, komi=0.5, parallel=2, pin=False)
    assert set(seen.read_text().split()) == {",".join(map(str, cores))}  # unpinned: all of them


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
