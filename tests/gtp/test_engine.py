"""The GTP v2 engine: framing, error messages, every command, and `python -m jaxgo gtp` end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point  # noqa: E402
from jaxgo.gtp.cli import build_parser, main  # noqa: E402
from jaxgo.gtp.core import gtp_version  # noqa: E402
from jaxgo.gtp.engine import make_gtp_engine  # noqa: E402
from jaxgo.gtp.protocol import Dispatcher  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402

DATA = Path(__file__).parents[1] / "fixtures"
REPO = Path(__file__).resolve().parents[2]

REQUIRED = [
    "protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize", "clear_board",
    "komi", "play", "undo", "showboard", "list_stones", "is_legal", "all_legal", "captures", "final_score",
    "loadsgf", "genmove", "go_param_rules",
]


# Protocol and rules tests need no strong search: light playouts, no progressive bias, small budgets.
CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0)
CHEAP_OPTIONS = ["--playout-policy", "light", "--bias", "0", "--playouts", "200"]


def make(size=5, komi=0.5, ko_rule="positional", suicide=False, seed=0):
    return make_gtp_engine(Rules(size=size, komi=komi, ko_rule=ko_rule, suicide=suicide), CHEAP, seed=seed,
                       playouts=128)


def ask(engine: Dispatcher, line: str) -> str:
    """The result text of one command that must succeed (without '= ' and the final blank line)."""
    response = engine.handle(line)
    assert response is not None and response.startswith("=") and response.endswith("\n\n"), response
    return response[2:-2] if response.startswith("= ") else response.split(" ", 1)[1][:-2]


def fail(engine: Dispatcher, line: str) -> str:
    """The error message of one command that must fail."""
    response = engine.handle(line)
    assert response is not None and response.startswith("?") and response.endswith("\n\n"), response
    return response.split(" ", 1)[1][:-2]


@pytest.fixture
def engine():
    return make()


# -- framing ----------------------------------------------------------------------------------------------
def test_success_response_without_id(engine):
    assert engine.handle("name") == "= jaxgo\n\n"


def test_id_echoed_on_success_and_failure(engine):
    assert engine.handle("12 name") == "=12 jaxgo\n\n"
    assert engine.handle("13 frobnicate") == "?13 unknown command\n\n"
    assert engine.handle("0 protocol_version") == "=0 2\n\n"


def test_empty_result_is_equals_space(engine):
    assert engine.handle("clear_board") == "= \n\n"
    assert engine.handle("5 clear_board") == "=5 \n\n"


def test_unknown_command(engine):
    assert engine.handle("frobnicate a b") == "? unknown command\n\n"
    assert engine.handle("NAME") == "? unknown command\n\n"  # command names are case sensitive
    assert engine.handle("__init__") == "? unknown command\n\n"


@pytest.mark.parametrize("line", ["", "   ", "\t", "# a comment", "   # indented comment", "\r", "\x01\x02"])
def test_ignored_lines(engine, line):
    assert engine.handle(line) is None


def test_comments_tabs_and_control_characters(engine):
    assert engine.handle("name # trailing comment") == "= jaxgo\n\n"
    assert engine.handle("7\tplay\tb\tc3\r") == "=7 \n\n"
    assert engine.handle("na\x01me\x7f") == "= jaxgo\n\n"
    assert engine.handle("  list_stones   black  ") == "= C3\n\n"


def test_every_response_ends_with_one_blank_line_and_has_none_inside(engine):
    engine.handle("play b c3")
    for line in ["showboard", "list_commands", "go_param_rules", "name", "bogus", "play b c3"]:
        response = engine.handle(line)
        assert response.endswith("\n\n") and not response.endswith("\n\n\n")
        assert "\n\n" not in response[:-2], line


def test_id_without_command_is_syntax_error(engine):
    assert engine.handle("42") == "?42 syntax error\n\n"


def test_quit_answers_then_stops(engine):
    out = engine.run_script("1 name\n2 quit\n3 name\n")
    assert out == "=1 jaxgo\n\n=2 \n\n"
    assert engine.quit


def test_run_script_skips_blank_and_comment_lines(engine):
    out = engine.run_script("# header\n\nname\n\n  \nversion # v\n")
    assert out == f"= jaxgo\n\n= {gtp_version()}\n\n"


# -- administrative commands ----------------------------------------------------------------------------
def test_protocol_name_version(engine):
    assert ask(engine, "protocol_version") == "2"
    assert ask(engine, "name") == "jaxgo"
    version = ask(engine, "version")
    assert version == gtp_version() and re.fullmatch(r"\d+\.\d+", version)


def test_known_command_and_list_commands(engine):
    listed = ask(engine, "list_commands").split("\n")
    for name in REQUIRED:
        assert name in listed
        assert ask(engine, f"known_command {name}") == "true"
    assert ask(engine, "known_command frobnicate") == "false"
    assert ask(engine, "known_command __init__") == "false"
    assert fail(engine, "known_command") == "syntax error"


# -- setup commands -------------------------------------------------------------------------------------
def test_boardsize(engine):
    ask(engine, "play b c3")
    assert ask(engine, "boardsize 7") == ""
    assert engine.session.game.size == 7 and not engine.session.game.board().any()  # a fresh empty board
    assert fail(engine, "boardsize 1") == "unacceptable size"
    assert fail(engine, "boardsize 26") == "unacceptable size"
    assert fail(engine, "boardsize seven") == "syntax error"
    assert fail(engine, "boardsize") == "syntax error"
    assert engine.session.game.size == 7


def test_clear_board_resets_stones_captures_history(engine):
    for move in ["b b1", "w a1", "b a2"]:  # B A2 captures A1
        ask(engine, f"play {move}")
    assert ask(engine, "captures b") == "1"
    assert ask(engine, "clear_board") == ""
    assert ask(engine, "list_stones b") == "" and ask(engine, "captures b") == "0"
    assert fail(engine, "undo") == "cannot undo"


def test_komi(engine):
    assert ask(engine, "komi 6.5") == ""
    assert engine.session.game.rules.komi == 6.5
    assert ask(engine, "final_score") == "W+6.5"
    assert ask(engine, "komi -3") == "" and ask(engine, "final_score") == "B+3.0"
    assert fail(engine, "komi six") == "syntax error"
    assert fail(engine, "komi") == "syntax error"
    assert fail(engine, "komi nan") == "syntax error"


def test_go_param_rules(engine):
    assert ask(engine, "go_param_rules") == "allow_suicide 0\nko_rule pos_superko"
    ask(engine, "go_param_rules ko_rule superko")
    assert engine.session.game.rules.ko_rule == "situational"
    ask(engine, "go_param_rules ko_rule simple")
    assert engine.session.game.rules.ko_rule == "simple"
    ask(engine, "go_param_rules ko_rule pos_superko")
    assert engine.session.game.rules.ko_rule == "positional"
    ask(engine, "go_param_rules allow_suicide 1")
    assert engine.session.game.rules.suicide
    assert fail(engine, "go_param_rules ko_rule sometimes").startswith("invalid ko_rule")
    assert fail(engine, "go_param_rules colour blue").startswith("unknown parameter")
    assert fail(engine, "go_param_rules ko_rule") == "syntax error"


def test_rule_change_keeps_position(engine):
    ask(engine, "play b c3")
    ask(engine, "go_param_rules ko_rule superko")
    ask(engine, "komi 2")
    assert ask(engine, "list_stones black") == "C3"


# -- play / undo ----------------------------------------------------------------------------------------
def test_play_and_illegal_moves(engine):
    assert ask(engine, "play black C3") == ""
    assert ask(engine, "play W d4") == ""
    assert fail(engine, "play b c3") == "illegal move"  # occupied
    assert fail(engine, "play w C3") == "illegal move"
    assert ask(engine, "play b pass") == ""
    assert ask(engine, "play b PASS") == ""  # out of turn is allowed
    assert fail(engine, "play red c3") == "syntax error"
    assert fail(engine, "play b z9") == "syntax error"
    assert fail(engine, "play b a6") == "syntax error"  # off a 5x5 board
    assert fail(engine, "play b i3") == "syntax error"  # GTP has no column I
    assert fail(engine, "play b") == "syntax error"
    assert ask(engine, "name") == "jaxgo"  # still serving
    assert ask(engine, "list_stones b") == "C3" and ask(engine, "list_stones w") == "D4"


def test_play_suicide_and_ko(engine):
    # White ring around A1 corner: Black A1 is suicide.
    for move in ["w a2", "w b1"]:
        ask(engine, f"play {move}")
    assert fail(engine, "play b a1") == "illegal move"
    # A ko on the top edge: W takes, B may not retake at once.
    engine = make(ko_rule="simple")
    for move in ["b b5", "w c5", "b a4", "w b4", "b c3", "w a5"]:
        ask(engine, f"play {move}")
    assert ask(engine, "captures w") == "1"
    assert fail(engine, "play b b5") == "illegal move"
    ask(engine, "play b e1")
    ask(engine, "play w e2")
    assert ask(engine, "play b b5") == ""  # retaking after a ko threat exchange is fine
    assert ask(engine, "captures b") == "1"


def test_multi_stone_suicide_option():
    position = ["w a3", "w b2", "w c1", "b a1", "b b1"]  # black A1+B1 one liberty at A2
    engine = make(suicide=False)
    for move in position:
        ask(engine, f"play {move}")
    assert fail(engine, "play b a2") == "illegal move"
    engine = make(suicide=True, ko_rule="positional")
    for move in position:
        ask(engine, f"play {move}")
    # The suicide would recreate the position before B A1, so positional superko still forbids it.
    assert ask(engine, "is_legal b a2") == "0"
    ask(engine, "go_param_rules ko_rule simple")
    assert ask(engine, "is_legal b a2") == "1"
    assert ask(engine, "play b a2") == ""
    assert ask(engine, "list_stones b") == ""  # all three removed
    assert ask(engine, "captures w") == "3"


def test_undo(engine):
    ask(engine, "play b c3")
    ask(engine, "play w d4")
    assert ask(engine, "undo") == ""
    assert ask(engine, "list_stones w") == "" and ask(engine, "list_stones b") == "C3"
    assert engine.session.game.to_play == WHITE
    ask(engine, "undo")
    assert fail(engine, "undo") == "cannot undo"
    assert fail(engine, "9 undo") == "cannot undo"


def test_undo_restores_captures(engine):
    for move in ["b b1", "w a1", "b a2"]:
        ask(engine, f"play {move}")
    ask(engine, "undo")
    assert ask(engine, "captures b") == "0"
    assert ask(engine, "list_stones w") == "A1"


# -- queries --------------------------------------------------------------------------------------------
def test_list_stones_order_and_format(engine):
    for move in ["b e1", "b a5", "b c3", "w a1", "w e5"]:
        ask(engine, f"play {move}")
    # Like GNU Go: top row first, left to right, separated by single spaces.
    assert ask(engine, "list_stones black") == "A5 C3 E1"
    assert ask(engine, "list_stones w") == "E5 A1"
    assert ask(engine, "list_stones WHITE") == "E5 A1"
    assert fail(engine, "list_stones purple") == "invalid color"
    assert fail(engine, "list_stones") == "syntax error"


def test_is_legal(engine):
    ask(engine, "play b c3")
    assert ask(engine, "is_legal w c3") == "0"
    assert ask(engine, "is_legal w d3") == "1"
    assert ask(engine, "is_legal b pass") == "1"
    ask(engine, "play w a2")
    ask(engine, "play w b1")
    assert ask(engine, "is_legal b a1") == "0"  # suicide
    assert ask(engine, "is_legal w a1") == "1"
    assert fail(engine, "is_legal x a1") == "invalid color"
    assert fail(engine, "is_legal b k9") == "invalid coordinate"
    assert fail(engine, "is_legal b") == "syntax error"


def test_all_legal(engine):
    ask(engine, "play w a2")
    ask(engine, "play w b1")
    ask(engine, "play b c3")
    legal_black = ask(engine, "all_legal b").split()
    assert "A1" not in legal_black and "C3" not in legal_black and "A2" not in legal_black
    assert len(legal_black) == 25 - 3 - 1
    assert "pass" not in legal_black
    assert ask(engine, "all_legal w").split().count("A1") == 1
    assert fail(engine, "all_legal q") == "invalid color"


def test_captures(engine):
    for move in ["b b1", "w a1", "b a2", "w e5", "b e4", "w d5", "b d4", "w c5", "b c4", "w b5", "b b4", "w a5",
                 "b a4"]:
        ask(engine, f"play {move}")
    assert ask(engine, "captures black") == str(1 + 5)
    assert ask(engine, "captures white") == "0"
    assert fail(engine, "captures") == "syntax error"
    assert fail(engine, "captures green") == "invalid color"


def test_final_score():
    engine = make(komi=0.5)
    assert ask(engine, "final_score") == "W+0.5"  # empty board: nobody's area
    ask(engine, "play b c3")
    assert ask(engine, "final_score") == "B+24.5"  # every point reaches only black
    ask(engine, "play w d4")
    assert ask(engine, "final_score") == "W+0.5"  # one stone each, the rest neutral
    ask(engine, "komi 0")
    assert ask(engine, "final_score") == "0"


def test_showboard(engine):
    ask(engine, "play b c3")
    ask(engine, "play w a1")
    response = engine.handle("showboard")
    assert response.startswith("= \n") and "\n\n" not in response[:-2]
    lines = response[:-2].split("\n")[1:]
    assert lines[0].split() == list("ABCDE")
    rows = {line.split()[0]: line for line in lines[1:6]}
    assert lines[5].startswith(" 1 (O)")
    assert "X" in rows["3"] and "O" in rows["1"] and set(rows["5"].split()[1:-1]) == {"."}
    assert "(O)" in rows["1"]  # last move marked
    assert lines[0].index("A") == lines[1].index(".")  # columns line up


def test_genmove_random_legal_and_seeded():
    a, b = make(seed=123), make(seed=123)
    moves_a = [ask(a, f"genmove {'b' if i % 2 == 0 else 'w'}") for i in range(8)]
    moves_b = [ask(b, f"genmove {'black' if i % 2 == 0 else 'white'}") for i in range(8)]
    assert moves_a == moves_b
    assert len(a.session.game.moves) == 8
    for (colour, move), text in zip(a.session.game.moves, moves_a):
        assert gtp_to_point(text, 5) == move
    assert fail(a, "genmove") == "syntax error"
    assert fail(a, "genmove blue") == "syntax error"


def test_genmove_passes_without_legal_moves(engine):
    # White fills the board except three single-point eyes: every Black move is suicide.
    eyes = {gtp_to_point(v, 5) for v in ["A1", "C3", "E5"]}
    engine.session.game.setup_stones(WHITE, [p for p in range(25) if p not in eyes])
    assert ask(engine, "all_legal b") == ""
    assert ask(engine, "genmove b") == "pass"
    assert engine.session.game.moves[-1] == (BLACK, 25)


# -- loadsgf --------------------------------------------------------------------------------------------
def test_loadsgf_whole_game_and_move_number(engine):
    path = DATA / "jaxgo_capture_ko.sgf"
    assert ask(engine, f"loadsgf {path}") == ""
    assert engine.session.game.size == 5 and engine.session.game.rules.komi == 0.5
    assert ask(engine, "captures w") == "1" and ask(engine, "captures b") == "1"
    assert ask(engine, f"loadsgf {path} 7") == ""
    assert engine.session.game.to_play == BLACK and len(engine.session.game.moves) == 6
    assert ask(engine, "is_legal b b5") == "0"  # the ko
    assert ask(engine, "list_stones w") == "A5 C5 B4"
    assert ask(engine, f"loadsgf {path} 1") == ""
    assert ask(engine, "list_stones b") == "" and fail(engine, "undo") == "cannot undo"


def test_loadsgf_sets_size_komi_and_undo_continues(engine):
    ask(engine, f"loadsgf {DATA / 'jaxgo_handicap.sgf'} 3")
    assert engine.session.game.size == 9 and engine.session.game.rules.komi == 0.5
    assert ask(engine, "list_stones b") == "E7 G7 C3"  # top row first
    assert engine.session.game.to_play == WHITE
    assert ask(engine, "undo") == ""  # B E7
    assert ask(engine, "list_stones b") == "G7 C3"
    assert ask(engine, "undo") == ""  # W E5
    assert fail(engine, "undo") == "cannot undo"  # the handicap stones are setup, not moves
    assert ask(engine, "list_stones b") == "G7 C3"


def test_loadsgf_move_given_as_vertex(engine):
    # GNU Go also accepts a vertex: play until the first move there.
    ask(engine, f"loadsgf {DATA / 'jaxgo_capture_ko.sgf'} a5")
    assert len(engine.session.game.moves) == 5 and engine.session.game.to_play == WHITE


def test_loadsgf_errors(engine):
    assert fail(engine, f"loadsgf {DATA / 'no_such_file.sgf'}") == "cannot load file"
    assert fail(engine, f"loadsgf {DATA / 'jaxgo_broken.sgf'}") == "cannot load file"
    assert fail(engine, f"loadsgf {DATA / 'jaxgo_illegal.sgf'}") == "cannot load file"
    assert fail(engine, f"loadsgf {DATA / 'jaxgo_capture_ko.sgf'} 0") == "syntax error"
    assert fail(engine, "loadsgf") == "syntax error"
    assert ask(engine, "name") == "jaxgo"
    assert engine.session.game.size == 5  # the failed loads left the game alone


# -- command line ---------------------------------------------------------------------------------------
def test_options_parse():
    args = build_parser().parse_args(["--size", "9", "--komi", "6.5", "--rules", "situational", "--suicide",
                                      "--seed", "4"])
    assert (args.size, args.komi, args.rules, args.suicide, args.seed) == (9, 6.5, "situational", True, 4)
    assert main(["--size", "40"]) == 2


def _run_gtp(args: list[str], script: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-m", "jaxgo", "gtp", *args], input=script, capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)


def test_end_to_end_subprocess():
    script = ("1 protocol_version\n# comment\n\n2 boardsize 9\n3 komi 6.5\n4 play b e5\n5 play w e5\n"
              "6 genmove w\n7 list_stones b\n8 go_param_rules ko_rule superko\n9 nonsense\n10 quit\n11 name\n")
    proc = _run_gtp(["--size", "9", "--seed", "7", "--rules", "simple", *CHEAP_OPTIONS], script)
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.split("\n\n")
    assert blocks[-1] == ""
    blocks = blocks[:-1]
    assert blocks[:5] == ["=1 2", "=2 ", "=3 ", "=4 ", "?5 illegal move"]
    assert re.fullmatch(r"=6 [A-HJ][1-9]", blocks[5]) and blocks[5] != "=6 E5"
    assert blocks[6:] == ["=7 E5", "=8 ", "?9 unknown command", "=10 "]
    # Same seed, same generated move: the CLI's own engine, built from the same arguments in this process (no
    # second engine process to start), answers the same session alike.
    again = _serve_cli_engine(["--size", "9", "--seed", "7", "--rules", "simple", *CHEAP_OPTIONS], script)
    assert again == proc.stdout


def _serve_cli_engine(args: list[str], script: str) -> str:
    """What ``jaxgo gtp ARGS`` answers to ``script``, from the engine its CLI builds (``engine_from_args``) served
    in this process."""
    import io

    from jaxgo.gtp.cli import engine_from_args
    from jaxgo.gtp.loop import serve

    engine = engine_from_args(build_parser().parse_args(args + ["--quiet"]))
    out = io.StringIO()
    serve(engine, io.BytesIO(script.encode()), out)
    return out.getvalue()


def test_end_to_end_via_cli_on_eof():
    from jaxgo.cli import SUBCOMMANDS

    assert SUBCOMMANDS["gtp"][0] == "jaxgo.gtp.cli"
    proc = _run_gtp(["--size", "5", "--quiet"], "name\nplay b c3\nplay b c3\n")
    assert proc.returncode == 0
    assert proc.stdout == "= jaxgo\n\n= \n\n? illegal move\n\n"
    assert proc.stderr == ""


def test_end_to_end_survives_bad_bytes():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "jaxgo", "gtp", "--size", "5", "--quiet"],
                          input=b"1 name\r\n2 na\xffme\n3 version\n", capture_output=True, env=env, cwd=REPO,
                          timeout=300)
    assert proc.returncode == 0
    assert proc.stdout == f"=1 jaxgo\n\n?2 unknown command\n\n=3 {gtp_version()}\n\n".encode()
