"""Regression tests for the GTP defects of issue 21 ("reliability under hostile input"), each with its exact
input: broken framing during analysis of a finished game, off-board vertices in attack/defend, absurd numbers
(time settings, ownership playouts, komi, non-ASCII digits), and files that are not regular files."""

from __future__ import annotations

import io
import os
import threading

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import make_gtp_engine
from jaxgo.gtp.loop import serve
from jaxgo.gtp.settings import MAX_CLOCK_SECONDS
from jaxgo.search.config import SearchConfig
from support import ScriptedInput  # noqa: E402

CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0)
TIMEOUT = 300



def session_output(engine, script) -> str:
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, ScriptedInput(script), out), daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "GTP session hung"
    return out.getvalue()


def framed_replies(text: str) -> list[str]:
    """The responses of a transcript; fails unless each is ``=``/``?`` + text + exactly one empty line."""
    assert text.endswith("\n\n") and "\n\n\n" not in text, repr(text)
    blocks = text[:-2].split("\n\n")
    assert all(block[:1] in ("=", "?") for block in blocks), blocks
    return blocks


def answer(engine, line: str) -> str:
    response = engine.handle(line)
    assert response is not None and response.endswith("\n\n") and "\n\n" not in response[:-2], repr(response)
    assert "internal error" not in response, response
    return response[:-2]


@pytest.fixture(scope="module")
def engine9():
    return make_gtp_engine(Rules(size=9), CHEAP, playouts=8)


# -- 1: framing during analysis of a finished game ------------------------------------------------------------
def test_genmove_analyze_after_two_passes_keeps_the_framing(engine9):
    # printf 'boardsize 9\nplay b pass\nplay w pass\nlz-genmove_analyze b 10\nname\n' | jaxgo gtp --playouts 8
    script = [(0, b"boardsize 9\n"), (0, b"play b pass\n"), (0, b"play w pass\n"), (0, b"lz-genmove_analyze b 10\n"),
              (0, b"name\n")]
    replies = framed_replies(session_output(engine9, script))
    assert replies[:3] == ["= ", "= ", "= "] and replies[-1] == "= jaxgo" and len(replies) == 5
    head, *lines = replies[3].split("\n")
    assert head == "=" and lines[-1].startswith("play ")
    assert all(line.startswith("info move ") for line in lines[:-1])


def test_lz_analyze_of_a_finished_game_writes_no_empty_lines(engine9):
    # lz-analyze b 10 on that position wrote 44 empty lines in 20 s (each one ended the reply for the GUI).
    script = [(0, b"boardsize 9\n"), (0, b"play b pass\n"), (0, b"play w pass\n"), (0, b"lz-analyze b 10\n"),
              (3.0, b"name\n")]
    replies = framed_replies(session_output(engine9, script))
    assert len(replies) == 5 and replies[-1] == "= jaxgo"
    head, *lines = replies[3].split("\n")
    assert head == "=" and all(line.startswith("info move ") for line in lines)


def test_kata_genmove_analyze_after_a_pass_keeps_the_framing(engine9):
    script = [(0, b"boardsize 9\n"), (0, b"play b E1\n"), (0, b"play w pass\n"), (0, b"kata-genmove_analyze w 10\n"),
              (0, b"name\n")]
    replies = framed_replies(session_output(engine9, script))
    assert len(replies) == 5 and replies[-1] == "= jaxgo"
    assert replies[3].split("\n")[0] == "=" and replies[3].split("\n")[-1].startswith("play ")


# -- 6: off-board vertices ------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", ["attack Z99", "defend A0", "attack", "defend E5 pns x"])
def test_attack_and_defend_answer_a_gtp_error_not_an_internal_error(line):
    engine = make_gtp_engine(Rules(size=9), CHEAP)
    response = answer(engine, line)
    assert response in ("? invalid coordinate", "? vertex required", "? syntax error")  # GNU Go's texts


# -- 7: numbers -----------------------------------------------------------------------------------------------
class RecordingSearch:
    """A Player search that records its budgets and answers pass at once (no JAX search)."""

    def __init__(self):
        self.config = SearchConfig(strategy="rave")
        self.budgets = []

    def search(self, game, limits):
        import numpy as np

        from jaxgo.search.result import SearchResult

        self.budgets.append((limits.playouts, limits.seconds))
        actions = game.size * game.size + 1
        visits = np.zeros(actions)
        visits[-1] = 10
        return SearchResult(actions - 1, 0.5, 10, 0.0, visits, np.where(visits > 0, 0.5, np.nan), [actions - 1])

    def ownership(self, game, playouts=256):
        import numpy as np

        return np.zeros((game.size, game.size))

    def reset(self):
        pass


def recording_engine():
    from jaxgo.search.player import Player

    search = RecordingSearch()
    return make_gtp_engine(Rules(size=9), player=Player(search=search)), search


def test_time_settings_inf_is_a_syntax_error_and_genmove_still_works():
    engine, search = recording_engine()
    assert answer(engine, "time_settings inf 0 0") == "? syntax error"
    assert answer(engine, "genmove b").startswith("= ")


def test_time_settings_1e9_gives_a_capped_move_time():
    # time_settings 1e9 0 0, then genmove: no answer in 40 s (a share of 1e9 s per move).
    engine, search = recording_engine()
    assert answer(engine, "time_settings 1e9 0 0") == "= "
    assert answer(engine, "genmove b").startswith("= ")
    assert search.budgets == [(None, MAX_CLOCK_SECONDS)]
    assert engine.session.player.seconds is None  # the cap applies per move, the clock stays in charge
    assert answer(engine, "time_left w 1e9 0") == "= " and answer(engine, "genmove w").startswith("= ")
    assert search.budgets[-1] == (None, MAX_CLOCK_SECONDS)


