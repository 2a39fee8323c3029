"""The analysis engine over its transports: answers, load, terminate, disconnects, fuzz, shutdown.

One engine (small batches: K = 8 leaves per search, at most 256 leaves per device call) serves a TCP and a Unix
socket for the whole module, so the playout kernels compile once.  Positions are 5x5 and 9x9.
"""

import io
import json
import random
import socket
import threading
import time

import numpy as np
import pytest

from jaxgo.go.coords import gtp_to_point
from jaxgo.server import transports
from jaxgo.server.client import LocalConnection, ServerClient
from jaxgo.search.config import SearchConfig
from jaxgo.server.engine import AnalysisEngine, EngineConfig

TIMEOUT = 240


def small_config():
    # overlap_min_leaves=64: rounds of 8+ searches run as two waves (the overlapped path is exercised).
    search = SearchConfig(playouts="light", bias_c2=0.0, leaves_per_batch=8, playouts_per_leaf=4)
    return EngineConfig(search=search, max_boards=256, buckets=(256,), overlap_min_leaves=64)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    engine = AnalysisEngine(small_config()).start()
    tcp = transports.TcpServer(engine, 0)
    path = str(tmp_path_factory.mktemp("sock") / "serve.sock")
    unix = transports.UnixServer(engine, path)
    for srv in (tcp, unix):
        transports.start_in_thread(srv)
    yield {"engine": engine, "tcp": f"tcp:127.0.0.1:{tcp.server_address[1]}", "unix": f"unix:{path}"}
    for srv in (tcp, unix):
        srv.shutdown()
        srv.server_close()
    assert engine.stop(wait=False, timeout=30)


def query(ident, size=5, moves=(), visits=32, **extra):
    out = {"id": ident, "moves": [list(m) for m in moves], "rules": "chinese", "komi": 7.5 if size > 5 else 0.5,
           "boardXSize": size, "boardYSize": size, "maxVisits": visits}
    out.update(extra)
    return out


def check_sane(response, size, visits, to_play):
    """A final response: own moves legal-looking, visits adding up, values in range."""
    assert response["isDuringSearch"] is False
    infos = response["moveInfos"]
    assert infos and [m["order"] for m in infos] == list(range(len(infos)))
    total = sum(m["visits"] for m in infos)
    assert total == response["rootInfo"]["visits"] >= visits
    for m in infos:
        assert 0.0 <= m["winrate"] <= 1.0 and m["pv"][0] == m["move"]
        assert m["move"] == "pass" or (m["move"][0] in "ABCDEFGHJKLMNOPQRST"[:size]
                                       and 1 <= int(m["move"][1:]) <= size)
    assert response["rootInfo"]["currentPlayer"] == to_play
    assert abs(response["rootInfo"]["scoreLead"]) <= size * size + 8


ALIVE = """
. X . X .
X X X X X
. . . . .
O O O O O
. O . O .
"""


def ascii_stones(text):
    rows = text.split()
    rows = [r for r in text.strip().splitlines()]
    size = len(rows)
    out = []
    for r, row in enumerate(rows):
        for c, ch in enumerate(row.split()):
            if ch in "XO":
                out.append(["B" if ch == "X" else "W", "ABCDEFGHJ"[c] + str(size - r)])
    return out


def test_query_answers_each_turn_with_ownership(server):
    # Both groups have eyes: the top two rows end Black, the bottom two White; the middle row is open.
    client = ServerClient(server["tcp"])
    stream = client.query(query("own", moves=[("B", "C3"), ("W", "B3")], analyzeTurns=[0, 1, 2],
                                initialStones=ascii_stones(ALIVE), includeOwnership=True, includePolicy=True))
    results = stream.results(TIMEOUT)
    client.close()
    assert sorted(r["turnNumber"] for r in results) == [0, 1, 2]
    for r in results:
        check_sane(r, 5, 32, "B" if r["turnNumber"] % 2 == 0 else "W")
        assert len(r["ownership"]) == 25 and all(-1 <= v <= 1 for v in r["ownership"])
        assert len(r["policy"]) == 26
    last = [r for r in results if r["turnNumber"] == 2][0]
    assert min(last["ownership"][:10]) > 0.9 and max(last["ownership"][15:]) < -0.9
    assert last["policy"][2 * 5 + 2] == -1  # C3 is occupied: not a move
    # A5 is Black's own eye: legal for Black (to move), so it has a policy value, a small one.
    assert 0 <= last["policy"][0] < 0.05
    assert abs(sum(v for v in last["policy"] if v >= 0) - 1) < 1e-3


