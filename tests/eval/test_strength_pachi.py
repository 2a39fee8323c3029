"""jaxgo/eval/strength.py against Pachi and with handicap: the command line, Pachi's GTP command, the log rows and
the report's series, the plot's layout, and a short real game against Pachi where scripts/pachi.sh built it."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from jaxgo.eval import series, strength
from jaxgo.match import run_match
from support import fake_gtp_engine


def test_pachi_command_plays_fixed_playouts_or_the_clock():
    assert series.pachi_command("/p/pachi", 10000, 2, 7) == "/p/pachi -D -d 0 -s 7 -t =10000 threads=2"
    assert series.pachi_command("/p/pachi", None, 1) == "/p/pachi -D -d 0 -s 0 threads=1"  # the GTP clock
    assert series.opponent_command("gnugo", 8) is None or "--level 8" in series.opponent_command("gnugo", 8)
    with pytest.raises(ValueError, match="unknown opponent"):
        series.opponent_command("leela")


def test_a_missing_pachi_is_a_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(series, "find_pachi", lambda: None)
    argv = ["run", "--opponent", "pachi", "--playouts", "1000", "--log", str(tmp_path / "log.jsonl")]
    assert strength.main(argv) == 2
    assert "scripts/pachi.sh" in capsys.readouterr().err
    assert not (tmp_path / "log.jsonl").exists()


@pytest.mark.parametrize("extra, message", [
    (["--opponent-playouts", "5000"], "--opponent-playouts is for --opponent pachi"),
    (["--opponent", "pachi", "--playouts", "200"], "at least 500 playouts"),
    (["--opponent", "pachi", "--time", "0:2:1", "--opponent-playouts", "1000"], "exclude each other"),
    (["--opponent", "pachi", "--playouts", "1000", "--opponent-threads", "0"], "--opponent-threads"),
    (["--size", "9", "--handicap", "10"], "--handicap 10"),
])
def test_options_that_do_not_go_together_are_refused(extra, message, capsys, tmp_path):
    assert strength.main(["run", "--log", str(tmp_path / "log.jsonl")] + extra) == 2
    assert message in capsys.readouterr().err


def test_series_against_pachi_are_logged_and_reported_apart(tmp_path, monkeypatch, capsys):
    commands = tmp_path / "pachi.log"
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy", log=commands)  # jaxgo plays, Pachi passes
    monkeypatch.setattr(series, "find_pachi", lambda: fake)
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    base = ["run", "--strategies", "rave", "--playouts", "600", "--games", "2", "--size", "5", "--engine", fake,
            "--log", str(log)]
    assert strength.main(base + ["--opponent", "pachi", "--opponent-threads", "1"]) == 0
    assert strength.main(base + ["--opponent", "pachi", "--opponent-playouts", "900"]) == 0
    assert strength.main(base) == 0  # GNU Go: a series of its own in the same log
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["opponent"], r.get("opponent_playouts"), r.get("opponent_threads")) for r in records] == [
        ("pachi", 600, 1), ("pachi", 600, 1), ("pachi", 900, 2), ("pachi", 900, 2), ("gnugo", None, None),
        ("gnugo", None, None)]
    assert all(r["jaxgo_won"] for r in records) and records[0]["level"] is None and records[4]["level"] == 10
    assert "5x5 rave 600  vs pachi =900" in capsys.readouterr().err
    strength.main(["report", "--log", str(log)])
    table = capsys.readouterr().out
    assert "| 5x5 | rave vs pachi | 600 playouts | 2 | 2 | 1.00 |" in table
    assert "| 5x5 | rave vs pachi =900 | 600 playouts | 2 | 2 | 1.00 |" in table
    assert "| 5x5 | rave | 600 playouts | 2 | 2 | 1.00 |" in table


def test_handicap_games_give_the_opponent_black_and_the_stones(tmp_path, monkeypatch, capsys):
    commands = tmp_path / "commands.log"
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy", log=commands)
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    argv = ["run", "--strategies", "rave", "--playouts", "50", "--games", "2", "--size", "9", "--handicap", "2",
            "--engine", fake, "--log", str(log), "--sgf-dir", str(tmp_path / "sgf")]
    assert strength.main(argv) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["jaxgo_colour"] for r in records] == ["white", "white"]
    assert all(r["handicap"] == 2 and r["komi"] == 0.5 for r in records)
    sent = commands.read_text().splitlines()
    assert sent.count("set_free_handicap G7 C3") == 4 and "komi 0.5" in sent  # both engines, both games
    sgf = (tmp_path / "sgf" / "rave_50_0000" / "game_0000.sgf").read_text()
    assert "AB[" in sgf and "KM[0.5]" in sgf and ";W[" in sgf.split("AB[")[1][:40]  # White moves first
    strength.main(["report", "--log", str(log)])
    assert "| 9x9 | rave vs gnugo H2 | 50 playouts | 2 |" in capsys.readouterr().out


@pytest.mark.parametrize("handicap, seeds", [(0, ["1000", "1000", "1002", "1002"]),
                                             (2, ["10000", "10001", "10020", "10021"])])
def test_each_handicap_game_gets_its_own_seed(tmp_path, monkeypatch, handicap, seeds):
    """jaxgo plays White in every handicap game, so the two games of a round would repeat each other with one
    seed (the engines are deterministic at fixed playouts); even games differ by colour and keep the round's."""
    fake = fake_gtp_engine(tmp_path / "engine.py", plays_if="--strategy")
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
    played = []

    def recording_match(a_cmd, b_cmd, games, **options):
        played.extend(a_cmd.replace("{seed}", str(index)) for index in range(games))
        return run_match(a_cmd, b_cmd, games, **options)

    monkeypatch.setattr(strength, "run_match", recording_match)
    argv = ["run", "--strategies", "rave", "--playouts", "50", "--games", "4", "--size", "9", "--handicap",
            str(handicap), "--engine", fake, "--log", str(tmp_path / "log.jsonl")]
    assert strength.main(argv) == 0
    assert [command.split("--seed ")[1].split()[0] for command in played] == seeds


