"""jaxgo/eval/move_quality.py: positions from SGF records, GNU Go's top_moves as the reference (a scripted stand-in
here), per-engine scores and the paired difference to the first engine; Pachi as the judge (the real one)."""

from __future__ import annotations

import json

import pytest

from jaxgo.eval import move_quality, series
from jaxgo.go.gtp_client import GtpProcess
from support import fake_gtp_engine

SGF = b"(;FF[4]GM[1]SZ[5]KM[0.5];B[cc];W[bb];B[dd];W[db])"


def test_positions_follow_the_records_and_skip_short_ones(tmp_path):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "a.sgf").write_bytes(SGF)
    (tmp_path / "games" / "broken.sgf").write_bytes(b"(;FF[4]GM[1]SZ[5];B[cc")
    records = move_quality.sgf_records([str(tmp_path / "games")])
    assert len(records) == 1
    found = move_quality.positions(records, [0, 2, 9])
    assert [p["id"].rsplit("@", 1)[1] for p in found] == ["0", "2"]
    assert found[1]["moves"] == [["B", "C3"], ["W", "B4"]] and found[1]["komi"] == 0.5
    assert [p["played"] for p in found] == ["C3", "D2"]  # the record's next move
    assert move_quality.to_move(found[0]) == "black" and move_quality.to_move(found[1]) == "black"
    assert move_quality.to_move({"moves": [["B", "C3"]]}) == "white"


def test_scores_and_intervals():
    top = move_quality.parse_top_moves("C6 20.0 k2 10.0")
    assert top == {"C6": 20.0, "K2": 10.0}
    assert [move_quality.score(m, top) for m in ("C6", "K2", "A1")] == [1.0, 0.5, 0.0]
    assert move_quality.score("A1", {}) == 0.0
    mean, low, high = move_quality.mean_interval([0.0, 1.0, 0.5, 0.5])
    assert mean == 0.5 and low < 0.5 < high


def test_main_scores_engines_against_the_reference(tmp_path, monkeypatch, capsys):
    reference_log = tmp_path / "reference.log"
    # a stand-in for GNU Go (its reg_genmove C3, top_moves "C3 10 D4 5" everywhere), and two engines without
    # reg_genmove that always play C3 or D4
    gnugo_replies = {"reg_genmove": "C3", "top_moves": "C3 10.0 D4 5.0"}
    reference = fake_gtp_engine(tmp_path / "reference.py", replies=gnugo_replies, log=reference_log)
    monkeypatch.setattr(move_quality, "find_gnugo", lambda: reference)
    good, fair = (fake_gtp_engine(tmp_path / f"{move}.py", replies={"reg_genmove": "? unknown command",
                                                                    "genmove": move}) for move in ("C3", "D4"))
    sgf = tmp_path / "a.sgf"
    sgf.write_bytes(SGF)
    out = tmp_path / "rows.jsonl"
    argv = ["--sgf", str(sgf), "--moves", "1", "3", "--records", "1", "--engine", f"good={good}",
            "--engine", f"fair={fair}", "--out", str(out)]
    assert move_quality.main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # the record goes on with B4 after one move and D4 after three: "good" (always C3) matches neither, "fair"
    # (always D4) the second
    assert lines[0] == {"engine": "good", "positions": 2, "top1": 2, "top10": 2, "record": 0, "mean_ratio": 1.0,
                        "ci95": [1.0, 1.0]}
    assert lines[1]["mean_ratio"] == 0.5 and lines[1]["top1"] == 0 and lines[1]["top10"] == 2
    assert lines[1]["record"] == 1
    assert lines[1]["diff_vs"] == "good" and lines[1]["diff"] == -0.5
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["gnugo"], r["good"], r["fair"]) for r in rows] == [("C3", "C3", "D4")] * 2
    assert [r["record"] for r in rows] == ["B4", "D4"]
    # the reference is cached beside --out: a second run asks the stand-in for nothing
    asked = reference_log.read_text().count("reg_genmove")
    assert asked == 2
    assert move_quality.main(argv) == 0
    assert reference_log.read_text().count("reg_genmove") == asked


def test_main_needs_something_to_score(tmp_path):
    sgf = tmp_path / "a.sgf"
    sgf.write_bytes(SGF)
    with pytest.raises(SystemExit):
        move_quality.main(["--sgf", str(sgf)])
    with pytest.raises(SystemExit):
        move_quality.main(["--sgf", str(sgf), "--engine", "no-command"])


