"""The analysis engine over its transports: answers, load, terminate, disconnects, fuzz, shutdown.

One engine (small batches: K = 8 leaves per search, at most 256 leaves per device call) serves a TCP and a Unix
socket for the whole module, so the playout kernels compile once.  Positions are 5x5 and 9x9.
"""

import collections
import io
import json
import random
import socket
import struct
import threading
import time

import numpy as np
import pytest

from jaxgo.go.coords import gtp_to_point
from jaxgo.search.config import SearchConfig
from jaxgo.server import transports
from jaxgo.server.client import LocalConnection, ServerClient
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig, default_buckets

TIMEOUT = 240


def small_config():
    # overlap_min_leaves=64: rounds of 8+ searches run as two waves (the overlapped path is exercised).
    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=8, playouts_per_leaf=4)
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
        assert 0.0 <= m["scoreStdev"] <= size * size + 8  # the spread of the playouts' final scores
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
    # A flat sweep: 125 moves with 4 visits each (under 1% for the first); the default search's first move holds
    # 9-27% of 512 visits from run to run (with and without the score share).
    assert visits[0] >= 0.05 * sum(visits) and len(visits) <= 64
    assert max(len(info["pv"]) for info in infos) >= 3  # the search went below the root's children
    shown = result["searchConfig"]
    assert shown["playout_policy"] == "heavy" and shown["bias_c2"] == SearchConfig().bias_c2
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
    # KataGo's text: the 0-based index of the move in "moves", then the vertex (KaTrain tests "Illegal move" in it)
    assert bad.get(TIMEOUT) == {"error": "Illegal move 1: C3", "field": "moves", "id": "occupied",
                                "reason": "occupied"}
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
    assert any(m["scoreStdev"] > 1.0 for m in results[0]["moveInfos"])  # an open 9x9 game: outcomes spread
    other.close()
    deadline = time.time() + 60
    while time.time() < deadline and any(t.query.id.startswith("gone") for t in server["engine"]._active):
        time.sleep(0.2)
    assert not any(t.query.id.startswith("gone") for t in server["engine"]._active)


def read_json_lines(sock, counts, until):
    """Read JSON lines from a raw socket until ``until(objects)`` holds or the server closes; blank lines are
    keep-alive probes; anything else that is not a JSON object counts as a framing error."""
    reader = sock.makefile("rb")
    objects = []
    while not until(objects):
        line = reader.readline()
        if not line:
            break
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            counts["framing_errors"] += 1
            continue
        if not isinstance(value, dict):
            counts["framing_errors"] += 1
            continue
        objects.append(value)
    return objects


