"""The match runner: refereeing, forfeits for broken engines, clocks, summary statistics, a real game vs GNU Go, and
round-robin tournaments (resumable results, Elo estimates)."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from support import fake_gtp_engine

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.gtp_client import find_gnugo  # noqa: E402
from jaxgo.match import (GameClock, TimeControl, Tournament, bradley_terry_elo, cpu_shares,  # noqa: E402
                         difference_interval, main, parse_players, play_game, read_game_records, read_results,
                         run_match, sgf_files, wilson_interval)

PY = shlex.quote(sys.executable)


@pytest.fixture
def fake(tmp_path):
    """The command of ``support.FAKE_GTP_ENGINE`` in a genmove mode: pass, first, slow, garbage, crash, illegal."""
    path = fake_gtp_engine(tmp_path / "fake_engine.py")
    return lambda mode: f"{shlex.quote(path)} {mode}"


def test_wilson_interval():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


@pytest.mark.parametrize("a, b, low, high", [((56, 70), (48, 80), 0.0524, 0.3339), ((9, 10), (3, 10), 0.1705, 0.8090),
                                             ((5, 56), (0, 29), -0.0381, 0.1926)])
def test_difference_interval_matches_newcombes_table(a, b, low, high):
    """Newcombe (Stat. Med. 1998), Table II, method 10: the hybrid score interval of p1 - p2."""
    d, lo, hi = difference_interval(*a, *b)
    assert d == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_two_passes_scored_by_area(fake, tmp_path):
    record = play_game(fake("first"), fake("pass"), size=5, komi=0.5, sgf_path=str(tmp_path / "g.sgf"))
    # Black places A1..E2 while White passes; then both pass and the board is counted: Black owns it all.
    assert record["winner"] == 1 and record["result"] == "B+24.5" and record["moves"] == 21
    assert record["scoring"] == "agreed final_status_list"
    assert (tmp_path / "g.sgf").read_text().startswith("(;FF[4]")


def test_game_records_from_folders_and_tars_skip_and_count_broken_ones(tmp_path):
    game = b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc])"
    for folder, name, data in (("a", "game_0000.sgf", game), ("a", "game_0001.sgf", b"(;SZ[9];B[ee"),
                               ("b", "game_0000.sgf", game)):
        (tmp_path / "games" / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / "games" / folder / name).write_bytes(data)
    import tarfile

    with tarfile.open(tmp_path / "games.tar.xz", "w:xz") as archive:
        for folder in ("a", "b"):
            archive.add(tmp_path / "games" / folder, arcname=folder)
    assert sorted(sgf_files(tmp_path / "games.tar.xz")) == ["a/game_0000.sgf", "a/game_0001.sgf", "b/game_0000.sgf"]
    assert sorted(sgf_files(tmp_path / "games.tar.xz", folder="b")) == ["b/game_0000.sgf"]
    assert sorted(sgf_files(tmp_path / "games", folder="a")) == ["a/game_0000.sgf", "a/game_0001.sgf"]

    records, broken = read_game_records([tmp_path / "games"], folder="a")
    assert broken == 1 and [name.split(":")[1] for name, _ in records] == ["a/game_0000.sgf"]
    assert records[0][1].gtp_moves() == [["B", "E5"], ["W", "C7"]]
    records, broken = read_game_records([tmp_path / "games.tar.xz", tmp_path / "games" / "b" / "game_0000.sgf"])
    assert (len(records), broken) == (3, 1)


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


# -- clocks ----------------------------------------------------------------------------------------------------
def test_canadian_byoyomi_and_sudden_death_clocks():
    clock = GameClock(TimeControl(main=10, byoyomi=5, stones=2, grace=0.5))
    assert clock.spend(8) and clock.main_left == 2 and clock.allowance() == 7
    assert clock.gtp_time_left("black") == "time_left black 2 0"
    assert clock.spend(4)  # 2 s of main time, then 2 s of the first period (1 stone of 2 played)
    assert clock.in_byoyomi and clock.period_left == 3 and clock.stones_left == 1
    assert clock.spend(3.4)  # over by 0.4 s: within the grace; the period's stones are done, a new period starts
    assert clock.period_left == 5 and clock.stones_left == 2
    assert not clock.spend(5.6)
    sudden = GameClock(TimeControl(main=2, grace=0.1))
    assert sudden.spend(1.5) and not sudden.spend(0.7)
    assert TimeControl.parse("0:5:1") == TimeControl(0, 5, 1) and TimeControl.parse("60").gtp_settings() == \
        "time_settings 60 0 0"
    for bad in ("", "a:b", "1:2:3:4", "0", "-1"):
        with pytest.raises(ValueError):
            TimeControl.parse(bad)


def test_an_engine_over_its_clock_loses_on_time(fake):
    record = play_game(fake("slow"), fake("pass"), size=5, komi=0.5,
                       time_control=TimeControl(main=0.6, grace=0.1))
    assert record["result"] == "W+Time" and record["forfeit"] == "black" and record["moves"] == 2


# -- Elo ---------------------------------------------------------------------------------------------------------
def test_bradley_terry_of_two_players_has_its_closed_form():
    games = [("a", "b", "a")] * 2 + [("b", "a", "a"), ("b", "a", "b")]  # a scores 3 of 4, colours mixed
    ratings = bradley_terry_elo(["a", "b"], games, [("a", "b")])
    p = (3 + 0.5) / (4 + 1)  # one virtual draw: half a win each
    difference = 400 * math.log10(p / (1 - p))
    assert ratings["a"]["elo"] == pytest.approx(difference / 2, abs=0.1) and ratings["b"]["elo"] == \
        pytest.approx(-difference / 2, abs=0.1)
    half_width = 1.96 * (400 / math.log(10)) / math.sqrt(5 * p * (1 - p)) / 2  # sd of the difference, halved
    low, high = ratings["a"]["elo_ci95"]
    assert low == pytest.approx(difference / 2 - half_width, abs=0.2) and high == pytest.approx(
        difference / 2 + half_width, abs=0.2)
    anchored = bradley_terry_elo(["a", "b"], games, [("a", "b")], anchor="b")
    assert anchored["b"]["elo"] == 0 and anchored["a"]["elo"] == pytest.approx(difference, abs=0.1)


def test_perfect_scores_get_finite_ordered_ratings():
    names = ["weak", "middle", "strong"]
    games = [("weak", "middle", "middle"), ("middle", "strong", "strong"), ("strong", "weak", "strong"),
             ("weak", "middle", None)]
    ratings = bradley_terry_elo(names, games, [("weak", "middle"), ("weak", "strong"), ("middle", "strong")])
    elo = [ratings[n]["elo"] for n in names]
    assert elo[0] < elo[1] < elo[2] and abs(sum(elo)) < 0.5 and all(map(math.isfinite, elo))
    assert all(r["elo_ci95"][0] < r["elo"] < r["elo_ci95"][1] for r in ratings.values())


# -- tournaments -------------------------------------------------------------------------------------------------
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


def test_help_names_the_jaxgo_command(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: jaxgo match") and "python -m jaxgo.match" not in text
    for word in ("round-robin", "Elo", "--player", "--results", "--time", "[players]"):
        assert word in text
