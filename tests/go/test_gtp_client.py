"""GtpProcess against a scripted stand-in engine: replies, failures and the position set-up."""

import pytest

from jaxgo.go.gtp_client import GtpError, GtpFailure, GtpProcess
from support import fake_gtp_engine


def test_set_position_sends_the_board_komi_and_moves_in_order(tmp_path):
    log = tmp_path / "commands.log"
    engine = fake_gtp_engine(tmp_path / "engine", log=log)
    with GtpProcess(engine, timeout=30) as process:
        process.set_position(9, 7.5, [("B", "E5"), ("W", "pass"), ("black", "C3")])
        assert process.send("name") == ""
    assert log.read_text().splitlines() == ["boardsize 9", "clear_board", "komi 7.5", "play B E5", "play W pass",
                                            "play black C3", "name", "quit"]


def test_a_refused_move_raises_the_engines_message_and_the_engine_goes_on(tmp_path):
    engine = fake_gtp_engine(tmp_path / "engine", replies={"play": "? illegal move", "name": "stand-in"})
    with GtpProcess(engine, timeout=30) as process:
        with pytest.raises(GtpFailure, match="illegal move"):
            process.set_position(9, 7.5, [("B", "E5")])
        assert process.send("name") == "stand-in"
        assert process.try_send("play B E5") is None


def test_a_crashed_engine_is_a_gtp_error(tmp_path):
    engine = fake_gtp_engine(tmp_path / "engine")  # mode "pass"; "crash" exits on genmove
    with GtpProcess([engine, "crash"], timeout=30) as process:
        with pytest.raises(GtpError, match="exited"):
            process.send("genmove b")


def test_a_program_that_cannot_run_is_named_in_the_error(tmp_path):
    missing = str(tmp_path / "no-such-engine")
    with GtpProcess(missing, timeout=30, cpus=[0]) as process:  # taskset starts, then cannot run the program
        with pytest.raises(GtpError, match="status 127: cannot run .*no-such-engine"):
            process.send("boardsize 9")
