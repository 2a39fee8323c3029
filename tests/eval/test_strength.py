"""jaxgo/eval/strength.py (``jaxgo eval strength run|report``): series kept apart by board, label, budget and
clock; a rerun resumes; the report's table reads old and new logs alike; baselines and reference points."""

from __future__ import annotations

import gzip
import json

import pytest

from jaxgo.eval import series, strength
from support import fake_gtp_engine


def test_engine_command_takes_its_budget_from_playouts_or_the_clock():
    assert "--playouts 3000" in series.engine_command("rave", 3000)
    clocked = series.engine_command("rave", None, "--bias 1", engine="jaxgo gtp", size=19)
    assert "--playouts" not in clocked and "--size 19" in clocked and clocked.endswith("--bias 1")


def test_run_resumes_and_report_keeps_series_apart(tmp_path, monkeypatch, capsys):
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy")  # jaxgo's place: plays; GNU Go's: passes
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    argv = ["run", "--strategies", "rave", "--playouts", "50", "--games", "2", "--size", "5", "--label", "t",
            "--engine", fake, "--log", str(log)]
    assert strength.main(argv) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["jaxgo_colour"] for r in records] == ["black", "white"] and all(r["jaxgo_won"] for r in records)
    assert all(r["size"] == 5 and r["time"] is None for r in records)
    assert "2 of 2" in capsys.readouterr().err
    assert strength.main(argv) == 0  # nothing left to play
    assert len(log.read_text().splitlines()) == 2
    old = tmp_path / "old.jsonl.gz"  # a log from before sizes and clocks were recorded
    with gzip.open(old, "wt") as out:
        out.write(json.dumps({"strategy": "rave", "playouts": 10000, "label": "", "jaxgo_won": False}) + "\n")
    strength.main(["report", "--log", str(log), str(old.with_suffix(""))])
    table = capsys.readouterr().out
    assert "| 5x5 | rave (t) | 50 playouts | 2 | 2 | 1.00 |" in table
    assert "| 9x9 | rave | 10000 playouts | 1 | 0 | 0.00 |" in table


def test_clock_series_are_their_own_rows(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    rows = [{"strategy": "rave", "playouts": None, "time": "0:2:1", "size": 9, "label": "", "jaxgo_won": w}
            for w in (True, False, True)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    strength.main(["report", "--log", str(log)])
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
    strength.main(["report", "--log", str(log), "--baseline", "default", "--forest", str(forest)])
    lines = capsys.readouterr().out.splitlines()
    compared = [line for line in lines if "(100 games)" in line]
    # 64 of 100 against 70 of 100: -0.06, Newcombe -0.19 to +0.07; a series with no baseline at its budget is left out
    assert compared == [
        "| 9x9 | rave (prior) | 3000 playouts | 10 | 0.90 | default (100 games) | 0.60 | +0.30 (-0.02 to +0.43) |",
        "| 9x9 | rave (prune) | 10000 playouts | 100 | 0.64 | default (100 games) | 0.70 | -0.06 (-0.19 to +0.07) |"]
    assert not any("lonely" in line and "default (" in line for line in lines)
    assert forest.read_bytes().startswith(b"\x89PNG")
    # a change on top of another: prune=prior sets prune against prior (none at 10k: left out), prior stays a change
    strength.main(["report", "--log", str(log), "--baseline", "default", "prune=prior"])
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("| 9x9 | rave (prune)") and "games) |" in line for line in lines)
    assert any(line.startswith("| 9x9 | rave (prior)") and "default (100 games)" in line for line in lines)
    series = {(9, label, "rave", 1000, None): games(label, 1000, wins, 4) for label, wins in (("a", 3), ("b", 1),
                                                                                              ("c", 2))}
    rows = strength.ablation_rows(series, ["a", "c=b"])
    assert [(r["label"], r["baseline"]) for r in rows] == [("b", "a"), ("c", "b")]


def test_pooled_runs_of_one_configuration_are_one_series_and_one_baseline(tmp_path, capsys):
    def games(label, wins, n, playouts=2000):
        return [{"strategy": "rave", "playouts": playouts, "time": None, "size": 9, "label": label,
                 "jaxgo_won": i < wins} for i in range(n)]

    log = tmp_path / "log.jsonl"
    rows = games("day1", 21, 100) + games("day2", 13, 100) + games("change", 18, 100) + games("day1", 5, 10, 10000)
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    strength.main(["report", "--log", str(log), "--pool", "both=day1+day2", "--baseline", "both"])
    lines = capsys.readouterr().out.splitlines()
    assert "| 9x9 | rave (both) | 2000 playouts | 200 | 34 | 0.17 | 0.12-0.23 | 0 |" in lines
    assert "| 9x9 | rave (both) | 10000 playouts | 10 | 5 | 0.50 | 0.24-0.76 | 0 |" in lines
    assert not any("(day1)" in line or "(day2)" in line for line in lines)
    assert "| 9x9 | rave (change) | 2000 playouts | 100 | 0.18 | both (200 games) | 0.17 | +0.01 (-0.08 to +0.11) |" \
        in lines
    with pytest.raises(ValueError, match="expected NAME=LABEL"):
        strength.pooled({}, ["both"])


def test_reference_points_are_name_playouts_and_rate(tmp_path, capsys):
    assert strength.parse_reference("MoGo (2011): prior:10000:0.82") == ("MoGo (2011): prior", 10000, 0.82)
    with pytest.raises(ValueError, match="NAME:PLAYOUTS:RATE"):
        strength.parse_reference("10000:0.82")
    log = tmp_path / "log.jsonl"
    game = {"strategy": "rave", "playouts": 1000, "label": "d", "size": 9, "jaxgo_won": True}
    log.write_text(json.dumps(game) + "\n")
    plot = tmp_path / "curve.png"
    assert strength.main(["report", "--log", str(log), "--plot", str(plot), "--reference", "MoGo:1000:0.5"]) == 0
    assert plot.read_bytes().startswith(b"\x89PNG")
