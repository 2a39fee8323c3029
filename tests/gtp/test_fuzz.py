"""Property-based GTP fuzzing (hypothesis) against the reference board (``jaxgo.go.reference``).

Each example is a script of command lines sent through the real read loop (``jaxgo.gtp.loop.serve``): valid
board commands (play, undo, boardsize, clear_board, genmove, handicap, rules), queries whose answers the
reference predicts (list_stones, captures, is_legal), known commands with random arguments, and random bytes
(control characters, invalid UTF-8, comments, ids).  Properties:
    * every reply is ``=``/``?`` + text + exactly one empty line, one reply per command line, in order;
    * nothing crashes (no ``internal error`` reply, no exception) and nothing hangs;
    * a play is accepted exactly when the reference board says it is legal, and after the script the
      engine's stones and captures are the reference's (ko rule ``simple``, as the reference plays).
Engines alternate between the normal start and ``quick_start`` (the first moves on ``jaxgo.gtp.early``).
``JAXGO_FUZZ_EXAMPLES=N`` runs N examples (default 40); the counts are printed at the end (``pytest -s``).
"""

from __future__ import annotations

import io
import json
import os
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxgo.go.config import Rules
from jaxgo.go.coords import BLACK, GTP_COLUMNS, WHITE, gtp_to_point
from jaxgo.go.reference import ReferenceBoard
from jaxgo.gtp.engine import command_registry, make_gtp_engine
from jaxgo.gtp.loop import serve
from jaxgo.gtp.protocol import parse_command, preprocess
from jaxgo.search.config import SearchConfig

EXAMPLES = int(os.environ.get("JAXGO_FUZZ_EXAMPLES", "40"))
HANG_SECONDS = 120
SIZES = (5, 7, 9)
COMMANDS = sorted(command_registry())
# Commands whose effects the model does not follow: only sent with arguments that make them fail.
HEAVY = {"lz-analyze", "kata-analyze", "analyze", "lz-genmove_analyze", "kata-genmove_analyze", "genmove_analyze",
         "jaxgo-ownership", "final_status_list", "kgs-genmove_cleanup", "jaxgo-territory", "attack", "defend",
         "jaxgo-pv_gfx", "reg_genmove", "printsgf", "loadsgf", "kata-set_param", "jaxgo-search_config",
         "time_settings", "kgs-time_settings", "time_left", "final_score", "quit", "play", "undo", "boardsize",
         "clear_board", "genmove", "fixed_handicap", "place_free_handicap", "set_free_handicap", "go_param_rules",
         "komi"}
QUERIES = [name for name in COMMANDS if name not in HEAVY]
STATS = {"examples": 0, "inputs": 0, "crashes": 0, "hangs": 0, "framing_errors": 0, "board_mismatches": 0}

colours = st.sampled_from(["b", "w", "B", "W", "black", "white", "Black"])
near = st.builds(lambda c, r: f"{c}{r}", st.sampled_from("ABCDEabcde"), st.integers(1, 5))  # on every board
corner = st.sampled_from(["A1", "A2", "B1", "B2", "A3", "C1", "B3", "C2"])  # captures, ko and suicide come fast
vertices = st.one_of(corner, corner, near, near, st.sampled_from(["pass", "PASS"]),
                     st.builds(lambda c, r: f"{c}{r}", st.sampled_from(GTP_COLUMNS[:9] + GTP_COLUMNS[:9].lower()),
                               st.integers(0, 10)))
junk_token = st.one_of(
    st.text(min_size=1, max_size=8).map(lambda t: t.replace("\n", " ").strip() or "x"),
    st.sampled_from(["-1", "0", "1e300", "nan", "inf", "999999999999999999999", "A١", "٣", "Z99", "A0", "#",
                     "\t", "\x00", "1_0", "true", "none", "ownership"]))
ident = st.one_of(st.just(""), st.integers(0, 10 ** 6).map(lambda n: f"{n} "))


