"""scripts/strength_table.py: series kept apart by board, label, budget and clock; a rerun resumes; the report's
table reads old and new logs alike."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from support import fake_gtp_engine, load_script

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "strength_table.py"


@pytest.fixture
def strength_table():
    module = load_script(SCRIPT)
    yield module
    sys.modules.pop(module.__name__, None)


def test_engine_command_takes_its_budget_from_playouts_or_the_clock(strength_table):
    assert "--playouts 3000" in strength_table.engine_command("rave", 3000)
    clocked = strength_table.engine_command("rave", None, "--bias 1", engine="jaxgo gtp", size=19)
    assert "--playouts" not in clocked and "--size 19" in clocked and clocked.endswith("--bias 1")


def test_run_resumes_and_report_keeps_series_apart(strength_table, tmp_path, monkeypatch, capsys):
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


def test_clock_series_are_their_own_rows(strength_table, tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    rows = [{"strategy": "rave", "playouts": None, "time": "0:2:1", "size": 9, "label": "", "jaxgo_won": w}
            for w in (True, False, True)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    strength_table.main(["report", "--log", str(log)])
    assert "| 9x9 | rave | clock 0:2:1 | 3 | 2 | 0.67 |" in capsys.readouterr().out
