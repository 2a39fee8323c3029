"""The GTP read loop: streamed replies never hold an empty line, input from pipes without a reader thread,
GoGui's ``# interrupt``, and a clean end (exit status 0, no thread left) on quit, end of input, SIGTERM and
SIGINT, in the local engine and with ``--server``, idle and during analysis."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.analysis import AnalysisStream
from jaxgo.gtp.loop import MAX_LINE, FdLines, LineBuffer, ThreadLines, line_source, serve
from jaxgo.gtp.protocol import Dispatcher, StreamedReply
from jaxgo.gtp.session import GtpSession

REPO = Path(__file__).resolve().parents[2]
CHEAP = ["--size", "5", "--playout-policy", "light", "--bias", "0", "--playouts", "32"]
TIMEOUT = 600


# -- streamed replies -----------------------------------------------------------------------------------------
def streaming_engine(lines, interruptible=True):
    """A Dispatcher whose ``stream`` command streams ``lines`` (no JAX: a toy registry)."""
    def stream(session, args):
        session.analysis.stream = AnalysisStream(iter(lines), interruptible)
        return ""

    def name(session, args):
        return "toy"

    def quit_(session, args):
        session.quit = True
        return ""

    return Dispatcher(GtpSession(Rules(size=5)), {"stream": stream, "name": name, "quit": quit_})


def replies(text: str) -> list[str]:
    """Responses of a transcript, checking the framing: ``=``/``?`` first, one empty line after each."""
    assert text.endswith("\n\n") and "\n\n\n" not in text, repr(text)
    blocks = text[:-2].split("\n\n")
    assert all(block[:1] in ("=", "?") for block in blocks), blocks
    return blocks


def test_streamed_reply_drops_empty_lines():
    out = io.StringIO()
    reply = StreamedReply(out, "=7 ")
    reply.start()
    for text in ["info move A1", "", None, "  ", "x\n\ny", "\n", "play pass"]:
        reply.write(text)
    reply.finish()
    assert out.getvalue() == "=7\ninfo move A1\nx\ny\nplay pass\n\n"
    assert reply.lines_written == 4


def test_a_stream_of_empty_reports_cannot_end_the_reply_early():
    # The defect: lz-genmove_analyze on a finished game wrote "=", an empty line, "play pass", an empty line.
    engine = streaming_engine(["", "", "\n", "play pass"], interruptible=False)
    out = io.StringIO()
    serve(engine, io.BytesIO(b"stream\nname\n"), out)
    assert replies(out.getvalue()) == ["=\nplay pass", "= toy"]


def test_an_interruptible_stream_ends_at_the_next_line_and_keeps_it():
    ticks = iter([None] * 10_000)  # keep-alive ticks only: the stream runs until input arrives
    engine = streaming_engine(ticks)
    out = io.StringIO()
    serve(engine, io.BytesIO(b"1 stream\n2 name\n3 quit\n"), out)
    assert replies(out.getvalue()) == ["=1", "=2 toy", "=3 "]


# -- input ----------------------------------------------------------------------------------------------------
def test_line_buffer_cuts_overlong_lines_and_keeps_a_last_line_without_newline():
    buffer = LineBuffer()
    buffer.feed(b"name\n" + b"x" * (MAX_LINE + 10))
    buffer.feed(b"yyy\nversion\nlast")
    buffer.finish()
    lines = list(buffer.lines)
    assert lines[0] == b"name\n" and lines[1] == b"x" * MAX_LINE + b"\n"
    assert lines[2:] == [b"version\n", b"last"]


def test_a_pipe_is_read_without_a_reader_thread_and_interrupts_are_taken_out():
    read_fd, write_fd = os.pipe()
    try:
        source = line_source(os.fdopen(read_fd, "rb", closefd=False))
        assert isinstance(source, FdLines)
        os.write(write_fd, b"name\n# interrupt\nversion\n")
        assert source.pending() and source.take_interrupt()
        assert not source.take_interrupt()
        assert source.next_line() == "name\n" and source.next_line() == "version\n"
        assert not source.pending()
        os.close(write_fd)
        write_fd = None
        assert source.pending() and source.next_line() is None
    finally:
        os.close(read_fd)
        if write_fd is not None:
            os.close(write_fd)
    assert not any(thread.name == "gtp-reader" for thread in threading.enumerate())


def test_file_objects_without_a_descriptor_use_a_reader_thread_that_ends():
    source = line_source(io.BytesIO(b"a\n# interrupt\nb"))
    assert isinstance(source, ThreadLines)
    assert source.next_line() == "a\n"
    source.thread.join(5)
    assert source.take_interrupt() and source.next_line() == "b" and source.next_line() is None
    assert not source.thread.is_alive()


def test_serve_on_a_pipe_answers_and_leaves_no_thread():
    before = set(threading.enumerate())
    read_fd, write_fd = os.pipe()
    engine = streaming_engine([])
    out = io.StringIO()
    with os.fdopen(read_fd, "rb") as rfile:
        thread = threading.Thread(target=serve, args=(engine, rfile, out))
        thread.start()
        os.write(write_fd, b"1 name\n# interrupt\n2 quit\n")  # quit with the pipe still open, as GUIs do
        thread.join(30)
        assert not thread.is_alive()
    os.close(write_fd)
    assert replies(out.getvalue()) == ["=1 toy", "=2 "]
    assert set(threading.enumerate()) <= before


def test_the_in_process_analysis_engine_is_stopped_at_the_end():
    session = GtpSession(Rules(size=5))
    connection = session.analysis.connection()  # the private engine of a local session's live analysis
    assert connection.engine.running
    serve(Dispatcher(session, {}), io.BytesIO(b""), io.StringIO())
    assert not connection.engine.running


# -- the jaxgo gtp process ------------------------------------------------------------------------------------
def start_gtp(*args: str) -> subprocess.Popen:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    return subprocess.Popen([sys.executable, "-m", "jaxgo", "gtp", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)


def read_reply(proc: subprocess.Popen) -> str:
    lines = []
    while True:
        line = proc.stdout.readline().decode()
        assert line, "jaxgo gtp ended early"
        if line == "\n":
            return "".join(lines)
        lines.append(line)


def wait_for_info_line(proc: subprocess.Popen) -> None:
    """Read the analysis response's header and its first info line."""
    assert proc.stdout.readline() == b"=\n"
    line = proc.stdout.readline()
    assert line.startswith(b"info move "), line


