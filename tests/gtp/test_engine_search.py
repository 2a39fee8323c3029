"""The full GTP engine: search-based genmove, handicap, clock, dead stones, ownership, cleanup, analysis hooks."""

from __future__ import annotations

import dataclasses
import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point  # noqa: E402
from jaxgo.gtp.cli import build_parser, engine_from_args  # noqa: E402
from jaxgo.gtp.engine import make_gtp_engine  # noqa: E402
from jaxgo.gtp.play import fixed_handicap_points  # noqa: E402
from jaxgo.search.config import SearchConfig, from_args  # noqa: E402

# Light playouts without progressive bias and small batches: these tests check the engine's rules, not strength.
SMALL = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=16, playouts_per_leaf=8,
                     flat_playouts_per_move=8)


def make(size=5, komi=0.5, strategy="rave", playouts=256, seconds=None, seed=0, **changes):
    config = dataclasses.replace(SMALL, strategy=strategy, **changes)
    return make_gtp_engine(Rules(size=size, komi=komi), config, seed=seed, playouts=playouts, seconds=seconds)


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
            engine.session.game.setup_stones(colour, points)


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
    # C2 is the one point of a capturing race: Black there takes six stones; anywhere else White there takes B2
    # and D2 and lives.
    setup(engine, ["X X X X .", "X O O O X", "X O O O X", "O X . X O", ". O . O ."])
    assert ask(engine, "reg_genmove b") == "C2"
    assert engine.session.game.moves == []  # reg_genmove does not play
    assert ask(engine, "genmove b") == "C2"
    assert engine.session.game.moves == [(BLACK, gtp_to_point("C2", 5))]
    assert engine.session.player.last_result.playouts >= 256


@pytest.mark.parametrize("strategy", ["uct", "mc", "amaf", "pp", "depth2", "random"])
def test_every_strategy_plays_legal_moves(strategy):
    engine = make(strategy=strategy, playouts=200)
    for i in range(3):
        colour = "b" if i % 2 == 0 else "w"
        move = ask(engine, f"genmove {colour}")
        assert move != "resign"
    assert len(engine.session.game.moves) == 3


def test_passes_after_opponent_pass_when_winning():
    engine = make()
    setup(engine, ["X X X X X", "X . X . X", "X X X X X", ". . . . .", ". . . . ."])
    ask(engine, "play w pass")
    assert ask(engine, "genmove b") == "pass"


def test_resign_in_hopeless_position():
    engine = make(playouts=512, resign_min_playouts=256)
    setup(engine, ["O O O O O", "O . O . O", "O O O O O", "O . O . O", "O O O O ."])
    assert ask(engine, "genmove b") in ("resign", "pass")


def test_fixed_and_free_handicap():
    engine = make(size=9)
    assert ask(engine, "fixed_handicap 2") == "G7 C3"
    assert engine.session.game.to_play == WHITE and engine.session.game.moves == []
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


def budget(engine, colour=BLACK):
    """The Player's (playouts, seconds) for ``colour``'s next move."""
    session = engine.session
    return session.player.budget(session.game, colour)


def clock_settings(engine):
    """(main, byo-yomi time, byo-yomi stones) of a limited clock, None without a time limit."""
    clock = engine.session.player.clock
    return (clock.main, clock.byo_time, clock.byo_stones) if clock.limited else None


