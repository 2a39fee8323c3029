"""jaxgo/eval/strength.py: series kept apart by board, label, budget and clock; a rerun resumes; the report's
table reads old and new logs alike."""

from __future__ import annotations

import gzip
import json

import pytest

from jaxgo.eval import strength as strength_table
from support import fake_gtp_engine


def test_engine_command_takes_its_budget_from_playouts_or_the_clock():
    assert "--playouts 3000" in strength_table.engine_command("rave", 3000)
    clocked = strength_table.engine_command("rave", None, "--bias 1", engine="jaxgo gtp", size=19)
    assert "--playouts" not in clocked and "--size 19" in clocked and clocked.endswith("--bias 1")


def test_run_resumes_and_report_keeps_series_apart(tmp_path, monkeypatch, capsys):
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy")  # jaxgo's place: plays; GNU Go's: passes
    monkeypatch.setattr(strength_table, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    argv = ["run", "--strategies", "rave", "--playouts", "50", "--games", "2", "--size", "5", "--label", "t",
            "--engine", fake, "--log", str(log)]
    assert strength_table.main(argv) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["jaxgo_colour"] for r in records] == ["black", "white"] and all(r["jaxgo_won"] for r in records)
    assert all(r["size"] == 5 and r["time"] is None for r in records)
    assert "2 of 2" in capsys.readouterr().err
    assert strength_table.main(argv) == 0  # nothing left to play
    assert len(log.read_text().splitlines()) == 2
    old = tmp_path / "old.jsonl.gz"  # a log from before sizes and clocks were recorded
    with gzip.open(old, "wt") as out:
        out.write(json.dumps({"strategy": "rave", "playouts": 10000, "label": "", "jaxgo_won": False}) + "\n")
    strength_table.main(["report", "--log", str(log), str(old.with_suffix(""))])
    table = capsys.readouterr().out
    assert "| 5x5 | rave (t) | 50 playouts | 2 | 2 | 1.00 |" in table
    assert "| 9x9 | rave | 10000 playouts | 1 | 0 | 0.00 |" in table