def run_load(server, clients, per_client, seed=0):
    """``clients`` raw connections each sending ``per_client`` queries (mixed sizes, every 4th malformed, plus two
    garbage lines).  Every 4th client half-closes after sending and reads to the end; every 8th (from the 7th)
    also sends a 4,194,304-visit query and vanishes (a reset) after its answers: that search must be dropped."""
    counts = collections.Counter()
    failures, finished = [], []
    lock = threading.Lock()

    def one(index):
        rng = random.Random(seed * 1000 + index)
        half_close, vanish = index % 4 == 1, index % 8 == 6
        family = socket.AF_INET if index % 2 else socket.AF_UNIX
        target = ("127.0.0.1", int(server["tcp"].rsplit(":", 1)[1])) if index % 2 else server["unix"][5:]
        local = collections.Counter()
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(TIMEOUT)
            sock.connect(target)
        except OSError as exc:
            failures.append(f"client {index} could not connect: {exc!r}")
            return
        try:
            expected, lines = {}, []
            for k in range(per_client):
                ident = f"c{index}-{k}"
                size = rng.choice([5, 9])
                if k % 4 == 3:  # malformed: an off-board move
                    lines.append(query(ident, size=size, moves=[("B", "Z1")]))
                    expected[ident] = "error"
                    continue
                first = rng.choice(["C3", "B2", "D4"])
                lines.append(query(ident, size=size, moves=[("B", first)], visits=32))
                expected[ident] = (size, first)
            if vanish:
                lines.append(query(f"vanish{index}", size=5, visits=4194304))
            payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
            sock.sendall(payload + b"{not json\n\x00\xff garbage\n")  # two more malformed lines without an id
            local["inputs"] += len(lines) + 2
            if half_close:
                sock.shutdown(socket.SHUT_WR)

            def complete(objects):
                ids = {o.get("id") for o in objects if "turnNumber" in o or "error" in o}
                return not half_close and set(expected) <= ids and sum("id" not in o for o in objects) >= 2

            objects = read_json_lines(sock, local, complete)
            seen = {}
            for response in objects:
                ident = response.get("id")
                if ident is None:
                    assert "error" in response
                    local["id_less_errors"] += 1
                    continue
                if ident.startswith("vanish"):
                    continue
                assert ident in expected and ident not in seen, f"unexpected or duplicate {ident}"
                seen[ident] = response
            local["queries_lost"] += len(set(expected) - set(seen))
            for ident, want in expected.items():
                response = seen.get(ident)
                if response is None:
                    continue
                if want == "error":
                    assert response["field"] == "moves" and "Illegal move" not in response["error"]
                else:
                    size, first = want
                    check_sane(response, size, 32, "W")
                    assert all(m["move"] != first for m in response["moveInfos"])  # occupied point
            if vanish:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)) \
                    if family == socket.AF_INET else None
            with lock:
                finished.append(index)
        except Exception as exc:  # collected and reported by the main thread
            failures.append(f"client {index}: {exc!r}")
        finally:
            sock.close()
            with lock:
                counts.update(local)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
    counts["hangs"] = sum(t.is_alive() for t in threads)
    counts["crashes"] = int(not server["engine"].running)
    deadline = time.time() + 60
    while time.time() < deadline and any(t.query.id.startswith("vanish") for t in list(server["engine"]._active)):
        time.sleep(0.1)
    counts["searches_left_by_vanished_clients"] = sum(t.query.id.startswith("vanish")
                                                      for t in list(server["engine"]._active))
    print(f"\nload {clients} clients x {per_client} queries: " + ", ".join(
        f"{k} {counts[k]}" for k in ("inputs", "crashes", "hangs", "framing_errors", "queries_lost",
                                      "searches_left_by_vanished_clients")))
    assert not failures, failures[:3]
    assert sorted(finished) == list(range(clients))
    for key in ("hangs", "crashes", "framing_errors", "queries_lost", "searches_left_by_vanished_clients"):
        assert counts[key] == 0, (key, counts)
    assert counts["id_less_errors"] == 2 * clients


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
    from jaxgo.server.connection import Client

    client = Client(out.append)
    for k in range(3):
        engine.submit(client, json.dumps(query(f"z{k}")))
    assert engine.stop(wait=True, timeout=TIMEOUT)
    client.close()
    answered = {json.loads(line)["id"] for line in out}
    assert answered == {"z0", "z1", "z2"}
    engine.submit(client, json.dumps(query("late")))  # after stop: refused politely, no hang
    assert not engine.running


def test_territory_field(server):  # jaxgo's own CRF evaluator: an import failure fails the test, never skips it
    client = ServerClient(server["tcp"])
    result = client.query(query("terr", moves=[("B", "C3")], includeTerritory=True)).results(TIMEOUT)[0]
    client.close()
    assert len(result["territory"]) == 25 and all(-1 <= v <= 1 for v in result["territory"])
    assert result["territory"][12] > 0  # the black stone's own point


# -- KataGo's query fields as KaTrain uses them ------------------------------------------------------------------
def responses_until_final(stream):
    """Every response of a one-turn query (warnings and reports included) up to its final one."""
    out = []
    while not out or not ("turnNumber" in out[-1] and not out[-1]["isDuringSearch"]):
        out.append(stream.get(TIMEOUT))
        assert "error" not in out[-1], out[-1]
    return out


