"""jaxgo/eval/strength_audit.py (``jaxgo eval strength audit|ladders|swings``): resignations played on or
estimated, atari escapes into working ladders, where the games turned; the series' SGFs found in folders and tars."""

from __future__ import annotations

import json

import pytest

from jaxgo.eval import series, strength, strength_audit
from support import fake_gtp_engine


def test_audit_plays_on_the_resigned_games_from_their_sgf(tmp_path, monkeypatch, capsys):
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy")  # jaxgo's place: plays; GNU Go's: passes
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
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
    assert strength.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lost_by_resigning"] == 1 and summary["won_when_played_on"] == 1
    assert summary["win_rate_without_resigning"] == 1.0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["game"] == 1 and row["resigned_at"] == 2 and row["result"].startswith("W+")  # white's A1..E2
    assert row["moves"] > 2
    assert strength.main(argv) == 0 and len(out.read_text().splitlines()) == 1  # resumed: nothing to play


def test_series_game_needs_exactly_one_sgf_with_the_logged_moves():
    two = b"(;GM[1]SZ[5];B[cc];W[cb])"
    assert len(series.series_game([two, b"(;GM[1]SZ[5];B[cc])"], 2).moves) == 2
    with pytest.raises(ValueError, match="0 of 1"):
        series.series_game([two], 3)


def estimate_audit(tmp_path, monkeypatch, estimate: str) -> tuple:
    """(argv of an ``audit --estimate`` of the 5x5 series "t" at 0:10:1 with its log and SGFs under tmp_path, its
    log path, its output path), GNU Go replaced by a fake answering ``estimate_score`` with ``estimate``."""
    gnugo = fake_gtp_engine(tmp_path / "gnugo.py", replies={"estimate_score": estimate})
    monkeypatch.setattr(series, "find_gnugo", lambda: gnugo)
    log, out = tmp_path / "log.jsonl", tmp_path / "estimates.jsonl"
    argv = ["audit", "--log", str(log), "--sgf-dir", str(tmp_path / "sgf"), "--label", "t", "--time", "0:10:1",
            "--size", "5", "--estimate", "--out", str(out)]
    return argv, log, out


def test_audit_estimate_asks_gnugo_for_the_score_of_a_clocked_series(tmp_path, monkeypatch, capsys):
    argv, log, out = estimate_audit(tmp_path, monkeypatch, "W+12.5 (upper bound: 14.0, lower: 11.0)")
    base = {"strategy": "rave", "playouts": None, "label": "t", "size": 5, "time": "0:10:1"}
    rows = [dict(base, game=0, jaxgo_colour="black", jaxgo_won=False, reason="resign", moves=2),
            dict(base, game=1, jaxgo_colour="white", jaxgo_won=False, reason="resign", moves=3)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for index, moves in ((0, ";B[cc];W[cb]"), (1, ";B[cc];W[cb];B[dd]")):
        sgf = tmp_path / "sgf" / "rave_0-10-1_0000" / f"game_{index:04d}.sgf"
        sgf.parent.mkdir(parents=True, exist_ok=True)
        sgf.write_text(f"(;GM[1]SZ[5]KM[7.5]{moves})")
    assert strength.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lost_by_resigning"] == 2 and summary["estimated"] == 2
    assert summary["margins"] == [-12.5, 12.5] and summary["estimated_behind"] == 1  # W+12.5: Black behind
    assert [json.loads(line)["resigned_at"] for line in out.read_text().splitlines()] == [2, 3]
    # a clocked series cannot be played on, and one budget must be named
    assert strength.main([a for a in argv if a != "--estimate"]) == 2
    assert strength.main(argv[:argv.index("--time")] + argv[argv.index("--size"):]) == 2


def test_audit_tells_apart_the_same_game_number_of_two_runs(tmp_path, monkeypatch, capsys):
    # a series extended by a second run: game 0 twice, each run's SGFs in its own folder
    argv, log, out = estimate_audit(tmp_path, monkeypatch, "W+4.5")
    base = {"strategy": "rave", "playouts": None, "label": "t", "size": 5, "time": "0:10:1", "game": 0,
            "jaxgo_colour": "black", "jaxgo_won": False, "reason": "resign"}
    log.write_text("".join(json.dumps(dict(base, moves=moves)) + "\n" for moves in (2, 3)))
    for run, moves in (("first", ";B[cc];W[cb]"), ("second", ";B[cc];W[cb];B[dd]")):
        sgf = tmp_path / "sgf" / run / "rave_0-10-1_0000" / "game_0000.sgf"
        sgf.parent.mkdir(parents=True)
        sgf.write_text(f"(;GM[1]SZ[5]KM[7.5]{moves})")
    assert strength.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["estimated"] == 2 and summary["margins"] == [-4.5, -4.5]
    assert sorted(json.loads(line)["resigned_at"] for line in out.read_text().splitlines()) == [2, 3]
    assert strength.main(argv) == 0 and len(out.read_text().splitlines()) == 2  # resumed: nothing to estimate


def test_estimate_margin_reads_gnugo_scores():
    assert strength_audit.estimate_margin("B+3.5 (upper bound: 5, lower: 2)", "black") == 3.5
    assert strength_audit.estimate_margin("B+3.5", "white") == -3.5
    assert strength_audit.estimate_margin("0", "white") == 0.0
    with pytest.raises(ValueError):
        strength_audit.estimate_margin("hello", "black")


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
        strength.main(argv)
    assert strength.main(argv + ["--sgf-folder", "series"]) == 0
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

    margins = strength_audit.jaxgo_margins(record, "white", estimate)
    assert asked == [2, 4, 6] and margins == [(2, -4.0), (4, -6.0), (6, -9.0)]  # only after White's moves
    assert strength_audit.worst_drop(margins) == (6, 3.0) and strength_audit.turning_move(margins) == 2
    black = strength_audit.jaxgo_margins(record, "black", estimate)
    assert black == [(1, -1.0), (3, -2.0), (5, -12.0)] and strength_audit.worst_drop(black) == (5, 10.0)
    assert strength_audit.turning_move([(1, -3.0), (3, 2.0), (5, -1.0)]) == 5
    assert strength_audit.turning_move([(1, -3.0), (3, 0.0)]) is None
    assert strength_audit.worst_drop([(1, 1.0), (3, 5.0)]) == (None, 0.0)


def test_swings_estimates_every_game_of_a_series_and_resumes(tmp_path, monkeypatch, capsys):
    gnugo = fake_gtp_engine(tmp_path / "gnugo.py", replies={"estimate_score": "W+3.5 (upper bound: 4, lower: 3)"})
    monkeypatch.setattr(series, "find_gnugo", lambda: gnugo)
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
    assert strength.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["game"] for r in lines] == [0, 1]  # the forfeit is not a game to read
    assert lines[0]["margins"] == [[1, -3.5], [3, -3.5]] and lines[1]["margins"] == [[2, 3.5]]
    assert summary["lost"]["behind_for_good"] == 1 and summary["lost"]["median_turning_move"] == 1
    assert summary["won"]["games"] == 1 and summary["won"]["behind_for_good"] == 0
    assert strength.main(argv) == 0 and len(out.read_text().splitlines()) == 2  # nothing left to estimate