def end_session(proc: subprocess.Popen, how: str) -> tuple[int, str]:
    """End the session ``how`` (quit with stdin held open, eof, sigterm, sigint); (exit status, stderr)."""
    if how == "quit":
        proc.stdin.write(b"quit\n")
        proc.stdin.flush()
    elif how == "eof":
        proc.stdin.close()
    else:
        proc.send_signal({"sigterm": signal.SIGTERM, "sigint": signal.SIGINT}[how])
    try:
        status = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read().decode()
    if not proc.stdin.closed:
        proc.stdin.close()
    return status, stderr


def assert_clean(status: int, stderr: str) -> None:
    assert status == 0, stderr
    assert "Fatal Python error" not in stderr and "terminate called" not in stderr, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("how", ["quit", "eof", "sigterm", "sigint"])
def test_the_engine_exits_0_however_it_is_ended_while_idle(how):
    # Right after start-up the warm-up thread is compiling: the hardest moment to end cleanly.
    proc = start_gtp(*CHEAP, "--quiet")
    proc.stdin.write(b"name\n")
    proc.stdin.flush()
    assert read_reply(proc) == "= jaxgo\n"
    assert_clean(*end_session(proc, how))


@pytest.mark.parametrize("how", ["quit", pytest.param("eof", marks=pytest.mark.slow), "sigterm",
                                 pytest.param("sigint", marks=pytest.mark.slow)])
def test_the_engine_exits_0_however_it_is_ended_during_analysis(how):
    proc = start_gtp(*CHEAP, "--quiet")
    proc.stdin.write(b"play b c3\nkata-analyze w 10 ownership true\n")
    proc.stdin.flush()
    assert read_reply(proc) == "= \n"
    wait_for_info_line(proc)
    assert_clean(*end_session(proc, how))


@pytest.mark.slow
def test_the_server_front_end_exits_0_on_quit_during_analysis_and_on_sigterm():
    from jaxgo.search.config import SearchConfig
    from jaxgo.server import transports
    from jaxgo.server.engine import AnalysisEngine
    from jaxgo.server.engine_config import EngineConfig

    engine = AnalysisEngine(EngineConfig(search=SearchConfig(playout_policy="light", bias_c2=0.0),
                                         max_leaves_per_search=8, max_boards=256, buckets=(256,))).start()
    tcp = transports.TcpServer(engine, 0)
    transports.start_in_thread(tcp)
    address = f"tcp:127.0.0.1:{tcp.server_address[1]}"
    try:
        for how in ("quit", "sigterm"):
            proc = start_gtp(*CHEAP, "--quiet", "--server", address)
            proc.stdin.write(b"lz-analyze b 10\n")
            proc.stdin.flush()
            wait_for_info_line(proc)
            assert_clean(*end_session(proc, how))
    finally:
        tcp.shutdown()
        tcp.server_close()
        engine.stop(wait=False, timeout=30)


def test_start_up_answers_without_loading_jax():
    # A GUI's first commands (and the engine's construction) must not import JAX: it takes seconds.
    script = ("import sys\n"
              "from jaxgo.gtp.engine import make_gtp_engine\n"
              "engine = make_gtp_engine(quick_start=True)\n"
              "for line in ['protocol_version', 'name', 'version', 'list_commands', 'boardsize 9', 'komi 6.5',\n"
              "             'clear_board', 'play b E5', 'play w E5', 'play w D5', 'undo', 'time_settings 60 5 1',\n"
              "             'kata-set_param uct_c 0.5', 'jaxgo-search_config']:\n"
              "    print(engine.handle(line).split(chr(10))[0])\n"
              "print('jax' in sys.modules)\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=120, check=True).stdout.splitlines()
    assert out[-1] == "False"
    assert out[:2] == ["= 2", "= jaxgo"] and out[3] == "= all_legal"
    assert out[4:8] == ["= "] * 4 and out[8] == "? illegal move" and out[9:13] == ["= "] * 4
    assert out[13] == "= [string] playouts_per_move none"  # GoGui's dialog: the move budget first


def test_quick_start_moves_are_replayed_on_the_real_game():
    from jaxgo.gtp.engine import make_gtp_engine

    engine = make_gtp_engine(Rules(size=5), quick_start=True)
    answers = [engine.handle(line) for line in ["play b a1", "play w b1", "play b pass", "play w a2", "play b b2",
                                                "play b a1"]]
    assert answers == ["= \n\n"] * 5 + ["? illegal move\n\n"]  # a1 is suicide after white captured there
    assert engine.handle("list_stones white") == "= A2 B1\n\n"  # now built: the moves replayed
    assert engine.handle("captures white") == "= 1\n\n"
    assert engine.handle("list_stones black") == "= B2\n\n"
    assert engine.handle("undo") == "= \n\n" and engine.handle("list_stones black") == "= \n\n"
