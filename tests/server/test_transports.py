"""The socket transports under hostile clients: half-closes, vanishing peers, fuzzed JSON, clean shutdown.

One engine (5x5 positions, K = 8 leaves, at most 256 leaves per device call) serves a TCP and a Unix socket
for the module.  The property-based fuzzer (hypothesis) sends generated request lines on fresh connections,
half-closes them and reads to the end: every line must be framed JSON, every request answered, the server
alive.  ``-m slow`` runs a longer soak and prints the counts recorded in benchmarks/RESULTS.md.
"""

import collections
import json
import socket
import struct
import threading
import time

import pytest

from jaxgo.search.config import SearchConfig
from jaxgo.server import positions, protocol, transports
from jaxgo.server.connection import Client
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TIMEOUT = 240


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=8, playouts_per_leaf=4)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=256, buckets=(256,))).start()
    tcp = transports.TcpServer(engine, 0)
    path = str(tmp_path_factory.mktemp("sock") / "serve.sock")
    unix = transports.UnixServer(engine, path)
    for srv in (tcp, unix):
        transports.start_in_thread(srv)
    yield {"engine": engine, "tcp": ("127.0.0.1", tcp.server_address[1]), "unix": path, "servers": (tcp, unix)}
    for srv in (tcp, unix):
        srv.shutdown()
        srv.server_close()
        assert srv.open_connections() == 0  # every connection thread joined
    assert engine.stop(wait=False, timeout=30)


def connect(server, unix=False) -> socket.socket:
    if unix:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(server["unix"])
    else:
        sock = socket.create_connection(server["tcp"])
    sock.settimeout(TIMEOUT)
    return sock