def test_a_default_19x19_search_at_500_visits_is_a_tree_and_reports_the_gammas_policy():
    """KaTrain's default: 500 visits on 19x19.  With the default search (heavy playouts, progressive bias) the
    visits concentrate (a flat sweep gives every one of the 361 moves one or two visits) and the policy is the
    move model's, not uniform."""
    from jaxgo.go.game import new_game
    from jaxgo.search import priors

    engine = AnalysisEngine(EngineConfig()).start()
    try:
        conn = LocalConnection(engine)
        moves = [("B", "Q16"), ("W", "D4"), ("B", "Q3"), ("W", "D16")]
        result = conn.query(query("tree", size=19, moves=moves, visits=500, includePolicy=True)).results(TIMEOUT)[-1]
        conn.close()
    finally:
        engine.stop(wait=False, timeout=30)
    infos = result["moveInfos"]
    visits = [info["visits"] for info in infos]
    assert result["rootInfo"]["visits"] >= 500
    assert visits[0] >= 0.1 * sum(visits) and len(visits) <= 64  # a flat sweep: 125 moves with 4 visits each
    assert max(len(info["pv"]) for info in infos) >= 3  # the search went below the root's children
    assert result["searchConfig"]["playouts"] == "heavy" and result["searchConfig"]["bias_c2"] == 1.0
    game = new_game(size=19)
    for colour, vertex in moves:
        game.play(1 if colour == "B" else -1, gtp_to_point(vertex, 19))
    legal = game.legal_moves(game.to_play)
    expected = np.where(legal, priors.gamma_prior(game, legal), -1.0)
    np.testing.assert_allclose(result["policy"], expected, atol=1e-5)
    legal_values = [v for v in result["policy"] if v >= 0]
    assert max(legal_values) > 10 / len(legal_values) > 100 * min(legal_values)  # far from uniform


def test_illegal_moves_and_bad_setup_get_error_objects(server):
    client = ServerClient(server["unix"])
    bad = client.query(query("occupied", moves=[("B", "C3"), ("W", "C3")]))
    assert bad.get(TIMEOUT) == {"error": "illegal move 2 (C3): occupied", "field": "moves", "id": "occupied"}
    good = client.query(query("after", moves=[("B", "C3")]))
    check_sane(good.results(TIMEOUT)[0], 5, 32, "W")
    client.close()


def test_query_version_and_terminate(server):
    client = ServerClient(server["tcp"])
    client.send({"id": "v", "action": "query_version"})
    version = client.other(TIMEOUT)
    assert version["id"] == "v" and version["action"] == "query_version" and version["version"]
    long = client.query(query("long", size=9, visits=10 ** 6, reportDuringSearchEvery=0.05))
    first = long.get(TIMEOUT)  # a report during the search: it is running
    assert first["isDuringSearch"] is True and first["id"] == "long"
    client.send({"id": "stop", "action": "terminate", "terminateId": "long"})
    while True:
        response = long.get(TIMEOUT)
        if not response["isDuringSearch"]:
            break
    assert response["rootInfo"]["visits"] < 10 ** 6  # stopped early, partial result sent
    ack = client.other(TIMEOUT)
    assert ack == {"id": "stop", "action": "terminate", "terminateId": "long"}
    client.close()


def test_disconnect_mid_query_does_not_disturb_others(server):
    gone = ServerClient(server["tcp"])
    gone.query(query("gone", size=9, visits=10 ** 6, reportDuringSearchEvery=0.05))
    gone.query(query("gone2", size=5, visits=10 ** 6))
    time.sleep(0.3)
    gone.close()
    other = ServerClient(server["unix"])
    results = other.query(query("stay", size=9, moves=[("B", "E5")], visits=64)).results(TIMEOUT)
    check_sane(results[0], 9, 64, "W")
    other.close()
    deadline = time.time() + 60
    while time.time() < deadline and any(t.query.id.startswith("gone") for t in server["engine"]._active):
        time.sleep(0.2)
    assert not any(t.query.id.startswith("gone") for t in server["engine"]._active)


