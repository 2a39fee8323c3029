"""GTP over the server: the thin front end, streamed lz-analyze / kata-analyze, fuzzed GTP input."""

import io
import random
import threading
import time

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import GtpEngine
from jaxgo.server import transports
from jaxgo.server.client import ServerClient
from jaxgo.server.engine import AnalysisEngine, EngineConfig
from jaxgo.gtp.remote import FrontendEngine
from jaxgo.gtp.loop import serve

TIMEOUT = 240


@pytest.fixture(scope="module")
def address():
    engine = AnalysisEngine(EngineConfig(leaves_per_batch=8, max_boards=256, buckets=(256,))).start()
    tcp = transports.TcpServer(engine, 0)
    transports.start_in_thread(tcp)
    yield f"tcp:127.0.0.1:{tcp.server_address[1]}"
    tcp.shutdown()
    tcp.server_close()
    engine.stop(wait=False, timeout=30)


class ScriptedInput:
    """A binary rfile whose lines arrive after given delays: [(seconds to wait, b"line\\n"), ...]."""

    def __init__(self, script):
        self.script = list(script)

    def readline(self, limit=-1):
        if not self.script:
            return b""
        delay, line = self.script.pop(0)
        time.sleep(delay)
        return line


def run_session(engine, script, timeout=TIMEOUT):
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, ScriptedInput(script), out), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "GTP session hung"
    return out.getvalue()


def frontend(address, playouts=32):
    return FrontendEngine(ServerClient(address), Rules(size=5, komi=0.5), playouts=playouts)


def test_frontend_genmove_goes_through_the_server(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"play b c3\n"), (0, b"1 genmove w\n"), (0, b"jaxgo-search_stats\n"),
                               (0, b"final_status_list dead\n"), (0, b"quit\n")])
    replies = [r.strip() for r in out.split("\n\n")]
    assert replies[0] == "="
    move = replies[1]
    assert move.startswith("=1 ") and move[3:] != "C3"
    assert move[3:] == "pass" or (move[3] in "ABCDE" and move[4] in "12345")
    assert replies[2].startswith("= playouts ")
    assert replies[3].startswith("=")


def test_kata_analyze_streams_until_the_next_command(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"play b c3\n"), (0, b"kata-analyze 10 ownership true\n"),
                               (6.0, b"name\n"), (0, b"quit\n")])
    head, rest = out.split("\n\n", 1)[1].split("\n", 1)  # after play's "=": the analyze response
    assert head == "="
    body, after = rest.split("\n\n", 1)
    lines = body.splitlines()
    assert lines and all(line.startswith("info move ") for line in lines)
    last = lines[-1]
    assert " winrate " in last and " scoreLead " in last and " pv " in last
    owner = last.split(" ownership ")[1].split()
    assert len(owner) == 25 and all(-1 <= float(v) <= 1 for v in owner)
    assert after.startswith("= jaxgo")  # the next command was answered after the stream ended


def test_lz_genmove_analyze_ends_with_the_move(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"lz-genmove_analyze b 5\n"), (0, b"list_stones black\n"), (0, b"quit\n")])
    first, second = out.split("\n\n")[:2]
    lines = first.splitlines()
    assert lines[0] == "=" and lines[-1].startswith("play ")
    for line in lines[1:-1]:
        assert line.startswith("info move ") and " winrate " in line
        int(line.split(" winrate ")[1].split()[0])  # x10000 integer, as Leela Zero writes it
    assert second == "= " + lines[-1][5:]  # the move was played for Black


def test_gogui_commands_of_the_frontend(address):
    engine = frontend(address)
    listed = engine.handle("gogui-analyze_commands")
    assert "dboard/Ownership (playouts)/jaxgo-ownership" in listed and "gfx/" in listed
    gfx = engine.handle("jaxgo-pv_gfx 32")
    assert gfx.startswith("= VAR b ")
    board = engine.handle("jaxgo-ownership 32").strip("= \n").splitlines()
    assert len(board) == 5 and all(len(row.split()) == 5 for row in board)


def random_lines(seed, count=60):
    rng = random.Random(seed)
    words = ["play", "genmove", "boardsize", "komi", "b", "w", "C3", "pass", "lz-analyze", "kata-analyze",
             "undo", "list_commands", "known_command", "#", "\t", "1", "-5", "999999999999", "ownership"]
    lines = []
    for k in range(count):
        if k % 3 == 0:
            lines.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b" ") + b"\n")
        else:
            text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 5)))
            lines.append(text.replace("genmove", "is_legal").replace("analyze", "analyse").encode() + b"\n")
    return lines


def test_fuzzed_input_to_the_gtp_engine_never_crashes():
    engine = GtpEngine(Rules(size=5), strategy="random")
    for line in random_lines(1, 200):
        response = engine.handle(line.decode("utf-8", "replace"))
        assert response is None or (response[0] in "=?" and response.endswith("\n\n"))
    assert engine.handle("name") == "= jaxgo\n\n"


def test_fuzzed_and_oversized_input_to_the_frontend(address):
    engine = frontend(address)
    script = [(0, line) for line in random_lines(2)]
    script += [(0, b"boardsize 5\n"), (0, b"play b " + b"C" * 200000 + b"\n"), (0, b"play b c3 \xff\xfe\n"),
               (0, b"kata-analyze 5\n"), (0.5, b"\x00\x01\x02\n"), (0, b"name\n"), (0, b"quit\n")]
    out = run_session(engine, script)
    assert "\n= jaxgo\n\n" in out and out.endswith("\n\n")


def test_local_engine_streams_lz_analyze_through_the_extension_module():
    # The plain GtpEngine finds lz-analyze in jaxgo.gtp.analysis (EXTENSION_MODULES) and runs it on a
    # private in-process analysis engine.
    from jaxgo.server.client import LocalConnection

    engine = GtpEngine(Rules(size=5, komi=0.5))
    assert "lz-analyze" in engine.commands() and "kata-genmove_analyze" in engine.commands()
    engine.analysis = LocalConnection(AnalysisEngine(EngineConfig(leaves_per_batch=8, max_boards=256,
                                                                  buckets=(256,))).start())
    out = run_session(engine, [(0, b"play b b2\n"), (0, b"lz-analyze w 10\n"), (5.0, b"quit\n")])
    response = out.split("\n\n")[1]
    head, *lines = response.splitlines()
    assert head == "=" and lines and all(line.startswith("info move ") for line in lines)
    assert all(" move B2 " not in line for line in lines)  # occupied point never suggested