def test_policy_moves_are_legal_points_of_the_replayed_positions():
    from jaxgo.go.coords import gtp_to_point
    from jaxgo.go.sgf import load_sgf

    found = move_quality.positions([("a", load_sgf(SGF))], [0, 3])
    moves = move_quality.policy_moves(found)
    assert len(moves) == 2
    for position, move in zip(found, moves):
        game = move_quality.replay(position["record"], move_number=position["number"] + 1)
        assert move != "PASS" and game.legal_moves(game.to_play)[gtp_to_point(move, 5)]
        assert [move] not in [m[1:] for m in position["moves"]]


SGF9 = b"(;FF[4]GM[1]SZ[9]KM[7.5];B[ee];W[cc];B[gc];W[cg];B[gg])"


def test_pachi_judges_the_engines_moves_by_its_win_rates(tmp_path, monkeypatch, capsys):
    if series.find_pachi() is None:
        pytest.skip("Pachi is not built (bash scripts/pachi.sh builds it from ../shared/peers/pachi)")
    # two engines: one plays the first line (A9: a lost tempo), one the centre-side point D5 (a normal move)
    poor, fair = (fake_gtp_engine(tmp_path / f"{move}.py", replies={"reg_genmove": move}) for move in ("A9", "D5"))
    sgf = tmp_path / "a.sgf"
    sgf.write_bytes(SGF9)
    out = tmp_path / "rows.jsonl"
    argv = ["--sgf", str(sgf), "--moves", "2", "4", "--engine", f"poor={poor}", "--engine", f"fair={fair}",
            "--judge", "pachi", "--judge-playouts", "4000", "--judge-threads", "1", "--out", str(out)]
    assert move_quality.main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["engine"] for line in lines] == ["poor", "fair"] and all(line["positions"] == 2 for line in lines)
    assert lines[0]["mean_loss"] > lines[1]["mean_loss"] + 0.05 and lines[0]["mean_loss"] > 0.1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(0.0 <= v <= 1.0 for row in rows for v in row["values"].values())
    assert all({row["pachi"], "A9", "D5"} <= set(row["values"]) for row in rows)
    # every (position, move) is searched once: the cache beside --out answers a second run without Pachi
    monkeypatch.setattr(move_quality, "find_pachi", lambda: None)
    assert move_quality.main(argv) == 0
    assert [json.loads(line)["mean_loss"] for line in capsys.readouterr().out.splitlines()] == \
        [line["mean_loss"] for line in lines]
    with pytest.raises(SystemExit):
        move_quality.main(argv[:-4] + ["--judge-playouts", "100"])


def test_a_move_the_judge_answers_without_a_search_is_unjudged(tmp_path):
    judge = fake_gtp_engine(tmp_path / "judge.py", replies={"genmove": "pass",
                                                            "pachi-result": "? unknown pachi-result command"})
    position = {"size": 5, "komi": 0.5, "moves": [["B", "C3"], ["W", "pass"]]}
    with GtpProcess(judge, timeout=30) as process:
        assert move_quality.pachi_value(process, position, "pass") is None
        assert move_quality.pachi_value(process, position, "resign") == 0.0


def test_positions_with_an_unjudged_move_are_left_out_for_every_engine(tmp_path, monkeypatch, capsys):
    poor, fair = (fake_gtp_engine(tmp_path / f"{move}.py", replies={"reg_genmove": move}) for move in ("A9", "D5"))
    sgf = tmp_path / "a.sgf"
    sgf.write_bytes(SGF9)
    ids = [p["id"] for p in move_quality.positions(move_quality.sgf_records([str(sgf)]), [2, 4])]
    cache = tmp_path / "judge.jsonl"
    cache.write_text("\n".join(json.dumps(row) for row in [
        {"id": ids[0], "move": "E5", "values": {"E5": 0.6, "A9": 0.3, "D5": 0.5}},
        {"id": ids[1], "move": "E5", "values": {"E5": 0.6, "A9": None, "D5": 0.55}}]) + "\n")
    monkeypatch.setattr(move_quality, "find_pachi", lambda: None)  # everything is in the cache
    argv = ["--sgf", str(sgf), "--moves", "2", "4", "--engine", f"poor={poor}", "--engine", f"fair={fair}",
            "--judge", "pachi", "--judge-playouts", "4000", "--reference", str(cache)]
    assert move_quality.main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["positions"], line["unjudged"]) for line in lines] == [(1, 1), (1, 1)]
    assert [line["mean_loss"] for line in lines] == [0.3, 0.1] and lines[1]["diff"] == -0.2