def test_clock_budget_rule():
    engine = make(size=9, playouts=None)
    assert budget(engine) == (3000, None)  # no clock: default playouts
    ask(engine, "time_settings 300 0 0")
    playouts, seconds = budget(engine)
    assert playouts is None and seconds == pytest.approx(300 / 40.5)  # 81 empty points / 2
    ask(engine, "time_left b 20 0")
    assert budget(engine)[1] == pytest.approx(20 / 40.5)
    ask(engine, "time_settings 0 30 5")
    ask(engine, "time_left b 10 2")
    assert budget(engine)[1] == pytest.approx(0.8 * 10 / 2)
    ask(engine, "kgs-time_settings none")
    assert clock_settings(engine) is None
    ask(engine, "kgs-time_settings canadian 60 30 10")
    assert clock_settings(engine) == (60.0, 30.0, 10)
    ask(engine, "kgs-time_settings byoyomi 0 10 3")
    assert clock_settings(engine) == (0.0, 10.0, 1)
    assert fail(engine, "kgs-time_settings sudden") == "syntax error"
    assert fail(engine, "time_left b x 0") == "syntax error"
    fixed = make(size=9, playouts=None, seconds=0.3)
    ask(fixed, "time_settings 300 0 0")
    assert budget(fixed) == (None, 0.3)  # --seconds wins over the clock


class RecordingWarmup:
    """Stands in for ``jaxgo.gtp.warmup.Warmup``: records what a clock command asks of it."""

    def __init__(self):
        import threading

        self.calls, self.error, self.cancelled = [], None, threading.Event()

    def wait(self, phase, timeout=None):
        self.calls.append(("wait", phase))
        return True

    def compile_search(self):
        self.calls.append(("compile", self.clock_seen()))
        return 32  # the K compiled for the clock's first budget

    def compile_ownership(self):
        self.calls.append(("ownership",))

    def clock_seen(self):
        return None


def test_a_time_limit_is_answered_once_the_search_for_its_budget_is_compiled():
    engine = make(size=9, playouts=None)
    warmup = engine.session.warmup = RecordingWarmup()
    warmup.clock_seen = lambda: clock_settings(engine)  # compiled for the new clock, not the old budget
    ask(engine, "time_settings 0 2 1")
    assert warmup.calls == [("wait", "search"), ("compile", (0.0, 2.0, 1)), ("ownership",)]
    ask(engine, "kgs-time_settings none")  # no limit: nothing to wait for
    ask(engine, "time_settings 0 30 0")  # byo-yomi time for no stones: no limit either
    assert len(warmup.calls) == 3
    ask(engine, "kgs-time_settings canadian 60 30 10")
    assert warmup.calls[3:] == [("wait", "search"), ("compile", (60.0, 30.0, 10)), ("ownership",)]
    player = engine.session.player
    assert player.clock.leaves == 32 and player.limits(engine.session.game, 1).timed_leaves == 32


def test_a_failed_warm_up_does_not_fail_the_clock_command():
    engine = make(size=9, playouts=None)
    warmup = engine.session.warmup = RecordingWarmup()
    warmup.error = "RuntimeError('no device')"
    ask(engine, "time_settings 0 2 1")
    assert warmup.calls == [("wait", "search")]  # the first search compiles what it needs

    def broken():
        raise RuntimeError("compile failed")

    warmup.error, warmup.compile_search = None, broken
    ask(engine, "time_settings 0 3 1")
    assert clock_settings(engine) == (0.0, 3.0, 1)
    warmup.compile_search = lambda: None  # no local tree search: nothing more to compile
    ask(engine, "time_settings 0 4 1")
    assert ("ownership",) not in warmup.calls


@pytest.mark.parametrize("line", ["time_settings inf 0 0", "time_settings 10 nan 1", "time_settings -1 0 0",
                                  "time_settings 10 5 -2", "time_settings 10 5 1.5", "time_left w inf 0",
                                  "time_left b -3 0", "kgs-time_settings absolute inf",
                                  "kgs-time_settings canadian 60 inf 10", "kgs-time_settings none 5"])
def test_bad_clock_numbers_are_syntax_errors(line):
    engine = make(size=9, playouts=None)
    ask(engine, "time_settings 300 0 0")
    assert engine.handle(line) == "? syntax error\n\n"
    assert clock_settings(engine) == (300.0, 0.0, 0)  # the clock is unchanged


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
    assert engine.session.player.has_dead_stones(engine.session.game, WHITE)
    assert ask(engine, "genmove b") == "pass"  # Black wins as the board stands (B+1.5)
    ask(engine, "undo")
    for _ in range(3):  # cleanup: Black keeps playing while D1 is on the board
        if engine.session.game.board()[4, 3] != WHITE:
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
        assert kind in ("dboard", "gfx", "string", "param") and label
        assert ask(engine, f"known_command {command.split()[0]}") == "true"