def test_clock_series_are_their_own_rows(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    rows = [{"strategy": "rave", "playouts": None, "time": "0:2:1", "size": 9, "label": "", "jaxgo_won": w}
            for w in (True, False, True)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    strength_table.main(["report", "--log", str(log)])
    assert "| 9x9 | rave | clock 0:2:1 | 3 | 2 | 0.67 |" in capsys.readouterr().out


def test_report_compares_each_series_with_its_baseline_at_the_same_budget(tmp_path, capsys):
    def games(label, playouts, wins, n, time=None):
        return [{"strategy": "rave", "playouts": playouts, "time": time, "size": 9, "label": label,
                 "jaxgo_won": i < wins} for i in range(n)]

    log = tmp_path / "log.jsonl"
    rows = (games("default", 10000, 70, 100) + games("prune", 10000, 64, 100) + games("default", 3000, 60, 100)
            + games("prior", 3000, 9, 10) + games("lonely", 1000, 1, 2) + games("clocked", None, 3, 4, "0:2:1"))
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    forest = tmp_path / "forest.png"
    strength_table.main(["report", "--log", str(log), "--baseline", "default", "--forest", str(forest)])
    lines = capsys.readouterr().out.splitlines()
    compared = [line for line in lines if "(100 games)" in line]
    # 64 of 100 against 70 of 100: -0.06, Newcombe -0.19 to +0.07; a series with no baseline at its budget is left out
    assert compared == [
        "| 9x9 | rave (prior) | 3000 playouts | 10 | 0.90 | default (100 games) | 0.60 | +0.30 (-0.02 to +0.43) |",
        "| 9x9 | rave (prune) | 10000 playouts | 100 | 0.64 | default (100 games) | 0.70 | -0.06 (-0.19 to +0.07) |"]
    assert not any("lonely" in line and "default (" in line for line in lines)
    assert forest.read_bytes().startswith(b"\x89PNG")
    # a change on top of another: prune=prior sets prune against prior (none at 10k: left out), prior stays a change
    strength_table.main(["report", "--log", str(log), "--baseline", "default", "prune=prior"])
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("| 9x9 | rave (prune)") and "games) |" in line for line in lines)
    assert any(line.startswith("| 9x9 | rave (prior)") and "default (100 games)" in line for line in lines)
    series = {(9, label, "rave", 1000, None): games(label, 1000, wins, 4) for label, wins in (("a", 3), ("b", 1),
                                                                                              ("c", 2))}
    rows = strength_table.ablation_rows(series, ["a", "c=b"])
    assert [(r["label"], r["baseline"]) for r in rows] == [("b", "a"), ("c", "b")]


def test_audit_plays_on_the_resigned_games_from_their_sgf(tmp_path, monkeypatch, capsys):
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy")  # jaxgo's place: plays; GNU Go's: passes
    monkeypatch.setattr(strength_table, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    base = {"strategy": "rave", "playouts": 50, "label": "t", "size": 5, "time": None}
    rows = [dict(base, game=0, jaxgo_colour="black", jaxgo_won=True, reason="score", moves=12),
            dict(base, game=1, jaxgo_colour="white", jaxgo_won=False, reason="resign", moves=2)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sgf = tmp_path / "sgf" / "rave_50_0000" / "game_0001.sgf"  # game 1 of the series: first 0 + index 1
    sgf.parent.mkdir(parents=True)
    sgf.write_text("(;GM[1]SZ[5]KM[7.5];B[cc];W[cb])")
    other = tmp_path / "sgf" / "other" / "rave_50_0000" / "game_0001.sgf"  # another label's game: 3 moves
    other.parent.mkdir(parents=True)
    other.write_text("(;GM[1]SZ[5]KM[7.5];B[cc];W[cb];B[aa])")
    out = tmp_path / "audit.jsonl"
    argv = ["audit", "--log", str(log), "--sgf-dir", str(tmp_path / "sgf"), "--label", "t", "--playouts", "50",
            "--size", "5", "--engine", fake, "--out", str(out)]
    assert strength_table.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lost_by_resigning"] == 1 and summary["won_when_played_on"] == 1
    assert summary["win_rate_without_resigning"] == 1.0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["game"] == 1 and row["resigned_at"] == 2 and row["result"].startswith("W+")  # white's A1..E2
    assert row["moves"] > 2
    assert strength_table.main(argv) == 0 and len(out.read_text().splitlines()) == 1  # resumed: nothing to play


def test_series_game_needs_exactly_one_sgf_with_the_logged_moves():
    two = b"(;GM[1]SZ[5];B[cc];W[cb])"
    assert len(strength_table.series_game([two, b"(;GM[1]SZ[5];B[cc])"], 2).moves) == 2
    with pytest.raises(ValueError, match="0 of 1"):
        strength_table.series_game([two], 3)


def test_audit_estimate_asks_gnugo_for_the_score_of_a_clocked_series(tmp_path, monkeypatch, capsys):
    estimate = "W+12.5 (upper bound: 14.0, lower: 11.0)"
    gnugo = fake_gtp_engine(tmp_path / "gnugo.py", replies={"estimate_score": estimate})
    monkeypatch.setattr(strength_table, "find_gnugo", lambda: gnugo)
    log = tmp_path / "log.jsonl"
    base = {"strategy": "rave", "playouts": None, "label": "t", "size": 5, "time": "0:10:1"}
    rows = [dict(base, game=0, jaxgo_colour="black", jaxgo_won=False, reason="resign", moves=2),
            dict(base, game=1, jaxgo_colour="white", jaxgo_won=False, reason="resign", moves=3)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for index, moves in ((0, ";B[cc];W[cb]"), (1, ";B[cc];W[cb];B[dd]")):
        sgf = tmp_path / "sgf" / "rave_0-10-1_0000" / f"game_{index:04d}.sgf"
        sgf.parent.mkdir(parents=True, exist_ok=True)
        sgf.write_text(f"(;GM[1]SZ[5]KM[7.5]{moves})")
    out = tmp_path / "estimates.jsonl"
    argv = ["audit", "--log", str(log), "--sgf-dir", str(tmp_path / "sgf"), "--label", "t", "--time", "0:10:1",
            "--size", "5", "--estimate", "--out", str(out)]
    assert strength_table.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lost_by_resigning"] == 2 and summary["estimated"] == 2
    assert summary["margins"] == [-12.5, 12.5] and summary["estimated_behind"] == 1  # W+12.5: Black behind
    assert [json.loads(line)["resigned_at"] for line in out.read_text().splitlines()] == [2, 3]
    # a clocked series cannot be played on, and one budget must be named
    assert strength_table.main([a for a in argv if a != "--estimate"]) == 2
    assert strength_table.main(argv[:argv.index("--time")] + argv[argv.index("--size"):]) == 2


def test_estimate_margin_reads_gnugo_scores():
    assert strength_table.estimate_margin("B+3.5 (upper bound: 5, lower: 2)", "black") == 3.5
    assert strength_table.estimate_margin("B+3.5", "white") == -3.5
    assert strength_table.estimate_margin("0", "white") == 0.0
    with pytest.raises(ValueError):
        strength_table.estimate_margin("hello", "black")


def test_ladders_counts_escapes_into_working_ladders_by_side(tmp_path, capsys):
    import tarfile

    log = tmp_path / "log.jsonl"
    base = {"strategy": "rave", "playouts": 50, "label": "t", "size": 9, "time": None}
    rows = [dict(base, game=0, jaxgo_colour="white", jaxgo_won=False, reason="resign", moves=4),
            dict(base, game=1, jaxgo_colour="black", jaxgo_won=True, reason="score", moves=2)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # white E5 in atari; W E4 runs into a ladder (tests/go/test_ladder.py's ESCAPE_LADDERED), then two quiet moves
    laddered = "(;GM[1]SZ[9]KM[7.5]AB[ed][de][fe][ff]AW[ee]PL[W];W[ef];B[eg];W[aa];B[cc])"
    games = {"series/rave_50_0000/game_0000.sgf": laddered,
             "series/rave_50_0000/game_0001.sgf": "(;GM[1]SZ[9]KM[7.5];B[ee];W[cc])",
             "other/rave_50_0000/game_0000.sgf": "(;GM[1]SZ[9]KM[7.5];B[ee];W[cc];B[aa];W[ii])"}
    archive = tmp_path / "games.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for name, text in games.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            tar.add(path, arcname=name)
    argv = ["ladders", "--log", str(log), "--sgf-dir", str(archive), "--label", "t", "--playouts", "50"]
    with pytest.raises(ValueError, match="2 of 2"):  # two series' game 0 with 4 moves: the folder tells them apart
        strength_table.main(argv)
    assert strength_table.main(argv + ["--sgf-folder", "series"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games"] == 2 and summary["jaxgo_wins"] == 1
    assert summary["jaxgo"] == {"escapes": 1, "games": 1, "games_jaxgo_lost": 1}
    assert summary["gnugo"] == {"escapes": 0, "games": 0, "games_jaxgo_lost": 0}


def test_margins_are_read_after_each_jaxgo_move_and_the_turn_is_found():
    from jaxgo.go.sgf import load_sgf

    record = load_sgf(b"(;GM[1]SZ[5]KM[7.5];B[cc];W[cb];B[dd];W[bb];B[ee];W[aa])")
    scores = ["W+1", "B+4", "W+2", "B+6", "W+12", "B+9"]  # GNU Go's estimate after 1, 2, ... moves
    asked = []

    def estimate(moves):
        asked.append(len(moves))
        return scores[len(moves) - 1]

    margins = strength_table.jaxgo_margins(record, "white", estimate)
    assert asked == [2, 4, 6] and margins == [(2, -4.0), (4, -6.0), (6, -9.0)]  # only after White's moves
    assert strength_table.worst_drop(margins) == (6, 3.0) and strength_table.turning_move(margins) == 2
    black = strength_table.jaxgo_margins(record, "black", estimate)
    assert black == [(1, -1.0), (3, -2.0), (5, -12.0)] and strength_table.worst_drop(black) == (5, 10.0)
    assert strength_table.turning_move([(1, -3.0), (3, 2.0), (5, -1.0)]) == 5
    assert strength_table.turning_move([(1, -3.0), (3, 0.0)]) is None
    assert strength_table.worst_drop([(1, 1.0), (3, 5.0)]) == (None, 0.0)


def test_swings_estimates_every_game_of_a_series_and_resumes(tmp_path, monkeypatch, capsys):
    gnugo = fake_gtp_engine(tmp_path / "gnugo.py", replies={"estimate_score": "W+3.5 (upper bound: 4, lower: 3)"})
    monkeypatch.setattr(strength_table, "find_gnugo", lambda: gnugo)
    log = tmp_path / "log.jsonl"
    base = {"strategy": "rave", "playouts": 50, "label": "t", "size": 5, "time": None}
    rows = [dict(base, game=0, jaxgo_colour="black", jaxgo_won=False, reason="resign", moves=3),
            dict(base, game=1, jaxgo_colour="white", jaxgo_won=True, reason="score", moves=2),
            dict(base, game=2, jaxgo_colour="black", jaxgo_won=True, reason="score", moves=1, forfeit="white")]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for index, moves in ((0, ";B[cc];W[cb];B[dd]"), (1, ";B[cc];W[cb]"), (2, ";B[cc]")):
        sgf = tmp_path / "sgf" / "rave_50_0000" / f"game_{index:04d}.sgf"
        sgf.parent.mkdir(parents=True, exist_ok=True)
        sgf.write_text(f"(;GM[1]SZ[5]KM[7.5]{moves})")
    out = tmp_path / "swings.jsonl"
    argv = ["swings", "--log", str(log), "--sgf-dir", str(tmp_path / "sgf"), "--label", "t", "--playouts", "50",
            "--size", "5", "--out", str(out)]
    assert strength_table.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["game"] for r in lines] == [0, 1]  # the forfeit is not a game to read
    assert lines[0]["margins"] == [[1, -3.5], [3, -3.5]] and lines[1]["margins"] == [[2, 3.5]]
    assert summary["lost"]["behind_for_good"] == 1 and summary["lost"]["median_turning_move"] == 1
    assert summary["won"]["games"] == 1 and summary["won"]["behind_for_good"] == 0
    assert strength_table.main(argv) == 0 and len(out.read_text().splitlines()) == 2  # nothing left to estimate


def test_reference_points_are_name_playouts_and_rate(tmp_path, capsys):
    assert strength_table.parse_reference("MoGo (2011): prior:10000:0.82") == ("MoGo (2011): prior", 10000, 0.82)
    with pytest.raises(ValueError, match="NAME:PLAYOUTS:RATE"):
        strength_table.parse_reference("10000:0.82")
    log = tmp_path / "log.jsonl"
    game = {"strategy": "rave", "playouts": 1000, "label": "d", "size": 9, "jaxgo_won": True}
    log.write_text(json.dumps(game) + "\n")
    plot = tmp_path / "curve.png"
    assert strength_table.main(["report", "--log", str(log), "--plot", str(plot), "--reference", "MoGo:1000:0.5"]) == 0
    assert plot.read_bytes().startswith(b"\x89PNG")