def line(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass") + b"\n"


play_command = st.builds(lambda i, c, v: line(f"{i}play {c} {v}"), ident, colours, vertices)
board_command = st.one_of(
    play_command,
    st.builds(lambda i, c: line(f"{i}genmove {c}"), ident, colours),
    st.builds(lambda i: line(f"{i}undo"), ident),
    st.builds(lambda i, n: line(f"{i}boardsize {n}"), ident, st.sampled_from(SIZES + (0, 1, 20, -3))),
    st.builds(lambda i: line(f"{i}clear_board"), ident),
    st.builds(lambda i, n: line(f"{i}fixed_handicap {n}"), ident, st.integers(1, 10)),
    st.builds(lambda i, v: line(f"{i}go_param_rules allow_suicide {v}"), ident, st.sampled_from(["0", "1", "2"])),
    st.builds(lambda i, k: line(f"{i}komi {k}"), ident, st.sampled_from(["6.5", "0", "-7", "1e300", "x"])),
)
query_command = st.one_of(
    st.builds(lambda i, c: line(f"{i}list_stones {c}"), ident, colours),
    st.builds(lambda i, c: line(f"{i}captures {c}"), ident, colours),
    st.builds(lambda i, c, v: line(f"{i}is_legal {c} {v}"), ident, colours, vertices),
)
random_args = st.builds(lambda i, name, args: line(f"{i}{name} {' '.join(args)}"), ident,
                        st.sampled_from(QUERIES), st.lists(junk_token, max_size=4))
# Five "%%" right after the name make each of these fail (a "#" among the junk after them cuts only junk);
# undo, clear_board and final_score take no arguments and ignore extra ones, so they are not sent this way.
failing_heavy = st.builds(lambda i, name, args: line(f"{i}{name} %% %% %% %% %% {' '.join(args)}"), ident,
                          st.sampled_from(sorted(HEAVY - {"quit", "undo", "clear_board", "final_score"})),
                          st.lists(junk_token, max_size=2))
random_bytes = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ") + b"\n")
scripts = st.lists(st.one_of(st.lists(play_command, min_size=1, max_size=12), board_command.map(lambda x: [x]),
                             query_command.map(lambda x: [x]), random_args.map(lambda x: [x]),
                             failing_heavy.map(lambda x: [x]), random_bytes.map(lambda x: [x])),
                   min_size=1, max_size=12).map(lambda parts: [x for part in parts for x in part][:40])


# -- the model ------------------------------------------------------------------------------------------------
class Model:
    """What the reference board says the engine must answer and hold."""

    def __init__(self):
        self.size, self.suicide = 5, False
        self.board = ReferenceBoard(self.size)
        self.undo_stack: list[ReferenceBoard] = []

    def colour(self, word: str) -> int | None:
        return {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}.get(word.lower())

    def point(self, word: str) -> int | None:
        try:
            return gtp_to_point(word, self.size) if word.isascii() else None
        except ValueError:
            return None

    def with_player(self, colour: int) -> ReferenceBoard:
        """The position with ``colour`` to move (out of turn: the ko restriction is lifted, as in Game)."""
        board = self.board.copy()
        if colour != board.to_play:
            board.to_play, board.ko_point = colour, -1
        return board

    def check(self, name: str, args: list[str], reply: str) -> None:
        """Check one reply against the model and follow its effect."""
        ok = reply.startswith("=")
        text = reply.split(" ", 1)[1] if " " in reply else ""
        handler = getattr(self, "on_" + name.replace("-", "_"), None)
        if handler is not None:
            handler(args, ok, text)

    def new_board(self, size: int) -> None:
        self.size = size
        self.board = ReferenceBoard(size, suicide=self.suicide)
        self.undo_stack = []

    def on_boardsize(self, args, ok, text):
        valid = len(args) == 1 and args[0].isascii() and args[0].lstrip("-").isdigit() and 2 <= int(args[0]) <= 19
        assert ok == valid, (args, text)
        if ok:
            self.new_board(int(args[0]))

    def on_clear_board(self, args, ok, text):
        assert ok
        self.new_board(self.size)

    def on_play(self, args, ok, text):
        colour = self.colour(args[0]) if len(args) == 2 else None
        move = self.point(args[1]) if colour is not None else None
        if move is None:
            assert not ok and text == "syntax error", (args, text)
            return
        board = self.with_player(colour)
        legal = board.is_legal(move)
        assert ok == legal, (args, text, repr(board))
        if legal:
            self.undo_stack.append(self.board)
            board.play(move)
            self.board = board

    def on_genmove(self, args, ok, text):
        colour = self.colour(args[0]) if len(args) == 1 else None
        if colour is None:
            assert not ok
            return
        assert ok, text
        self.on_play([args[0], text], self.point(text) is not None, "")

    def on_undo(self, args, ok, text):
        assert ok == bool(self.undo_stack), text
        if ok:
            self.board = self.undo_stack.pop()

    def on_fixed_handicap(self, args, ok, text):
        if not ok:
            return
        assert not self.undo_stack and not self.board.stones.any()
        stones = self.board.stones.copy()
        for word in text.split():
            stones[self.point(word)] = BLACK
        self.board = ReferenceBoard.from_stones(stones, to_play=WHITE, suicide=self.suicide)
        self.undo_stack = []

    def on_go_param_rules(self, args, ok, text):
        assert ok == (args in ([], ["allow_suicide", "0"], ["allow_suicide", "1"])), (args, text)
        if ok and args:
            self.suicide = args[1] == "1"
            self.board.suicide = self.suicide
            for board in self.undo_stack:
                board.suicide = self.suicide

    def on_list_stones(self, args, ok, text):
        colour = self.colour(args[0]) if len(args) == 1 else None
        if colour is not None:
            expected = {self.point(word) for word in text.split()}
            assert ok and expected == set(np.flatnonzero(self.board.stones == colour).tolist()), (text, self.board)

    def on_captures(self, args, ok, text):
        colour = self.colour(args[0]) if len(args) == 1 else None
        if colour is not None:
            assert ok and int(text) == self.board.captures[colour], (text, self.board.captures)

    def on_is_legal(self, args, ok, text):
        colour = self.colour(args[0]) if len(args) == 2 else None
        move = self.point(args[1]) if colour is not None else None
        if move is not None:
            assert ok and text == ("1" if self.with_player(colour).is_legal(move) else "0"), (args, text)


def commands_of(lines: list[bytes]) -> list[tuple[str, list[str]]]:
    """(name, args) of every line the engine answers, as its loop reads them."""
    out = []
    for raw in lines:
        text = preprocess(raw.decode("utf-8", "replace"))
        if text:
            _, name, args = parse_command(text)
            out.append((name or "", args))
    return out


def run_script(lines: list[bytes], quick_start: bool) -> tuple[str, object]:
    engine = make_gtp_engine(Rules(size=5, komi=7.5, ko_rule="simple"), SearchConfig(strategy="random"), seed=1,
                             quick_start=quick_start)
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, io.BytesIO(b"".join(lines)), out), daemon=True)
    thread.start()
    thread.join(HANG_SECONDS)
    if thread.is_alive():
        STATS["hangs"] += 1
        pytest.fail(f"the engine hung on {lines!r}")
    return out.getvalue(), engine