def test_printsgf_and_options():
    engine = make()
    ask(engine, "play b c3")
    text = ask(engine, "printsgf")
    assert text.startswith("(;FF[4]") and ";B[cc]" in text
    args = build_parser().parse_args(["--strategy", "pp", "--playouts", "500", "--seconds", "2", "--leaves", "32"])
    assert (args.strategy, args.playouts, args.seconds, args.leaves) == ("pp", 500, 2.0, 32)


def config_of(engine) -> dict:
    """``jaxgo-search_config``'s ``[type] key value`` lines as a dict of strings, by SearchConfig field name
    (GoGui's dialog shows ``playout_policy`` for ``playouts``; the move budget's two fields left out)."""
    from jaxgo.gtp.play import GOGUI_NAMES

    rows = [line.split(" ", 2)[1:] for line in ask(engine, "jaxgo-search_config").split("\n")]
    return {GOGUI_NAMES.get(key, key): value for key, value in rows
            if GOGUI_NAMES.get(key, key) not in ("maxPlayouts", "maxTime")}


def test_search_options_from_the_command_line():
    defaults = engine_from_args(build_parser().parse_args(["--quiet", "--seed", "1"]))
    assert defaults.session.config == SearchConfig()  # the default engine: RAVE, heavy playouts, bias 1
    args = build_parser().parse_args(["--quiet", "--bias", "0.5", "--prior", "0", "20", "--playout-policy", "rules",
                                      "--playouts-per-leaf", "2", "--resign-threshold", "0"])
    engine = engine_from_args(args)
    expected = dataclasses.replace(SearchConfig(), bias_c2=0.5, prior_even=0.0, prior_pattern=20.0,
                                   playout_policy="rules", playouts_per_leaf=2, resign_threshold=0.0)
    assert engine.session.config == from_args(args) == expected
    shown = config_of(engine)
    assert list(shown) == list(expected.to_dict())  # every field, in declaration order
    assert (shown["bias_c2"], shown["playout_policy"], shown["prior_pattern"], shown["gammas"]) == \
        ("0.5", "rules", "20.0", "none")
    assert fail(engine, "jaxgo-search_config extra") == "syntax error"
    with pytest.raises(SystemExit):  # --prior takes two numbers
        build_parser().parse_args(["--prior", "20"])


def test_genmove_follows_the_clock(monkeypatch):
    import time

    from support import FakeClock

    engine = make(playouts=None, early_stop=False)
    ask(engine, "genmove b")  # compile with the default budget
    ask(engine, "time_settings 10 0 0")
    monkeypatch.setattr(time, "perf_counter", FakeClock(0.01))  # each reading of the clock: 0.01 s later
    results = []
    for left in (2, 20):  # 2 s left over max(20, 24 / 2) moves: 0.1 s for this move; 20 s left: 1 s
        ask(engine, f"time_left w {left} 0")
        ask(engine, "genmove w")
        results.append(engine.session.player.last_result)
        ask(engine, "undo")
    # the clock's share, not a playout count, ends each search: it runs until that share is spent, and ten times
    # the time left buys more playouts
    assert results[0].seconds >= 0.1 and results[1].seconds >= 1.0
    assert 0 < results[0].playouts < results[1].playouts


def test_no_pass_after_an_early_pass_on_an_unsettled_board():
    # A lone stone wins by Tromp-Taylor, but the game is far from over: keep playing.
    engine = make(size=5, komi=0.5, playouts=64)
    ask(engine, "play b C3")
    ask(engine, "play w pass")
    assert not engine.session.player.passing_wins(engine.session.game, BLACK)
    assert ask(engine, "genmove b") != "pass"