def test_katrain_pondering_query_runs_until_terminated(server):
    # KaTrain's pondering: maxVisits 10,000,000 with reports every 0.25 s, stopped by terminate.
    client = ServerClient(server["tcp"])
    stream = client.query(query("ponder", size=9, visits=10_000_000, reportDuringSearchEvery=0.25,
                                overrideSettings={"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04}))
    warning = stream.get(TIMEOUT)
    assert warning["field"] == "overrideSettings" and "wideRootNoise" in warning["warning"]
    assert stream.get(TIMEOUT)["isDuringSearch"] is True
    client.send({"id": "stop-ponder", "action": "terminate", "terminateId": "ponder"})
    final = responses_until_final(stream)[-1]
    assert 0 < final["rootInfo"]["visits"] < 10_000_000
    assert client.other(TIMEOUT) == {"id": "stop-ponder", "action": "terminate", "terminateId": "ponder"}
    client.close()


def test_max_time_ends_a_search_by_itself(server):
    # KaTrain sends maxTime in overrideSettings; top level works too.
    client = ServerClient(server["unix"])
    for ident, extra in (("t1", {"overrideSettings": {"maxTime": 0.3}}), ("t2", {"maxTime": 0.3})):
        final = responses_until_final(client.query(query(ident, visits=10_000_000, **extra)))[-1]
        assert 0 < final["rootInfo"]["visits"] < 10_000_000
    client.close()


def test_moves_ownership_stdev_and_pv_visits(server):
    client = ServerClient(server["tcp"])
    stream = client.query(query("mo", moves=[("B", "C3")], initialStones=ascii_stones(ALIVE), visits=64,
                                includeOwnership=True, includeMovesOwnership=True, includeOwnershipStdev=True,
                                includePVVisits=True))
    final = responses_until_final(stream)[-1]
    client.close()
    infos = final["moveInfos"]
    for info in infos:
        assert len(info["ownership"]) == 25 and all(-1 <= v <= 1 for v in info["ownership"])
        assert info["pvVisits"][0] == info["visits"] and len(info["pvVisits"]) <= len(info["pv"])
        assert all(a >= b for a, b in zip(info["pvVisits"], info["pvVisits"][1:]))
    # Every playout went through one root move: the visit-weighted mean of the per-move ownership is the
    # position's ownership.
    total = sum(info["visits"] for info in infos)
    for point in range(25):
        mean = sum(info["visits"] * info["ownership"][point] for info in infos) / total
        assert abs(mean - final["ownership"][point]) < 2e-3
    assert all(0 <= v <= 1 for v in final["ownershipStdev"])
    assert final["ownershipStdev"][0] < 0.05 < max(final["ownershipStdev"][10:15])  # A5: Black eye; row 3 open


def test_avoid_and_allow_moves(server):
    client = ServerClient(server["unix"])
    avoided = ["C3", "B2", "D4", "C2", "B3"]
    # KaTrain's "find alternatives": the moves already known, for the player to move, untilDepth 1.
    first = responses_until_final(client.query(query("avoid", visits=64, avoidMoves=[
        {"player": "B", "moves": avoided, "untilDepth": 1}])))[-1]
    assert not {m["move"] for m in first["moveInfos"]} & set(avoided)
    # Deeper: White may not answer at the avoided points at depths 1 and 2 (Black's moves are free).
    deep = responses_until_final(client.query(query("deep", visits=128, avoidMoves=[
        {"player": "W", "moves": avoided, "untilDepth": 3}])))[-1]
    for info in deep["moveInfos"]:
        assert info["pv"][1:2] == [] or info["pv"][1] not in avoided
    # KaTrain's region of interest: allowMoves (pass stays allowed).
    region = responses_until_final(client.query(query("allow", visits=64, allowMoves=[
        {"player": "B", "moves": ["A5", "B5", "A4"], "untilDepth": 1}])))[-1]
    assert {m["move"] for m in region["moveInfos"]} <= {"A5", "B5", "A4", "pass"}
    client.close()


def test_per_turn_priorities_and_ignored_fields_warn(server):
    client = ServerClient(server["tcp"])
    stream = client.query(query("pri", moves=[("B", "C3")], analyzeTurns=[0, 1], priorities=[5, -5],
                                rootPolicyTemperature=1.5, humanSLProfile="rank_1d",
                                overrideSettings={"humanSLProfile": "rank_1d"}))
    responses = []
    while sum("turnNumber" in r for r in responses) < 2:
        responses.append(stream.get(TIMEOUT))
    client.close()
    warnings = {(r["field"], r["warning"].split(":")[0]) for r in responses if "warning" in r}
    assert ("rootPolicyTemperature", "ignored") in warnings and ("humanSLProfile", "unknown field ignored") in warnings
    assert any(field == "overrideSettings" and "humanSLProfile" in text
               for field, text in ((r["field"], r["warning"]) for r in responses if "warning" in r))
    assert sorted(r["turnNumber"] for r in responses if "turnNumber" in r) == [0, 1]


def test_a_full_tree_stops_growing_and_the_search_goes_on():
    config = small_config()
    config.max_tree_mb = 0.01  # the floor: room for the root's children and two rounds of leaves
    engine = AnalysisEngine(config).start()
    try:
        conn = LocalConnection(engine)
        stream = conn.query(query("cap", visits=2000, reportDuringSearchEvery=0.05))
        responses = responses_until_final(stream)
        conn.close()
    finally:
        engine.stop(wait=False, timeout=30)
    warnings = [r for r in responses if "warning" in r]
    assert len(warnings) == 1 and warnings[0]["field"] == "maxVisits" and "capped tree" in warnings[0]["warning"]
    nodes = int(warnings[0]["warning"].split(" at ")[1].split()[0])
    assert nodes <= (26 + 2 * 8) + 26  # the cap (A + 2K), plus root children, which are always created
    final = responses[-1]
    check_sane(final, 5, 2000, "B")  # the search ran to maxVisits in the capped tree


# -- fairness and per-query limits -----------------------------------------------------------------------------
def test_one_client_with_many_turns_does_not_starve_another(server):
    # Client A: 120 passes on 5x5 and every turn analysed; client B: one query sent afterwards.  With fair
    # scheduling B's answer comes back while A still has most of its turns to go.
    big = ServerClient(server["tcp"])
    moves = [("B" if k % 2 == 0 else "W", "pass") for k in range(120)]
    big_stream = big.query(query("many", moves=moves, analyzeTurns=list(range(121)), visits=64))
    # A terminate of nothing is acknowledged by the device thread after it took the big query in (one inbox).
    big.send({"id": "sync", "action": "terminate", "terminateId": "nothing"})
    assert big.other(TIMEOUT)["id"] == "sync"
    small = ServerClient(server["unix"])
    answer = small.query(query("small", moves=[("B", "C3")], visits=32)).results(TIMEOUT)[0]
    check_sane(answer, 5, 32, "W")
    done_before = big_stream.queue.qsize()  # the big query's turns answered before the small one's
    assert done_before < 121 // 2  # in arrival order the small query would come after 90 of them
    results = big_stream.results(TIMEOUT)
    big.close()
    small.close()
    assert len(results) == 121 and all("error" not in r for r in results)


def test_oversized_queries_get_clear_errors_at_once(server):
    # The exact inputs of the issue: 19x19, 2,000 passes, analyzeTurns 0..2000, maxVisits 8 (41 KB, 4.97 GB
    # before), and 60,000 passes (900 KB, blocked the device thread 14 s).
    client = ServerClient(server["tcp"])
    for count in (2000, 60000):
        moves = [["B" if k % 2 == 0 else "W", "pass"] for k in range(count)]
        line = {"id": f"huge{count}", "moves": moves, "rules": "chinese", "komi": 7.5, "boardXSize": 19,
                "boardYSize": 19, "maxVisits": 8}
        if count == 2000:
            line["analyzeTurns"] = list(range(count + 1))
        error = client.query(line).get(TIMEOUT)
        assert error == {"error": f"'moves' has {count} moves; at most 1500 per query", "field": "moves",
                         "id": f"huge{count}"}
    answer = client.query(query("after-huge", visits=32)).results(TIMEOUT)[0]
    check_sane(answer, 5, 32, "B")
    client.close()


def test_device_batch_buckets_split_evenly_over_the_devices():
    assert default_buckets(4096) == (64, 512, 4096)
    assert default_buckets(4096, 2) == (64, 512, 4096)
    assert default_buckets(3072, 3) == (66, 513, 3072)
    assert default_buckets(96, 3) == (96,)
    assert default_buckets(65536) == (64, 512, 4096, 8192, 16384, 32768, 65536)
    with pytest.raises(ValueError, match="not a multiple of devices 3"):
        default_buckets(4096, 3)
    with pytest.raises(ValueError, match="not a multiple of devices 2"):
        AnalysisEngine(EngineConfig(max_boards=4096, buckets=(63, 4096), devices=2))


def test_late_playouts_setting_picks_each_turns_policy_by_its_stones(server, monkeypatch):
    # ALIVE covers 14 of 25 points: with late_fill 0.5 its turn runs the rule playouts, the empty board light ones.
    from jaxgo.server import engine as server_engine

    chosen = []

    def recording(config, devices=1, stones=None):
        evaluator = server_engine_evaluator_for(config, devices, stones)
        chosen.append((int(np.count_nonzero(stones)), evaluator.policy))
        return evaluator

    server_engine_evaluator_for = server_engine.evaluator_for
    monkeypatch.setattr(server_engine, "evaluator_for", recording)
    client = ServerClient(server["tcp"])
    late = {"late_playout_policy": "rules", "late_fill": 0.5}
    crowded = client.query(query("late", initialStones=ascii_stones(ALIVE), overrideSettings=late)).results(TIMEOUT)
    empty = client.query(query("early", overrideSettings=late)).results(TIMEOUT)
    client.close()
    check_sane(crowded[0], 5, 32, "B")
    check_sane(empty[0], 5, 32, "B")
    assert chosen == [(14, "rules"), (0, "light")]


CAPTURE = """
X X X X .
X O O O X
X O O O X
X X . X X
. . . . .
"""


def test_score_utility_setting_reaches_the_turns_search(server):
    # Komi -30.5: Black wins every playout, so only the score share of the value prefers the capture at C2.
    client = ServerClient(server["tcp"])
    extra = dict(initialStones=ascii_stones(CAPTURE), komi=-30.5, initialPlayer="B")
    scored = client.query(query("score", visits=512, overrideSettings={"score_utility": 0.3}, **extra)).results(TIMEOUT)
    plain = client.query(query("plain", visits=512, overrideSettings={"score_utility": 0}, **extra)).results(TIMEOUT)
    client.close()
    assert scored[0]["rootInfo"]["visits"] >= 512 and scored[0]["rootInfo"]["scoreLead"] > 30  # komi -30.5
    assert scored[0]["moveInfos"][0]["move"] == "C2" and scored[0]["searchConfig"]["score_utility"] == 0.3
    # A won playout is worth 0.7 + 0.3 (1/2 + atan(score / 5) / pi) <= 0.9914 at the largest 5x5 score (55.5);
    # without the score share every won playout is worth 1 (the old bound, 0.99, sat inside the noise).
    assert scored[0]["rootInfo"]["winrate"] < 0.992 < plain[0]["rootInfo"]["winrate"]