def split_replies(text: str, lines) -> list[str]:
    if not (text == "" or (text.endswith("\n\n") and "\n\n\n" not in text)):
        STATS["framing_errors"] += 1
        pytest.fail(f"broken framing: {text!r} for {lines!r}")
    replies = text[:-2].split("\n\n") if text else []
    if not all(reply[:1] in ("=", "?") for reply in replies):
        STATS["framing_errors"] += 1
        pytest.fail(f"reply without =/?: {replies!r}")
    return replies


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    print("\ngtp fuzz: " + json.dumps(STATS))


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(script=scripts, quick_start=st.booleans())
def test_random_command_lines_never_crash_nor_break_framing_and_follow_the_reference(script, quick_start):
    STATS["examples"] += 1
    STATS["inputs"] += len(script)
    text, engine = run_script(script, quick_start)
    commands = commands_of(script)
    replies = split_replies(text, script)
    if len(replies) != len(commands):
        STATS["framing_errors"] += 1
        pytest.fail(f"{len(commands)} commands, {len(replies)} replies: {replies!r}")
    if any("internal error" in reply for reply in replies):
        STATS["crashes"] += 1
        pytest.fail(f"internal error: {replies!r}")
    model = Model()
    try:
        for (name, args), reply in zip(commands, replies):
            model.check(name, args, reply)
        board = engine.session.game
        assert np.array_equal(board.board().reshape(-1), model.board.stones), (board.board(), model.board)
        assert [board.captures(c) for c in (BLACK, WHITE)] == [model.board.captures[BLACK],
                                                                model.board.captures[WHITE]]
    except AssertionError:
        STATS["board_mismatches"] += 1
        raise


def test_known_hostile_lines_keep_the_framing():
    from jaxgo.gtp.core import gtp_version

    lines = [b"\xff\xfe\n", b"1 \x00name\n", b"   \n", b"# only a comment\n", b"2\n", b"name # trailing comment\n",
             b"play b " + b"C" * 100_000 + b"\n", b"\tversion\t\n", b"3 play w A\xd9\xa1\n", b"4 komi 1e300\n",
             b"5 boardsize 99999999999999999999999\n", b"kata-set_param playouts_per_leaf 1000000000\n",
             b"kata-set_param gammas /dev/zero\n", b"quit\n", b"name\n"]
    text, _ = run_script(lines, quick_start=True)
    assert split_replies(text, lines) == [
        "? unknown command", "=1 jaxgo", "?2 syntax error", "= jaxgo", "? syntax error", f"= {gtp_version()}",
        "?3 syntax error", "?4 komi out of range (at most 1000 points)", "?5 unacceptable size",
        "? playouts_per_leaf: at most 256", "? gammas: /dev/zero is not a gamma file", "= "]
