"""Round-robin tournaments: resumable results, Elo estimates, clear errors in the description."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.gtp_client import find_gnugo  # noqa: E402
from jaxgo.match import (  # noqa: E402
    Tournament,
    main,
    parse_players,
    read_results,
)

PY = shlex.quote(sys.executable)


@pytest.mark.slow
@pytest.mark.gnugo
@pytest.mark.skipif(find_gnugo() is None, reason="gnugo not installed (scripts/setup.sh installs it)")
def test_round_robin_tournament_resumes_and_rates(fake, tmp_path, capsys):
    gnugo = f"{find_gnugo()} --mode gtp --level 0 --chinese-rules"
    league = tmp_path / "league.toml"
    league.write_text(f"""
board_size = 5
komi = 0.5
games = 1
max_moves = 30
[players]
random = "{PY} -m jaxgo gtp --strategy random --quiet --seed {{seed}}"
gnugo0 = "{gnugo}"
crasher = {{command = "{fake('crash')}", setup = ["komi 0.5"]}}
""")
    assert main([str(league)]) == 0
    first = json.loads(capsys.readouterr().out)
    results = tmp_path / "league.jsonl"
    lines = results.read_text().splitlines()
    assert first["games"] == 3 and first["remaining"] == 0 and len(lines) == 1 + 3
    standings = {p["player"]: p for p in first["players"]}
    crasher = standings["crasher"]
    assert crasher["losses"] == 2 and crasher["crashes"] == 2 and crasher["forfeits"] == 2
    games = [json.loads(line) for line in lines[1:]]
    crashed = [g for g in games if "crasher" in g["pair"]]
    assert all(g["exit_status"] == {"crasher": 3} and "exited" in g["reason"] for g in crashed)
    assert all((tmp_path / g["sgf"]).exists() or Path(g["sgf"]).exists() for g in games)
    assert (tmp_path / "league-logs" / "random.log").exists()
    # An interrupted run leaves a cut last line; a rerun with more games keeps the finished ones and plays the rest.
    with open(results, "a") as handle:
        handle.write('{"id": "random:gnugo0:1", "pair"')
    assert main([str(league), "--games", "2"]) == 0
    second = json.loads(capsys.readouterr().out)
    after = results.read_text().splitlines()
    assert after[:4] == lines and len(after) == 1 + 6 and second["games"] == 6 and second["remaining"] == 0
    standings = {p["player"]: p for p in second["players"]}
    assert standings["gnugo0"]["elo"] > standings["crasher"]["elo"] and standings["crasher"]["wins"] == 0
    assert sum(p["games"] for p in second["players"]) == 2 * 6
    # --report reads the same standings without playing; the table goes to stderr.
    assert main([str(league), "--games", "2", "--report"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["players"] == second["players"] and "95% interval" in captured.err
    # Other settings or a changed command are refused instead of mixed into the results.
    assert main([str(league), "--komi", "7.5"]) == 2
    assert "other settings" in capsys.readouterr().err
    league.write_text(league.read_text().replace("--level 0", "--level 1"))
    assert main([str(league), "--games", "2"]) == 2
    assert "gnugo0's command changed" in capsys.readouterr().err


def test_tournament_description_errors_are_clear(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('board_sise = 9\n[players]\na = "x"\nb = "y"\n')
    assert main([str(bad)]) == 2 and "unknown keys ['board_sise']" in capsys.readouterr().err
    bad.write_text('[players]\na = "x"\n')
    assert main([str(bad)]) == 2 and "at least two players" in capsys.readouterr().err
    assert main(["--player", "a b=x", "--player", "c=y"]) == 2 and "names may hold" in capsys.readouterr().err
    assert main(["--player", "a=x", "--player", "b=y", "--time", "soon"]) == 2
    assert "MAIN[:BYOYOMI[:STONES]]" in capsys.readouterr().err
    players = parse_players(["a=prog --x 1", "b=other"])
    tournament = Tournament(players=players, games=3, results=str(tmp_path / "r.jsonl"))
    assert [g["black"] for g in tournament.schedule()] == ["a", "b", "a"]
    assert read_results(tmp_path / "missing.jsonl", tournament.settings()) == []
