"""jaxgo/eval/rave_bias.py: positions drawn from an SGF folder, the per-depth table, the JSON summary and the plot."""

from __future__ import annotations

import json
import os

import pytest

from jaxgo.eval import rave_bias as script

os.environ.setdefault("JAX_PLATFORMS", "cpu")

GAME = "(;GM[1]FF[4]SZ[5]KM[0.5];B[cc];W[bc];B[cb];W[bb];B[dc];W[cd];B[dd];W[bd])"


def test_positions_follow_the_move_window():
    from jaxgo.go.sgf import load_sgf

    records = [load_sgf(GAME.encode()), load_sgf(b"(;GM[1]SZ[5];B[cc])")]
    picks = script.sample_positions(records, 20, first_move=3, last_move=6, seed=1)
    assert all(record is records[0] and 3 <= number <= 6 for record, number in picks)  # the short game never
    with pytest.raises(ValueError):
        script.sample_positions(records, 1, first_move=20, last_move=30, seed=1)


def test_a_run_writes_its_summary_and_plot(tmp_path, capsys):
    from jaxgo.search.config import SearchConfig

    games = tmp_path / "games"
    games.mkdir()
    (games / "a.sgf").write_text(GAME)
    (games / "broken.sgf").write_text("(;GM[1]SZ[5];B[zz")
    out, png = tmp_path / "bias.json", tmp_path / "bias.png"
    argv = ["--sgf", str(games), "--positions", "2", "--playouts", "512", "--first-move", "2", "--last-move", "5",
            "--min-visits", "4", "--playout-policy", "light", "--bias", "0", "--prior", "0", "0",
            "--search-option", "late_playout_policy=none", "--search-option", "leaves_per_batch=8",
            "--out", str(out), "--plot", str(png)]
    assert script.main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    summary = json.loads(out.read_text())
    assert summary["games"] == 1 and summary["broken"] == 1 and summary["positions"] == 2
    assert summary["edges"] == printed["edges"] > 0
    assert summary["edges"] == sum(row["edges"] for row in summary["by_depth"])
    assert summary["rave_c3"] == pytest.approx(summary["b2"] / summary["sigma2"])
    assert summary["config_rave_c3"] == SearchConfig().rave_c3 and len(summary["rave_c3_ci95"]) == 2
    assert png.stat().st_size > 1000
    assert script.main(argv[:2] + ["--strategy", "uct"]) == 2  # the estimate needs a RAVE search
    assert script.main(argv[:2] + ["--search-option", "nonsense=1"]) == 2