def read_to_end(sock) -> tuple[list, int, int]:
    """(JSON objects, empty keep-alive lines, framing errors) read until the server closes the connection."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    objects, blanks, framing = [], 0, 0
    for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
        if not line:
            blanks += 1
            continue
        try:
            value = json.loads(line)
        except ValueError:
            framing += 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        else:
            framing += 1
    framing += 0 if not data or data.endswith(b"\n") else 1  # a cut last line
    return objects, blanks, framing


def query(ident, moves=(), visits=32, **extra):
    out = {"id": ident, "moves": [list(m) for m in moves], "rules": "chinese", "komi": 0.5, "boardXSize": 5,
           "boardYSize": 5, "maxVisits": visits}
    out.update(extra)
    return out


def wait_until_gone(engine, prefix, seconds=60.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline and any(t.query.id.startswith(prefix) for t in list(engine._active)):
        time.sleep(0.05)
    return not any(t.query.id.startswith(prefix) for t in list(engine._active))


# -- regressions ---------------------------------------------------------------------------------------------
def test_half_closed_connections_get_every_acknowledgement(server):
    # The input: a client sends one action and half-closes at once; 7 of 60 acknowledgements came back.
    acks = 0
    for k in range(60):
        action = ("clear_cache", "terminate", "terminate_all")[k % 3]
        request = {"id": f"ack{k}", "action": action}
        if action == "terminate":
            request["terminateId"] = "none"
        sock = connect(server, unix=k % 2 == 1)
        sock.sendall((json.dumps(request) + "\n").encode())
        sock.shutdown(socket.SHUT_WR)
        objects, _, framing = read_to_end(sock)
        sock.close()
        assert framing == 0
        acks += sum(o.get("id") == f"ack{k}" and o.get("action") == action for o in objects)
    assert acks == 60


def test_a_half_closed_query_is_answered_in_full(server):
    sock = connect(server)
    lines = [query("h1", visits=64), query("h2", moves=[("B", "C3")], analyzeTurns=[0, 1])]
    sock.sendall("".join(json.dumps(line) + "\n" for line in lines).encode())
    sock.shutdown(socket.SHUT_WR)
    objects, _, framing = read_to_end(sock)
    sock.close()
    finals = sorted((o["id"], o["turnNumber"]) for o in objects if "turnNumber" in o)
    assert framing == 0 and finals == [("h1", 0), ("h2", 0), ("h2", 1)]


@pytest.mark.parametrize("unix", [False, True])
def test_a_client_that_disconnects_has_its_search_cancelled_at_once(server, unix):
    # The input: "maxVisits": 4194304 and a disconnect; the search ran on for over 150 s, until its
    # next write.  Now the keep-alive probe finds the peer gone and the search is dropped.
    engine = server["engine"]
    sock = connect(server, unix)
    ident = f"gone-{'unix' if unix else 'tcp'}"
    sock.sendall((json.dumps(query(ident, visits=4194304)) + "\n").encode())
    deadline = time.time() + TIMEOUT
    while not any(t.query.id == ident and t.started for t in list(engine._active)):
        assert time.time() < deadline
        time.sleep(0.05)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)) if not unix else None
    sock.close()
    assert wait_until_gone(engine, ident)
    assert engine.running


def test_stream_transport_flushes_answers_before_returning():
    # The stdin transport: an acknowledgement and a query's answer are written before serve_stdio returns.
    import io

    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=8, playouts_per_leaf=4)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=256, buckets=(256,))).start()
    try:
        for _ in range(5):
            stdout = io.StringIO()
            transports.serve_stdio(engine, io.BytesIO(b'{"id":"cc","action":"clear_cache"}\n'), stdout)
            assert json.loads(stdout.getvalue()) == {"id": "cc", "action": "clear_cache"}
    finally:
        assert engine.stop(wait=False, timeout=30)


def test_writer_threads_end_with_their_connections(server):
    before = {t.name for t in threading.enumerate() if t.name.startswith("writer-")}
    for k in range(5):
        sock = connect(server, unix=k % 2 == 0)
        sock.sendall(b'{"id":"v","action":"query_version"}\n')
        sock.shutdown(socket.SHUT_WR)
        read_to_end(sock)
        sock.close()
    time.sleep(0.5)
    after = {t.name for t in threading.enumerate() if t.name.startswith("writer-")}
    assert after <= before
    out = []
    client = Client(out.append)
    client.send({"id": "x"})
    client.close()
    assert out == ['{"id":"x"}'] and not client._thread.is_alive()


# -- property-based fuzzing --------------------------------------------------------------------------------
JSON_LEAVES = st.none() | st.booleans() | st.integers(-10, 10 ** 7) | st.floats(allow_nan=False) | st.text(max_size=6)
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
VERTICES = st.sampled_from(["A1", "C3", "E5", "B2", "D4", "pass", "PASS", "Z9", "A6", "", "tt"]) | JSON_LEAVES
COLOURS = st.sampled_from(["B", "W", "b", "white", "X"]) | JSON_LEAVES
MOVES = st.lists(st.tuples(COLOURS, VERTICES).map(list), max_size=6) | JSON_VALUES
# Board sizes: 5 (compiled for the module) or invalid ones -- a valid new size would compile new kernels.
SIZES = st.sampled_from([5, 5, 5, 0, 1, 20, 25, -5, "5", 5.0, None, True])
RESTRICTIONS = st.lists(st.fixed_dictionaries(
    {"player": COLOURS, "moves": st.lists(VERTICES, max_size=4) | JSON_VALUES,
     "untilDepth": st.integers(-1, 4) | JSON_LEAVES}), max_size=2) | JSON_VALUES
QUERIES = st.fixed_dictionaries(
    {"moves": MOVES, "rules": st.sampled_from(["chinese", "tromp-taylor", "japanese", "new zealand", "martian"])
     | st.fixed_dictionaries({"ko": st.sampled_from(["SIMPLE", "POSITIONAL", "x"]), "suicide": JSON_LEAVES}),
     "boardXSize": SIZES, "boardYSize": SIZES},
    optional={"komi": JSON_LEAVES, "analyzeTurns": st.lists(st.integers(-1, 7), max_size=4) | JSON_VALUES,
              "maxVisits": st.integers(-1, 48) | JSON_LEAVES, "maxTime": st.floats(0, 0.2) | JSON_LEAVES,
              "includeOwnership": JSON_LEAVES, "includeMovesOwnership": JSON_LEAVES,
              "includePolicy": JSON_LEAVES, "includePVVisits": JSON_LEAVES, "initialStones": MOVES,
              "initialPlayer": COLOURS, "priority": JSON_LEAVES, "avoidMoves": RESTRICTIONS,
              "allowMoves": RESTRICTIONS, "reportDuringSearchEvery": st.floats(0.001, 0.05) | JSON_LEAVES,
              "overrideSettings": st.dictionaries(
                  st.sampled_from(["reportAnalysisWinratesAs", "maxTime", "wideRootNoise", "humanSLProfile", "x"]),
                  JSON_LEAVES | st.sampled_from(["BLACK", "WHITE", "SIDETOMOVE"]), max_size=3) | JSON_VALUES,
              "analysisPVLen": JSON_LEAVES, "whiteHandicapBonus": JSON_LEAVES, "unknownField": JSON_VALUES})

@st.composite
def searches(draw):
    """Mostly valid 5x5 queries (the fields KaTrain sends, small budgets) -- these run real searches."""
    points = draw(st.lists(st.sampled_from(["A1", "B2", "C3", "D4", "E5", "A5", "E1", "C1", "B4", "pass"]),
                           max_size=6))
    moves = [["B" if k % 2 == 0 else "W", p] for k, p in enumerate(points)]
    out = {"moves": moves, "rules": draw(st.sampled_from(["chinese", "tromp-taylor", "japanese", "new zealand"])),
           "komi": draw(st.sampled_from([0.5, 7.5, -3])), "boardXSize": 5, "boardYSize": 5,
           "maxVisits": draw(st.integers(1, 64)),
           "analyzeTurns": draw(st.lists(st.integers(0, len(moves)), min_size=1, max_size=3)),
           "includeOwnership": draw(st.booleans()), "includeMovesOwnership": draw(st.booleans()),
           "includePolicy": draw(st.booleans()), "includePVVisits": draw(st.booleans()),
           "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04,
                                "maxTime": draw(st.sampled_from([0.05, 0.3, 8.0]))}}
    if draw(st.booleans()):
        out["avoidMoves"] = [{"player": draw(st.sampled_from(["B", "W"])), "untilDepth": draw(st.integers(1, 3)),
                              "moves": draw(st.lists(st.sampled_from(["A2", "B3", "C4", "D5", "pass"]), max_size=4))}]
    if draw(st.booleans()):
        out["reportDuringSearchEvery"] = draw(st.sampled_from([0.01, 0.25]))
    if draw(st.booleans()):  # one field replaced by any JSON value
        out[draw(st.sampled_from(sorted(out)))] = draw(JSON_VALUES)
    return out


ACTIONS = st.fixed_dictionaries(
    {"action": st.sampled_from(["query_version", "clear_cache", "terminate", "terminate_all", "explode"])
     | JSON_LEAVES},
    optional={"terminateId": st.sampled_from(["x0", "x1"]) | JSON_LEAVES,
              "turnNumbers": st.lists(st.integers(-1, 3), max_size=3) | JSON_VALUES})
GARBAGE = st.binary(max_size=80).map(lambda b: b.replace(b"\n", b"")) | st.just(b'{"id": "cut", "moves": [["B"')
LINES = st.lists(st.one_of(searches(), QUERIES, ACTIONS, GARBAGE), min_size=1, max_size=3)


def expected_answers(objects_sent: list) -> tuple[dict, int]:
    """What the server must answer, from this process's own parse of each line: {id: number of final responses
    (or 'error')} for lines with an id, and the number of id-less error objects."""
    expected, anonymous = {}, 0
    for item in objects_sent:
        if isinstance(item, bytes):
            try:
                obj = protocol.decode_line(item)
            except protocol.RequestError:
                anonymous += bool(item.strip())
                continue
        else:
            obj = item
        try:
            request = protocol.parse_request(obj)
        except protocol.RequestError as exc:
            if exc.ident is None:
                anonymous += 1
            else:
                expected[str(exc.ident)] = "error"
            continue
        if isinstance(request, protocol.Query):
            try:
                positions.replay(request)
            except protocol.RequestError:
                expected[request.id] = "error"
                continue
            expected[request.id] = len(request.analyze_turns)
        else:
            expected[str(request.id)] = "ack"
    return expected, anonymous


def send_and_check(server, lines: list, counts: collections.Counter, unix: bool) -> None:
    """One fuzz example: a fresh connection gets ``lines``, half-closes, and reads everything the server says."""
    sent = []
    for k, item in enumerate(lines):
        if isinstance(item, dict):
            item = dict(item, id=f"x{k}")
            sent.append(item)
        else:
            sent.append(item)
    payload = b"".join((json.dumps(i).encode() if isinstance(i, dict) else i) + b"\n" for i in sent)
    counts["inputs"] += len(sent)
    sock = connect(server, unix)
    try:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        objects, _, framing = read_to_end(sock)
    except OSError:  # socket.timeout included: the server did not finish answering
        counts["hangs"] += 1
        return
    finally:
        sock.close()
    counts["framing_errors"] += framing
    expected, anonymous = expected_answers(sent)
    finals = collections.Counter(str(o["id"]) for o in objects if "turnNumber" in o and not o["isDuringSearch"])
    errors = {str(o["id"]) for o in objects if "error" in o and "id" in o}
    acks = {str(o["id"]) for o in objects if "action" in o}
    counts["searches"] += sum(isinstance(want, int) for want in expected.values())
    for ident, want in expected.items():
        answered = {"error": ident in errors, "ack": ident in acks}.get(want, finals[ident] == want or ident in errors)
        counts["queries_lost"] += not answered
    counts["anonymous_errors_missing"] += max(0, anonymous - sum("error" in o and "id" not in o for o in objects))
    counts["crashes"] += not server["engine"].running


def run_fuzz(server, examples: int, seed: int | None) -> collections.Counter:
    counts = collections.Counter()
    calls = collections.Counter()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(lines=LINES)
    def fuzz(lines):
        calls["n"] += 1
        send_and_check(server, lines, counts, unix=calls["n"] % 2 == 0)

    if seed is not None:
        hypothesis.seed(seed)(fuzz)()
    else:
        fuzz()
    return counts


def assert_clean(counts: collections.Counter, label: str) -> None:
    print(f"\n{label}: " + ", ".join(f"{k} {counts[k]}" for k in
                                    ("inputs", "searches", "crashes", "hangs", "framing_errors", "queries_lost",
                                     "anonymous_errors_missing")))
    assert counts["inputs"] > 0
    for key in ("crashes", "hangs", "framing_errors", "queries_lost", "anonymous_errors_missing"):
        assert counts[key] == 0, (key, counts)


def test_fuzzed_json_requests_are_all_answered(server):
    counts = run_fuzz(server, examples=40, seed=None)
    assert_clean(counts, "fuzz")
    assert wait_until_gone(server["engine"], "x")


@pytest.mark.slow
def test_fuzz_soak(server):
    counts = run_fuzz(server, examples=2000, seed=20261124)
    assert_clean(counts, "fuzz soak")