def test_plot_legend_sits_beside_the_axes_and_tick_labels_do_not_collide():
    points = {f"rave ({label})": [(p, 0.5, 0.4, 0.6, 10) for p in (1000, 2000, 3000, 10000, 30000)]
              for label in ("a", "b", "c")}
    games = {("key",): [{"opponent": "pachi", "level": None}]}
    fig = strength.curve_figure(points, games, 9, [("MoGo", 1000, 0.8)])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1  # beside the points, not over them
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert [t.get_text() for t in labels] == ["1k", "2k", "3k", "10k", "30k"][:len(labels)] and len(labels) >= 4
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))
    assert "Pachi" in ax.get_title() and strength.spaced_ticks([1000, 1200, 2000, 2500, 10000]) == [1000, 2000,
                                                                                                      10000]


def test_a_short_real_game_against_pachi():
    binary = series.find_pachi()
    if binary is None:
        pytest.skip("Pachi is not built (bash scripts/pachi.sh builds it from ../shared/peers/pachi)")
    from jaxgo.match import play_game

    jaxgo = f"{shlex.quote(sys.executable)} -m jaxgo gtp --quiet --size 9 --strategy random --seed 1"
    record = play_game(jaxgo, series.pachi_command(binary, 500, 1, 3), size=9, komi=7.5, max_moves=12,
                       timeout=60.0)
    assert record.get("forfeit") is None and record["moves"] == 12 and record["reason"] == "move limit"


def test_a_pachi_series_is_picked_by_its_opponent_and_audited_by_estimate_only(tmp_path, monkeypatch, capsys):
    fake = fake_gtp_engine(tmp_path / "engine.py")
    monkeypatch.setattr(series, "find_gnugo", lambda: fake)
    log = tmp_path / "log.jsonl"
    rows = [{"strategy": "rave", "playouts": 2000, "label": "d", "size": 9, "time": None, "opponent": opponent,
             "opponent_playouts": 2000 if opponent == "pachi" else None, "jaxgo_won": False, "reason": "resign",
             "moves": 40, "game": 0, "jaxgo_colour": "black"} for opponent in ("pachi", "gnugo")]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "sgf").mkdir()
    argv = ["audit", "--log", str(log), "--sgf-dir", str(tmp_path / "sgf"), "--label", "d", "--playouts", "2000",
            "--series-opponent", "pachi", "--out", str(tmp_path / "out.jsonl")]
    assert strength.main(argv) == 2
    assert "takes --estimate" in capsys.readouterr().err
    import argparse

    picked = series.series_selection(argparse.Namespace(sgf_dir=str(tmp_path / "sgf"), sgf_folder=None, size=9,
                                                        label="d", strategy="rave", playouts=2000, time=None,
                                                        log=str(log), series_opponent="pachi"))[1]
    assert [r["opponent"] for r in picked] == ["pachi"]