def test_ownership_playouts_are_bounded():
    engine, _ = recording_engine()
    assert answer(engine, "jaxgo-ownership 1000000000").startswith("? playouts must be 1..")
    assert answer(engine, "jaxgo-ownership 0").startswith("? playouts must be 1..")
    assert answer(engine, "jaxgo-ownership 16").startswith("= ")


@pytest.mark.parametrize("value", ["1e300", "-1e300", "1001", "inf", "nan", "1_0", "7.5.5", "٧"])
def test_komi_is_bounded_and_ascii(value):
    engine, _ = recording_engine()
    assert answer(engine, f"komi {value}").startswith("? ")
    assert answer(engine, "komi 6.5") == "= " and answer(engine, "final_score") == "= W+6.5"


@pytest.mark.parametrize("line", ["play w A١", "play w ٣٣", "play b Ａ1", "boardsize ١٩", "fixed_handicap ٢",
                                  "time_settings ٣٠ 0 0", "loadsgf game.sgf ٣"])
def test_non_ascii_digits_are_not_numbers(line):
    engine, _ = recording_engine()
    assert answer(engine, line).startswith("? ")
    assert answer(engine, "list_stones white") == "= " and answer(engine, "list_stones black") == "= "


# -- 8: files -------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_loadsgf_refuses_devices_at_once():
    engine, _ = recording_engine()
    assert answer(engine, "loadsgf /dev/zero") == "? cannot load file"
    assert answer(engine, "printsgf /dev/zero") == "? cannot write file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_loadsgf_and_printsgf_never_wait_on_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.sgf"
    os.mkfifo(fifo)
    engine, _ = recording_engine()
    assert answer(engine, f"loadsgf {fifo}") == "? cannot load file"
    assert answer(engine, f"printsgf {fifo}") == "? cannot write file"
    assert answer(engine, f"loadsgf {tmp_path}") == "? cannot load file"


def test_loadsgf_refuses_a_file_over_the_limit_and_reads_a_normal_one(tmp_path, monkeypatch):
    from jaxgo.gtp import core

    game = tmp_path / "game.sgf"
    game.write_text("(;GM[1]SZ[9]KM[6.5];B[ee];W[cc])")
    engine, _ = recording_engine()
    assert answer(engine, f"loadsgf {game}") == "= " and answer(engine, "list_stones b") == "= E5"
    monkeypatch.setattr(core, "MAX_SGF_BYTES", 10)
    assert answer(engine, f"loadsgf {game}") == "? cannot load file"
    out = tmp_path / "out.sgf"
    assert answer(engine, f"printsgf {out}") == "= " and "B[ee]" in out.read_text()


# -- issue 61: bounded SGF reads, the komi limit, atomic printsgf ---------------------------------------------
def test_loadsgf_refuses_a_record_over_the_node_or_move_cap_naming_it(tmp_path):
    """200,000 passes (800 KB) took the engine past 2 GB in 45 s with no answer; now refused before parsing."""
    from jaxgo.go.sgf import MAX_SGF_MOVES, MAX_SGF_NODES

    engine, _ = recording_engine()
    passes = tmp_path / "passes.sgf"
    passes.write_bytes(b"(;GM[1]SZ[9]" + b";B[];W[]" * 100_000 + b")")
    reply = answer(engine, f"loadsgf {passes}")
    assert reply.startswith("? cannot load file") and f"at most {MAX_SGF_NODES}" in reply, reply
    long_line = tmp_path / "long.sgf"
    long_line.write_bytes(b"(;GM[1]SZ[9]" + b";B[];W[]" * (MAX_SGF_MOVES // 2 + 1) + b")")
    reply = answer(engine, f"loadsgf {long_line}")
    assert reply.startswith("? cannot load file") and f"at most {MAX_SGF_MOVES}" in reply, reply
    assert answer(engine, "list_stones b") == "= "  # nothing was replayed


def test_loadsgf_refuses_a_komi_beyond_the_komi_limit(tmp_path):
    """``KM[1e308]`` bypassed the komi bound (final_score answered W+inf)."""
    engine, _ = recording_engine()
    for value in ("1e308", "-1001", "nan"):
        record = tmp_path / "komi.sgf"
        record.write_text(f"(;GM[1]SZ[9]KM[{value}];B[ee])")
        reply = answer(engine, f"loadsgf {record}")
        assert reply.startswith("? cannot load file"), reply
        assert "inf" not in answer(engine, "final_score") and answer(engine, "list_stones b") == "= "
    record.write_text("(;GM[1]SZ[9]KM[1000];B[ee])")
    assert answer(engine, f"loadsgf {record}") == "= "


def test_a_failed_printsgf_leaves_the_old_file_whole(small_disk):
    """A full disk truncated the old file before writing the new one."""
    old = small_disk / "game.sgf"
    old.write_text("(;GM[1]SZ[9];B[ee])\n")
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"x" * 512)
        except OSError:
            pass
    engine, _ = recording_engine()
    for move in ("C3", "G7", "C7", "G3", "E3", "E7"):
        answer(engine, f"play b {move}")
    assert answer(engine, f"printsgf {old}") == "? cannot write file"
    assert old.read_text() == "(;GM[1]SZ[9];B[ee])\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "game.sgf"]  # no temporary file left
    filler.unlink()
    assert answer(engine, f"printsgf {old}") == "= " and "B[cg]" in old.read_text()
