"""The full GTP engine: search-based genmove, handicap, clock, dead stones, ownership, cleanup, analysis hooks."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point  # noqa: E402
from jaxgo.gtp.engine import GtpEngine, build_parser, fixed_handicap_points, search_options  # noqa: E402

SMALL = {"leaves_per_batch": 16, "playouts_per_leaf": 8, "flat_playouts_per_move": 8}


def make(size=5, komi=0.5, strategy="rave", playouts=256, seconds=None, seed=0):
    return GtpEngine(Rules(size=size, komi=komi), seed=seed, strategy=strategy, playouts=playouts, seconds=seconds,
                     search_options=SMALL)


def ask(engine, line):
    response = engine.handle(line)
    assert response is not None and response.startswith("=") and response.endswith("\n\n"), response
    return response[2:-2] if response.startswith("= ") else response.split(" ", 1)[1][:-2]


def fail(engine, line):
    response = engine.handle(line)
    assert response is not None and response.startswith("?"), response
    return response.split(" ", 1)[1][:-2]


def setup(engine, rows):
    size = len(rows)
    for colour, letter in ((BLACK, "X"), (WHITE, "O")):
        points = [r * size + c for r, row in enumerate(rows) for c, ch in enumerate(row.split()) if ch == letter]
        if points:
            engine.game.setup_stones(colour, points)


# A dead white stone at D1 inside Black's living group; White lives on the A/B columns.
DEAD = [
    ". O X . .",
    "O O X X X",
    ". O X . X",
    "O O X X X",
    ". O X O .",
]


def test_commands_listed_with_gtp_names():
    engine = make()
    listed = ask(engine, "list_commands").split("\n")
    for name in ["genmove", "reg_genmove", "fixed_handicap", "place_free_handicap", "set_free_handicap",
                 "time_settings", "time_left", "kgs-time_settings", "final_score", "final_status_list",
                 "kgs-genmove_cleanup", "undo", "loadsgf", "showboard", "printsgf", "jaxgo-ownership",
                 "gogui-analyze_commands"]:
        assert name in listed, name
        assert ask(engine, f"known_command {name}") == "true"
    assert ask(engine, "known_command kgs_genmove_cleanup") == "false"
    assert fail(engine, "kgs_genmove_cleanup b") == "unknown command"


def test_genmove_searches_and_captures():
    engine = make()
    setup(engine, ["X X X X .", "X O O O X", "X O O O X", "X X . X X", ". . . . ."])
    assert ask(engine, "reg_genmove b") == "C2"
    assert engine.game.moves == []  # reg_genmove does not play
    assert ask(engine, "genmove b") == "C2"
    assert engine.game.moves == [(BLACK, gtp_to_point("C2", 5))]
    assert engine.last_search.playouts >= 256


@pytest.mark.parametrize("strategy", ["uct", "mc", "amaf", "pp", "depth2", "random"])
def test_every_strategy_plays_legal_moves(strategy):
    engine = make(strategy=strategy, playouts=200)
    for i in range(3):
        colour = "b" if i % 2 == 0 else "w"
        move = ask(engine, f"genmove {colour}")
        assert move != "resign"
    assert len(engine.game.moves) == 3


def test_passes_after_opponent_pass_when_winning():
    engine = make()
    setup(engine, ["X X X X X", "X . X . X", "X X X X X", ". . . . .", ". . . . ."])
    ask(engine, "play w pass")
    assert ask(engine, "genmove b") == "pass"


def test_resign_in_hopeless_position():
    engine = GtpEngine(Rules(size=5, komi=0.5), strategy="rave", playouts=512,
                       search_options=dict(SMALL, resign_min_playouts=256))
    setup(engine, ["O O O O O", "O . O . O", "O O O O O", "O . O . O", "O O O O ."])
    assert ask(engine, "genmove b") in ("resign", "pass")


def test_fixed_and_free_handicap():
    engine = make(size=9)
    assert ask(engine, "fixed_handicap 2") == "G7 C3"
    assert engine.game.to_play == WHITE and engine.game.moves == []
    assert fail(engine, "fixed_handicap 3") == "board not empty"
    ask(engine, "clear_board")
    assert set(ask(engine, "fixed_handicap 9").split()) == {"C3", "E3", "G3", "C5", "E5", "G5", "C7", "E7", "G7"}
    ask(engine, "clear_board")
    assert fail(engine, "fixed_handicap 1") == "invalid number of stones"
    assert ask(engine, "set_free_handicap A1 B2 J9") == ""
    assert set(ask(engine, "list_stones b").split()) == {"A1", "B2", "J9"}
    ask(engine, "clear_board")
    assert len(ask(engine, "place_free_handicap 4").split()) == 4
    assert fixed_handicap_points(19, 4) == [gtp_to_point(v, 19) for v in ["Q16", "D4", "Q4", "D16"]]


def test_clock_budget_rule():
    engine = make(size=9, playouts=None)
    assert engine.move_budget(BLACK) == (3000, None)  # no clock: default playouts
    ask(engine, "time_settings 300 0 0")
    playouts, seconds = engine.move_budget(BLACK)
    assert playouts is None and seconds == pytest.approx(300 / 40.5)  # 81 empty points / 2
    ask(engine, "time_left b 20 0")
    assert engine.move_budget(BLACK)[1] == pytest.approx(20 / 40.5)
    ask(engine, "time_settings 0 30 5")
    ask(engine, "time_left b 10 2")
    assert engine.move_budget(BLACK)[1] == pytest.approx(0.8 * 10 / 2)
    ask(engine, "kgs-time_settings none")
    assert engine.time_settings is None
    ask(engine, "kgs-time_settings canadian 60 30 10")
    assert engine.time_settings == (60.0, 30.0, 10)
    ask(engine, "kgs-time_settings byoyomi 0 10 3")
    assert engine.time_settings == (0.0, 10.0, 1)
    assert fail(engine, "kgs-time_settings sudden") == "syntax error"
    assert fail(engine, "time_left b x 0") == "syntax error"
    fixed = make(size=9, playouts=None, seconds=0.3)
    ask(fixed, "time_settings 300 0 0")
    assert fixed.move_budget(BLACK) == (None, 0.3)  # --seconds wins over the clock


def test_final_status_list_and_score_remove_dead_stones():
    engine = make(komi=0.5)
    setup(engine, DEAD)
    assert ask(engine, "final_status_list dead") == "D1"
    alive = set(ask(engine, "final_status_list alive").split())
    assert "C1" in alive and "A4" in alive and "E2" in alive and "D1" not in alive
    assert ask(engine, "final_status_list seki") == ""
    assert fail(engine, "final_status_list maybe") == "syntax error"
    assert ask(engine, "final_score") == "B+1.5"  # Tromp-Taylor while the game goes on: D1 spoils E1
    ask(engine, "play b pass")
    ask(engine, "play w pass")
    assert ask(engine, "final_score") == "B+4.5"  # after two passes: D1 removed, 15 - 10 - 0.5


def test_cleanup_captures_dead_stones_before_passing():
    engine = make(komi=0.5, playouts=512)
    setup(engine, DEAD)
    ask(engine, "play w pass")
    assert engine._dead_stones_of(WHITE)
    assert ask(engine, "genmove b") == "pass"  # Black wins as the board stands (B+1.5)
    ask(engine, "undo")
    for _ in range(3):  # cleanup: Black keeps playing while D1 is on the board
        if engine.game.board()[4, 3] != WHITE:
            break
        assert ask(engine, "kgs-genmove_cleanup b") != "pass"
        ask(engine, "play w pass")


def test_ownership_and_analyze_commands():
    engine = make(komi=0.5)
    setup(engine, DEAD)
    text = ask(engine, "jaxgo-ownership 64")
    rows = [list(map(float, line.split())) for line in text.split("\n")]
    assert len(rows) == 5 and all(len(r) == 5 for r in rows)
    assert all(-1.0 <= v <= 1.0 for r in rows for v in r)
    assert rows[1][0] == -1.0 and rows[4][2] > 0.9 and rows[4][3] > 0.5  # D1's point ends up Black's
    assert fail(engine, "jaxgo-ownership zero") == "syntax error"
    entries = ask(engine, "gogui-analyze_commands").split("\n")
    assert "dboard/Ownership (playouts)/jaxgo-ownership" in entries
    for entry in entries:  # GoGui's format: type/label/command, every command known to the engine
        kind, label, command = entry.split("/", 2)
        assert kind in ("dboard", "gfx", "string") and label
        assert ask(engine, f"known_command {command.split()[0]}") == "true"


def test_printsgf_and_options():
    engine = make()
    ask(engine, "play b c3")
    text = ask(engine, "printsgf")
    assert text.startswith("(;FF[4]") and ";B[cc]" in text
    args = build_parser().parse_args(["--strategy", "pp", "--playouts", "500", "--seconds", "2", "--leaves", "32"])
    assert (args.strategy, args.playouts, args.seconds, args.leaves) == ("pp", 500, 2.0, 32)


def test_search_options_from_the_command_line():
    from jaxgo.search.mcts import SearchConfig

    assert search_options(build_parser().parse_args([])) == {}
    args = build_parser().parse_args(["--bias", "1", "--prior", "0", "20", "--playout-policy", "heavy",
                                      "--playouts-per-leaf", "2", "--resign-threshold", "0"])
    options = search_options(args)
    assert options == {"bias_c2": 1.0, "prior_even": 0.0, "prior_pattern": 20.0, "playouts": "heavy",
                       "playouts_per_leaf": 2, "resign_threshold": 0.0}
    config = SearchConfig(**options)  # every key is a SearchConfig field
    assert (config.prior_pattern, config.bias_c2) == (20.0, 1.0)
    with pytest.raises(SystemExit):  # --prior takes two numbers
        build_parser().parse_args(["--prior", "20"])


def test_genmove_follows_the_clock():
    engine = make(playouts=None)
    ask(engine, "genmove b")  # compile with the default budget
    ask(engine, "time_settings 10 0 0")
    ask(engine, "time_left w 2 0")  # 2 s left over max(20, 24 / 2) moves: 0.1 s
    ask(engine, "genmove w")
    assert engine.last_search.seconds < 1.0 and 0 < engine.last_search.playouts < 3000


def test_no_pass_after_an_early_pass_on_an_unsettled_board():
    # A lone stone wins by Tromp-Taylor, but the game is far from over: keep playing.
    engine = make(size=5, komi=0.5, playouts=64)
    ask(engine, "play b C3")
    ask(engine, "play w pass")
    assert not engine.passing_wins(BLACK)
    assert ask(engine, "genmove b") != "pass"
