"""Connections that misbehave cannot hold the server or its other clients: a client that floods queries with
frequent reports and never reads its replies, too many connections, idle connections (issue 47).

One in-process engine (9x9 light playouts, at most 256 leaves per device call) serves TCP on 127.0.0.1 with
short limits, so each test ends in seconds; the waits below are bounds that end a failing test, not speed
assertions (the latencies are printed; the figures are in docs/server.md).
"""

import io
import json
import os
import socket
import threading
import time

import pytest

from jaxgo.search.config import SearchConfig
from jaxgo.server import transports
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig

WAIT = 60.0  # seconds: old code kept the other client's answer back for over 120 s


class Log(io.StringIO):
    """A log stream the engine and the transports write to from several threads."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def write(self, text):
        with self.lock:
            return super().write(text)


@pytest.fixture
def served():
    log = Log()
    search = SearchConfig(playout_policy="light", bias_c2=0.0, playouts_per_leaf=4)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=256, buckets=(256,)), log=log).start()
    servers = []

    def serve(**limits):
        tcp = transports.TcpServer(engine, 0, limits=transports.ConnectionLimits(**limits), log=log)
        transports.start_in_thread(tcp)
        servers.append(tcp)
        return ("127.0.0.1", tcp.server_address[1])

    yield serve, engine, log
    for tcp in servers:
        tcp.shutdown()
        tcp.server_close()
        assert tcp.open_connections() == 0
    assert engine.stop(wait=False, timeout=30)


def query(ident, visits=None, **extra):
    q = {"id": ident, "moves": [["B", "E5"]], "rules": "chinese", "komi": 7.5, "boardXSize": 9, "boardYSize": 9}
    if visits is not None:
        q["maxVisits"] = visits
    q.update(extra)
    return (json.dumps(q) + "\n").encode()


def final_answer(address, ident="small", visits=16) -> tuple[dict, float]:
    """Send one query on a fresh connection; (its final response, seconds it took)."""
    with socket.create_connection(address, timeout=WAIT) as sock:
        began = time.monotonic()
        sock.sendall(query(ident, visits))
        reader = sock.makefile("rb")
        for line in reader:
            if line.strip():
                response = json.loads(line)
                if "turnNumber" in response and not response.get("isDuringSearch"):
                    return response, time.monotonic() - began
    raise AssertionError("connection closed before the answer")


def test_a_client_that_never_reads_cannot_hold_back_another_clients_query(served):
    serve, engine, log = served
    address = serve(stall_seconds=3.0)
    final_answer(address, "warm-up")  # compiles the 9x9 shapes
    flood = socket.create_connection(address)
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sent = [0]

    def flood_queries():
        for i in range(300):  # KaTrain-like queries with reports every 0.01 s, ownership and policy, never read
            try:
                flood.sendall(query(f"f{i}", 500, reportDuringSearchEvery=0.01, includeOwnership=True,
                                    includePolicy=True))
            except OSError:
                return
            sent[0] += 1
            time.sleep(0.01)

    sender = threading.Thread(target=flood_queries, daemon=True)
    sender.start()
    time.sleep(3.0)  # the flood is under way
    answers = [final_answer(address, f"small-{i}") for i in range(3)]
    for response, seconds in answers:
        assert response["rootInfo"]["visits"] == 16
        print(f"16-visit query during the flood: {seconds:.2f} s")
    deadline = time.monotonic() + WAIT  # the flooder is dropped once its replies stall for stall_seconds
    while "dropped" not in log.getvalue() and time.monotonic() < deadline:
        time.sleep(0.2)
    text = log.getvalue()
    assert "is not reading its replies" in text and "its during-search reports are skipped" in text
    assert "dropped: write failed: TimeoutError('the peer read none of its replies for 3 s')" in text, text
    assert engine.reports_skipped > 0
    flood.close()
    sender.join(WAIT)


def test_connections_beyond_the_cap_get_an_error_line(served):
    serve, _, log = served
    address = serve(max_connections=2)
    held = [socket.create_connection(address) for _ in range(2)]
    time.sleep(0.5)
    with socket.create_connection(address, timeout=WAIT) as extra:
        refusal = json.loads(extra.makefile("rb").readline())
    assert "server busy: 2 connections open" in refusal["error"] and refusal["id"] is None
    assert "refused" in log.getvalue()
    for sock in held:
        sock.close()


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(served):
    serve, _, log = served
    address = serve(idle_seconds=1.0)
    with socket.create_connection(address, timeout=WAIT) as idle:
        assert idle.recv(1) == b""  # closed by the server after 1 s of silence
    assert "closed: idle for 1 s" in log.getvalue()
    response, _ = final_answer(address, "busy", visits=256)  # silent while its query runs: not idle
    assert response["rootInfo"]["visits"] == 256


# -- KataGo's hard limits and validated settings ------------------------------------------------------------
def answers(address, *queries) -> dict:
    """Send queries on one connection, half-close, read to the end: {id: [responses]}."""
    with socket.create_connection(address, timeout=WAIT) as sock:
        sock.sendall(b"".join(queries))
        sock.shutdown(socket.SHUT_WR)
        out = {}
        for line in sock.makefile("rb"):
            if line.strip():
                response = json.loads(line)
                out.setdefault(response.get("id"), []).append(response)
    return out


def test_max_visits_is_a_hard_cap(served):
    serve, engine, _ = served
    address = serve()
    got = answers(address, query("one", 1), query("three", 3),
                  query("big-leaves", 64, overrideSettings={"leaves_per_batch": 1024, "playouts_per_leaf": 256}))
    for ident, visits in (("one", 1), ("three", 3), ("big-leaves", 64)):
        final = got[ident][-1]
        assert final["rootInfo"]["visits"] == visits, (ident, final)
        assert sum(m["visits"] for m in final["moveInfos"]) <= visits
    assert engine.playouts <= 4 * 4 + 256  # the whole call's playouts: not 1024 leaves x 256 (262,144)


@pytest.mark.parametrize("setting, value", [("uct_c", -1), ("n_expand", 0), ("early_stop", "no"),
                                            ("playouts_per_leaf", 0.5), ("resign_threshold", 2),
                                            ("widen_factor", 1.0), ("widen_playouts", -1),
                                            ("prior_pattern", "lots")])
def test_nonsense_settings_are_refused_naming_the_field(served, setting, value):
    serve, _, _ = served
    address = serve()
    got = answers(address, query("bad", 16, overrideSettings={setting: value}), query("good", 16))
    error = got["bad"][-1]
    assert error["field"] == f"overrideSettings.{setting}" and error["id"] == "bad" and setting in error["error"]
    assert got["good"][-1]["rootInfo"]["visits"] == 16  # the connection goes on


def test_board_size_defaults_are_asked_for_with_auto_or_null(served):
    serve, _, _ = served
    address = serve()
    got = answers(address, query("auto", 16, overrideSettings={"prior_pattern": "auto", "widen_playouts": None}))
    assert got["auto"][-1]["rootInfo"]["visits"] == 16 and "error" not in got["auto"][-1]


def test_a_file_that_is_not_a_gamma_file_is_refused(served, tmp_path):
    serve, _, _ = served
    address = serve()
    fifo = tmp_path / "gammas.npz"
    os.mkfifo(fifo)
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    got = answers(address, query("fifo", 16, overrideSettings={"gammas": str(fifo)}),
                  query("text", 16, overrideSettings={"gammas": str(text)}), query("good", 16))
    assert "not a gamma file" in got["fifo"][-1]["error"] and "not a gamma file" in got["text"][-1]["error"]
    assert got["good"][-1]["rootInfo"]["visits"] == 16


def test_half_sent_http_requests_do_not_hold_threads(served):
    """320 half-sent HTTP requests held 343 threads: a request must now arrive within the stall timeout, and
    connections beyond the cap are refused."""
    from jaxgo.server.web import WebServer

    _, engine, log = served
    web = WebServer(engine, 0, limits=transports.ConnectionLimits(max_connections=4, stall_seconds=1.0), log=log)
    transports.start_in_thread(web)
    try:
        address = ("127.0.0.1", web.server_address[1])
        half = [socket.create_connection(address, timeout=WAIT) for _ in range(3)]
        for sock in half:
            sock.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\n")  # never finished
        for sock in half:
            assert sock.recv(1) == b""  # closed by the server after the stall timeout
            sock.close()
        deadline = time.monotonic() + WAIT
        while web.open_connections() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert web.open_connections() == 0
        with socket.create_connection(address, timeout=WAIT) as sock:  # the server still answers
            sock.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert b"200 OK" in sock.recv(65536)
    finally:
        web.shutdown()
        web.server_close()


def test_serve_refuses_nonsense_connection_limits(capsys):
    from jaxgo.server import cli

    for option in (["--max-connections", "0"], ["--idle-timeout", "-1"], ["--stall-timeout", "0"]):
        assert cli.main(option) == 2
        assert "must be positive" in capsys.readouterr().err


def test_a_front_end_connects_again_after_an_idle_close(served):
    """A GTP front end (``jaxgo gtp --server``) idle longer than --idle-timeout (a human thinking) is closed by
    the server; its next query opens a new connection instead of failing."""
    from jaxgo.server.client import ServerClient

    serve, _, log = served
    address = serve(idle_seconds=1.0)
    client = ServerClient(f"tcp:{address[0]}:{address[1]}")
    first = client.query(json.loads(query("a", 16))).results(timeout=WAIT)
    deadline = time.monotonic() + WAIT
    while not client.closed and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.closed and "closed: idle for 1 s" in log.getvalue()
    second = client.query(json.loads(query("b", 16))).results(timeout=WAIT)
    assert first[-1]["rootInfo"]["visits"] == second[-1]["rootInfo"]["visits"] == 16
    client.close()