def run_load(server, clients, per_client, seed=0):
    """``clients`` connections each sending ``per_client`` queries (mixed sizes, every 4th malformed)."""
    failures, finished = [], []

    def one(index):
        rng = random.Random(seed * 1000 + index)
        address = server["tcp"] if index % 2 else server["unix"]
        try:
            client = ServerClient(address)
        except OSError as exc:
            failures.append(f"client {index} could not connect: {exc!r}")
            return
        try:
            expected = {}
            for k in range(per_client):
                ident = f"c{index}-{k}"
                size = rng.choice([5, 9])
                if k % 4 == 3:  # malformed: an off-board move
                    client.send(query(ident, size=size, moves=[("B", "Z1")]))
                    expected[ident] = "error"
                    continue
                first = rng.choice(["C3", "B2", "D4"])
                client.send(query(ident, size=size, moves=[("B", first)], visits=32))
                expected[ident] = (size, first)
            raw = ("{not json\n" + "\x00\xff garbage\n").encode("latin-1")
            client.sock.sendall(raw)  # two more malformed lines without an id
            seen = {}
            # responses come back on the shared "other" queue (the queries were sent without query())
            stray = 0
            while len(seen) < len(expected) or stray < 2:
                response = client.other(TIMEOUT)
                ident = response.get("id")
                if ident is None:
                    assert "error" in response
                    stray += 1
                    continue
                assert ident in expected and ident not in seen, f"unexpected or duplicate {ident}"
                seen[ident] = response
            for ident, want in expected.items():
                response = seen[ident]
                if want == "error":
                    assert response["field"] == "moves" and "error" in response
                else:
                    size, first = want
                    check_sane(response, size, 32, "W")
                    assert all(m["move"] != first for m in response["moveInfos"])  # occupied point
            finished.append(index)
        except Exception as exc:  # collected and reported by the main thread
            failures.append(f"client {index}: {exc!r}")
        finally:
            client.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not failures, failures[:3]
    assert sorted(finished) == list(range(clients))
    assert server["engine"].running


def test_load_32_clients(server):
    run_load(server, clients=32, per_client=4)


@pytest.mark.slow
def test_load_32_clients_100_queries_each(server):
    run_load(server, clients=32, per_client=100, seed=1)


def test_fuzzed_lines_get_errors_and_the_server_keeps_serving(server):
    rng = random.Random(7)
    sock = socket.create_connection(("127.0.0.1", int(server["tcp"].rsplit(":", 1)[1])), timeout=TIMEOUT)
    lines = []
    for _ in range(40):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"")
        lines.append(data)
    lines.append(b'{"id": "cut", "moves": [["B", "C3"]], "rules": "chin')  # truncated
    lines.append(b'{"id": "big", "moves": "' + b"x" * (1 << 20) + b'"}')  # oversized
    lines.append(json.dumps({"id": [1], "moves": []}).encode())
    payload = b"\n".join(lines) + b"\n" + json.dumps(query("ok")).encode() + b"\n"
    sock.sendall(payload)
    reader = sock.makefile("rb")
    responses = []
    while True:
        response = json.loads(reader.readline())
        responses.append(response)
        if response.get("id") == "ok" and "turnNumber" in response:
            break
    sock.close()
    errors = [r for r in responses if "error" in r]
    nonblank = [ln for ln in lines if ln.strip()]
    assert len(errors) == len(nonblank)
    assert any("longer" in r["error"] for r in errors)
    check_sane(responses[-1], 5, 32, "B")
    assert server["engine"].running


def test_stdio_transport_answers_then_returns_at_eof(server):
    lines = [json.dumps(query("s1")), "garbage", json.dumps(query("s2", size=9, moves=[("B", "E5")]))]
    stdin = io.BytesIO(("\n".join(lines) + "\n").encode())
    stdout = io.StringIO()
    transports.serve_stdio(server["engine"], stdin, stdout)
    out = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert {r.get("id") for r in out if "turnNumber" in r} == {"s1", "s2"}
    assert sum("error" in r for r in out) == 1


def test_clean_shutdown_answers_queued_queries_first():
    engine = AnalysisEngine(small_config()).start()
    out = []
    from jaxgo.server.engine import Client

    client = Client(out.append)
    for k in range(3):
        engine.submit(client, json.dumps(query(f"z{k}")))
    assert engine.stop(wait=True, timeout=TIMEOUT)
    client.close()
    answered = {json.loads(line)["id"] for line in out}
    assert answered == {"z0", "z1", "z2"}
    engine.submit(client, json.dumps(query("late")))  # after stop: refused politely, no hang
    assert not engine.running


def test_territory_field(server):
    try:
        import jaxgo.crf.evaluator  # noqa: F401
    except ImportError:
        pytest.skip("CRF evaluator not available")
    client = ServerClient(server["tcp"])
    result = client.query(query("terr", moves=[("B", "C3")], includeTerritory=True)).results(TIMEOUT)[0]
    client.close()
    assert len(result["territory"]) == 25 and all(-1 <= v <= 1 for v in result["territory"])
    assert result["territory"][12] > 0  # the black stone's own point
